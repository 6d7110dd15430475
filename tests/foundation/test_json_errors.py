"""With ``--json`` every failure is one JSON document on stdout, the human line on stderr.

Every command and subcommand that takes ``--json`` is run on failure paths (an unknown
option; arguments that name no run, no file, no investigation; a file that is no capture;
an internal error), and stdout must parse as exactly one document; when the command failed
it is ``{"error": {"kind", "message", "file", "where"}, "exit": N}`` with N the exit code.
"""

from __future__ import annotations

import importlib
import json

import click
import pytest

from tests.rerun.helpers import wb
from workbench.cli.commands import SUMMARIES, module_name

KINDS = {"usage", "bad_input", "not_found", "refused", "error", "store", "internal", "interrupted"}


def _json_commands() -> list[tuple[str, ...]]:
    found = []

    def walk(cmd: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk(sub, (*path, name))
        elif any("--json" in p.opts for p in cmd.params if isinstance(p, click.Option)):
            found.append(path)

    for name in sorted(SUMMARIES):
        walk(importlib.import_module(f"workbench.cli.commands.{module_name(name)}").command, (name,))
    return found


def _failing_arguments(path: tuple[str, ...]) -> list[str]:
    """Values for the command's required arguments and options that name nothing there is."""
    cmd = importlib.import_module(f"workbench.cli.commands.{module_name(path[0])}").command
    for name in path[1:]:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    args: list[str] = []
    for param in cmd.params:
        if not param.required:
            continue
        value = "/nonexistent/wb-test/file.json" if isinstance(param.type, click.Path) else "999999"
        if isinstance(param.type, click.Choice):
            value = param.type.choices[0]
        if isinstance(param, click.Option):
            args += [param.opts[0], value]
        else:
            args += [value] * (1 if param.nargs == 1 else 1)
    return args


COMMANDS = _json_commands()
# Commands whose every path succeeds on an empty store (nothing to fail on but options).
SUCCEED_ON_EMPTY = {
    ("demo",),
    ("doctor",),
    ("runs",),
    ("investigate", "list"),
    ("rerun", "list"),
    ("bisect", "list"),
    ("token", "list"),
    ("token", "add"),
    ("action", "list"),
}  # a token may be named 999999


def _one_document(out: str) -> dict:
    doc = json.loads(out)  # raises on zero or two documents
    assert isinstance(doc, (dict, list))
    return doc


def _check_error(code: int, out: str, err: str) -> dict:
    assert code != 0
    doc = _one_document(out)
    assert set(doc) == {"error", "exit"}, doc
    assert doc["exit"] == code
    assert set(doc["error"]) >= {"kind", "message", "file", "where"}
    assert doc["error"]["kind"] in KINDS
    assert doc["error"]["message"]
    assert err.strip(), "the human line still goes to stderr"
    return doc


def test_every_json_command_is_found():
    assert ("compare",) in COMMANDS and ("rerun", "report") in COMMANDS and ("import",) in COMMANDS
    assert len(COMMANDS) >= 20


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_unknown_option_is_a_json_usage_error(path, sqlite_url):
    code, out, err = wb(*path, "--json", "--no-such-option-here", store=sqlite_url)
    doc = _check_error(code, out, err)
    assert doc["error"]["kind"] == "usage" and code == 2


@pytest.mark.parametrize("path", [p for p in COMMANDS if p not in SUCCEED_ON_EMPTY], ids=" ".join)
def test_arguments_naming_nothing_give_one_json_error(path, sqlite_url):
    code, out, err = wb(*path, *_failing_arguments(path), "--json", store=sqlite_url)
    if code == 0:  # a command that succeeds on what names nothing must still print one document
        _one_document(out)
        pytest.fail(f"wb {' '.join(path)} succeeded on arguments that name nothing")
    if out.strip() and "error" not in json.loads(out):
        return  # the command's own document (a refusal or a failed check), with its exit code
    _check_error(code, out, err)


def test_not_a_capture_names_the_file(tmp_path, sqlite_url):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a capture\n")
    code, out, err = wb("import", str(bad), "--json", store=sqlite_url)
    doc = _check_error(code, out, err)
    assert code == 2 and doc["error"]["kind"] == "bad_input" and doc["error"]["file"] == str(bad)


def test_missing_run_is_not_found(sqlite_url, tmp_path):
    code, out, err = wb("show", "424242", "--json", store=sqlite_url)
    doc = _check_error(code, out, err)
    assert doc["error"]["kind"] == "not_found" and code == 2


def test_internal_error_is_a_json_document(sqlite_url, monkeypatch):
    from workbench.cli.commands import runs

    def boom(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(runs, "workbench_from", boom)
    code, out, err = wb("runs", "--json", store=sqlite_url)
    doc = _check_error(code, out, err)
    assert doc["error"]["kind"] == "internal" and code == 1 and "a bug" in doc["error"]["message"]


def test_without_json_stdout_stays_empty_on_failure(sqlite_url):
    code, out, err = wb("show", "424242", store=sqlite_url)
    assert code == 2 and out == "" and "no run" in err
