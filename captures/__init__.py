"""Bundled sample captures (data files) and their generators."""
