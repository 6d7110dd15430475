"""Shared parsing helpers for input formats (JSON streaming, timestamps, text formats)."""
