"""roofguard's service layer: CLI, history store, rendering, GitHub, HTTP API."""

__version__ = "0.1.0"
