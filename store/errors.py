"""Errors raised by the store (it may not import ``workbench``, so it has its own)."""


class StoreError(Exception):
    """A store that cannot be opened or used; the message is fit for the user."""


class SchemaError(StoreError):
    """A store whose schema this version of wb cannot read."""


class RunNotFound(StoreError):
    """A run reference (id or label) that matches no run, or several."""
