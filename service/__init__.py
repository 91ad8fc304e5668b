"""roofguard's service layer: CLI, history store, rendering, GitHub, HTTP API."""

__version__ = "0.2.0"
