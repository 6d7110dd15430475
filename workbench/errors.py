"""Errors the user sees as one clear line, and the exit codes that go with them.

Exit codes are part of the CLI contract (docs/cli.md).
"""

from __future__ import annotations

from pathlib import Path

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2  # usage errors and bad input
EXIT_REFUSED = 3  # comparison refused / bundle mismatch
EXIT_REGRESSION = 4  # regression found (only with --fail-on)
EXIT_INTERRUPTED = 130


class WbError(Exception):
    """An error with a message fit for the user, and an exit code."""

    exit_code = EXIT_FAILURE

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else type(self).__name__


class UsageError(WbError):
    exit_code = EXIT_USAGE


class BadInput(WbError):
    """Input that cannot be read: names the file and, where it applies, the place in it.

    ``where`` is a JSON path (``samples[12].queue_ms``), a line (``line 40``) or a
    byte offset; ``str(err)`` is the one line the user sees.
    """

    exit_code = EXIT_USAGE

    def __init__(self, file: str | Path | None, message: str, *, where: str | None = None) -> None:
        self.file = str(file) if file is not None else None
        self.where = where
        self.detail = message
        parts = [p for p in (self.file, where) if p]
        super().__init__(": ".join([*parts, message]))

    def at(self, file: str | Path) -> "BadInput":
        """The same error, attributed to ``file`` when it was raised without one."""
        if self.file is not None:
            return self
        return BadInput(file, self.detail, where=self.where)


class NotFound(WbError):
    exit_code = EXIT_USAGE


class WriteFailed(WbError):
    """A file wb writes for the user could not be written (a full disk, a quota, no such
    directory): names the file; nothing of it is left behind (``workbench.outputs``)."""

    def __init__(self, file: str | Path, message: str, *, exit_code: int | None = None) -> None:
        self.file = str(file)
        self.where: str | None = None
        super().__init__(f"{file}: {message}", exit_code=exit_code)
