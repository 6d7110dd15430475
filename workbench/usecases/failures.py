"""What a failure says to the user, wherever it happened: one line, its kind and wb's exit code.

``describe`` is the one reading of an exception for every face: ``wb`` prints it on stderr (and,
with ``--json``, as the error document), the server sends it as the error answer, and the HTTP
transport raises it again as a :class:`ServedError` that describes itself the same way, so a
command through ``--server`` fails with the line and the exit code it has on the store. Light on
purpose (the standard library and ``workbench.errors``): ``wb`` loads it before any command, and
``wb evidence verify`` runs where ``store`` cannot be imported (its errors are found through
``sys.modules``: if ``store.errors`` was never loaded, no store error can have been raised).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from workbench.errors import EXIT_FAILURE, EXIT_REFUSED, EXIT_USAGE, BadInput, NotFound, UsageError, WbError


@dataclass(frozen=True)
class Failure:
    """An error as the user sees it: ``kind`` as in the ``--json`` error document
    (``bad_input``, ``not_found``, ``usage``, ``refused``, ``error``, ``store``), the line
    after ``wb: error:``, the exit code, and where the input was at fault."""

    kind: str
    message: str
    exit_code: int
    file: str | None = None
    where: str | None = None
    details: dict[str, object] | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "message": self.message,
            "exit": self.exit_code,
            "file": self.file,
            "where": self.where,
            **({"details": self.details} if self.details else {}),
        }


class ServedError(WbError):
    """A failure the server described (or the transport's own: no answer), raised again on
    this side so that it prints as it would have where it happened."""

    def __init__(self, failure: Failure, status: int | None = None) -> None:
        super().__init__(failure.message, exit_code=failure.exit_code)
        self.failure = failure
        self.status = status
        self.file = failure.file
        self.where = failure.where
        self.details = failure.details


def _kind(exc: WbError) -> str:
    """The error's kind in the JSON document: its class, in the CLI contract's words."""
    for cls, kind in ((BadInput, "bad_input"), (NotFound, "not_found"), (UsageError, "usage")):
        if isinstance(exc, cls):
            return kind
    return "refused" if exc.exit_code == EXIT_REFUSED else "error"


def describe(exc: BaseException) -> Failure | None:
    """The failure ``exc`` is to the user (None: a bug, an internal error)."""
    if isinstance(exc, ServedError):
        return exc.failure
    if isinstance(exc, WbError):
        return Failure(
            _kind(exc),
            exc.message,
            exc.exit_code,
            getattr(exc, "file", None),
            getattr(exc, "where", None),
            getattr(exc, "details", None),
        )
    errors = sys.modules.get("store.errors")
    if errors is not None and isinstance(exc, errors.StoreError):
        # What was asked is refused (usage, exit 2) or the store failed (exit 1): docs/cli.md's exit codes.
        usage = isinstance(exc, errors.StoreRefusal)
        kind = "not_found" if isinstance(exc, errors.RunNotFound) else "store"
        return Failure(kind, str(exc), EXIT_USAGE if usage else EXIT_FAILURE)
    return None
