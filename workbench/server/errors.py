"""The API's errors: a status and one line, as ``{"error": {"status", "message"}}``.

The line is the one ``wb`` would print after ``wb: error:`` (an upload's bad input names
the uploaded file and the place, as ``wb import`` does); it never carries a token, a
digest, a store URL's password or a server-side path.
"""

from __future__ import annotations

from store.errors import ReadOnlyStore, RunNotFound, StoreError
from store.tokens import TokenError
from workbench.errors import EXIT_REFUSED, BadInput, NotFound, UsageError, WbError
from workbench.limits import LimitExceeded


class ApiError(Exception):
    """An answer other than success: ``status`` and a message fit for the caller."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def error_body(status: int, message: str) -> dict[str, object]:
    return {"error": {"status": status, "message": message}}


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of an error wb knows (None: an internal error, answered 500)."""
    if isinstance(exc, ApiError):
        return exc.status
    if isinstance(exc, (RunNotFound, NotFound)):
        return 404
    if isinstance(exc, LimitExceeded):
        return 413
    if isinstance(exc, (BadInput, UsageError, TokenError)):
        return 422
    if isinstance(exc, ReadOnlyStore) or (isinstance(exc, WbError) and exc.exit_code == EXIT_REFUSED):
        return 409
    if isinstance(exc, WbError):
        return 422 if exc.exit_code == 2 else 500
    if isinstance(exc, StoreError):
        return 422 if type(exc).__name__ == "DeclarationRefused" else 500
    return None


def message_of(exc: BaseException) -> str:
    if isinstance(exc, ApiError):
        return exc.message
    if isinstance(exc, WbError):
        return exc.message
    return str(exc)
