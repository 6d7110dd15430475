"""Whether this ``wb`` process owes stdout one JSON document, and the error document.

With ``--json`` stdout holds exactly one JSON document (docs/cli.md). A command writes
its result through ``context.emit_json``, which records that the document is out; when the
command fails instead, ``main`` writes the error as that one document:
``{"error": {"kind", "message", "file", "where"}, "exit": N}`` (the human line still goes
to stderr). Light on purpose: ``main`` imports it before any command runs.
"""

from __future__ import annotations

import json
import sys

_state = {"wanted": False, "written": False}


def wants_json(argv: list[str]) -> bool:
    """``--json`` among the options (before a ``--`` that ends them)."""
    for arg in argv:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False


def start(argv: list[str]) -> None:
    """A new command: whether it owes a document, and none out yet (``main`` may run more
    than once in a process)."""
    _state["wanted"] = wants_json(argv)
    _state["written"] = False


def wanted() -> bool:
    return _state["wanted"]


def mark_written() -> None:
    _state["written"] = True


def written() -> bool:
    return _state["written"]


def error_document(
    kind: str,
    message: str,
    exit_code: int,
    *,
    file: str | None = None,
    where: str | None = None,
    details: dict[str, object] | None = None,
) -> dict[str, object]:
    error: dict[str, object] = {"kind": kind, "message": message, "file": file, "where": where}
    if details:
        error["details"] = details
    return {"error": error, "exit": exit_code}


def write_error(document: dict[str, object]) -> None:
    """The error document on stdout, unless the command already wrote its one document."""
    if written():
        return
    try:
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):  # stdout closed or full: the exit code still says it
        pass
    mark_written()
