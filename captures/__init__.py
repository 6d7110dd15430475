"""Bundled sample captures (data files) and their generators."""

# Said wherever the demo is shown (headless output, the TUI's title): its values are made up.
SYNTHETIC_NOTICE = "synthetic demonstration, illustrative values"
