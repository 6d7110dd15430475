"""The API's errors: a status and what ``wb`` would print, as
``{"error": {"status", "message", "kind", "exit", "file", "where"}}``.

The message is the line ``wb`` prints after ``wb: error:`` (``usecases.failures.describe``: the
same reading of an exception as the command line's), so a command through ``--server`` fails
with the line and exit code it has on the store; an upload's bad input names the uploaded file
and the place, as ``wb import`` does. It never carries a token, a digest, the store's URL or
credentials, or a path of the server's: a failure of the store itself is "the server's store
failed" (its detail goes to the server's log), and the :class:`Scrubber` takes the store's URL
and paths and the spool folders out of every other line.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from store.errors import ReadOnlyStore
from workbench.errors import EXIT_FAILURE, EXIT_REFUSED, EXIT_USAGE
from workbench.limits import LimitExceeded
from workbench.usecases.failures import Failure, describe

if TYPE_CHECKING:
    from store.api import Store
    from workbench.server.config import ServerConfig

# A scheme is short (RFC 3986 sets no bound; 32 keeps the search linear on a long run of letters and dashes).
_URL = re.compile(r"\b[a-z][a-z0-9+.-]{0,31}://[^\s'\"]+", re.IGNORECASE)


class ApiError(Exception):
    """An answer other than success: ``status`` and a message fit for the caller."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def error_body(status: int, message: str, failure: Failure | None = None) -> dict[str, object]:
    described = failure.to_json() if failure is not None else {}
    described.pop("message", None)
    return {"error": {"status": status, "message": message, **described}}


class Scrubber:
    """Takes what is the server's own out of a line: the store's URL (with any user, password,
    host) and path, the spool and temporary folders. ``with_file`` also names a spooled file as
    the client named it."""

    def __init__(self, store: Store, config: ServerConfig, extra: tuple[tuple[str, str], ...] = ()) -> None:
        self.store, self.config, self.extra = store, config, extra
        pairs = [*extra, (store.url, "the server's store"), (store.display_url, "the server's store")]
        if store.path is not None:
            pairs += [(str(store.path), "the server's store"), (f"{store.path.parent}/", "")]
        for folder in {config.spool_dir, tempfile.gettempdir()} - {None}:
            pairs.append((f"{folder}/", ""))
        self.pairs = [(old, new) for old, new in pairs if old]

    def with_file(self, path: str, given: str) -> "Scrubber":
        return Scrubber(self.store, self.config, ((path, given), *self.extra))

    def __call__(self, message: str) -> str:
        for old, new in self.pairs:
            message = message.replace(old, new)
        return _URL.sub("(a URL)", message)


def status_of(exc: BaseException, failure: Failure) -> int:
    """The HTTP status of a failure wb describes."""
    if isinstance(exc, LimitExceeded):
        return 413
    if failure.kind == "not_found":
        return 404
    if isinstance(exc, ReadOnlyStore) or failure.exit_code == EXIT_REFUSED:
        return 409
    if failure.exit_code == EXIT_USAGE:
        return 422
    return 500


@dataclass
class ErrorAnswer(Exception):
    """A failure as the API answers it; ``logged``: what only the server's log may hold."""

    status: int
    failure: Failure
    headers: dict[str, str] = field(default_factory=dict)
    logged: str | None = None

    def body(self) -> dict[str, object]:
        return error_body(self.status, self.failure.message, self.failure)


def failure_answer(exc: BaseException, scrub: Scrubber | None = None) -> ErrorAnswer | None:
    """The answer to an error wb knows (None: an internal error, answered 500 and logged)."""
    if isinstance(exc, ErrorAnswer):
        return exc
    if isinstance(exc, ApiError):
        kind = "not_found" if exc.status == 404 else "refused" if exc.status == 409 else "usage"
        code = EXIT_REFUSED if exc.status == 409 else EXIT_USAGE if exc.status < 500 else EXIT_FAILURE
        return ErrorAnswer(exc.status, Failure(kind, exc.message, code), dict(exc.headers))
    failure = describe(exc)
    if failure is None:
        return None
    if failure.kind == "store" and failure.exit_code == EXIT_FAILURE:  # the store failed, not the request
        logged = str(exc)
        failure = Failure("store", f"the server's store failed ({type(exc).__name__}); see the server's log", 1)
        return ErrorAnswer(500, failure, logged=logged)
    if scrub is not None:
        failure = Failure(
            failure.kind,
            scrub(failure.message),
            failure.exit_code,
            scrub(failure.file) if failure.file else None,
            failure.where,
            failure.details,
        )
    return ErrorAnswer(status_of(exc, failure), failure)
