"""Rendering: tables (tabulate), versioned JSON, HTML timeline, Markdown."""
