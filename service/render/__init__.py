"""Rendering: markdown and HTML from templates, charts, text plots."""
