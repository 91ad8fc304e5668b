"""The demo: an LLM decode step on an H100 over 30 nights, and a pull request that breaks it."""
