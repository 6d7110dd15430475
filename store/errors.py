"""Errors raised by the store (it may not import ``workbench``, so it has its own)."""


class StoreError(Exception):
    """A store that cannot be opened or used; the message is fit for the user."""


class StoreRefusal(StoreError):
    """A request the store refuses for what was asked, not for a fault of its own (the
    CLI's usage error, exit 2): an unknown run, a write to a read-only or in-memory
    store, a malformed name."""


class SchemaError(StoreError):
    """A store whose schema this version of wb cannot read."""


class RunNotFound(StoreRefusal):
    """A run reference (id or label) that matches no run, or several."""


class DuplicateCapture(StoreError):
    """A file whose digest another process stored first (the unique index said so)."""

    def __init__(self, sha256: str, path: object) -> None:
        super().__init__(f"{path}: already imported (by a concurrent import); nothing added")
        self.sha256 = sha256


class ReadOnlyStore(StoreRefusal):
    """A write to a store opened (or only openable) for reading."""


class EphemeralStore(StoreRefusal):
    """A write to an in-memory store: it would vanish when wb exits, so it is refused."""


class StoreDamaged(StoreError):
    """A store whose file or tables cannot be read (a corrupt page, a missing table, a bad blob)."""


class StoreFull(StoreError):
    """A write that found no space on the store's disk (rolled back: nothing lost)."""
