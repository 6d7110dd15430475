"""The headless ``wb`` command line.

Each command is a module in ``workbench/cli/commands/`` exposing ``command`` (a Click
command or group); the module's name is the command's name (a trailing ``_`` is
added to a Python keyword, so ``wb import`` is ``import_.py``). ``wb --help`` lists
the commands from ``commands.SUMMARIES`` and imports none of their modules; a
command's module is imported only when that command (or its own ``--help``) runs,
and it imports what it needs at its top. What would load SQLAlchemy (the store's
table modules), Textual, or Rich on a ``--json`` path still loads inside functions,
each with its reason, so ``wb CMD --help`` loads none of the heavy modules that
tests/foundation/test_cli_light.py names (numpy it may: most commands need it).
"""

from __future__ import annotations

import errno
import importlib
import os
import stat
import sys

import click

from workbench import __version__
from workbench.cli.commands import LOCAL_ONLY, SUMMARIES, module_name
from workbench.cli.tui_launch import launch_tui
from workbench.cli import json_out
from workbench.errors import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    UsageError,
    WbError,
)
from workbench.textsafe import clean
from workbench.usecases.failures import describe

_COMMANDS_PACKAGE = "workbench.cli.commands"


class _NeverRaised(Exception):
    pass


def _store_error() -> type[Exception]:
    # Not imported at the top: `wb evidence verify` must run where `store` cannot be
    # imported. If store.errors was never loaded, no StoreError can have been raised.
    module = sys.modules.get("store.errors")
    return getattr(module, "StoreError", _NeverRaised)


# Commands that may run the user's own programs (the demo opens the TUI, whose Verify
# stage runs plans), which must get the user's environment.
_RUNS_USER_COMMANDS = frozenset({"rerun", "bisect", "demo"})


def _one_blas_thread(cmd_name: str) -> None:
    """OpenBLAS (numpy's and scipy's) with one thread, for commands that run no user program.

    OpenBLAS starts a spinning thread per core when it loads, which on a 2-core node
    doubled the CPU of a ``wb compare`` (0.49 -> 0.25 s) for nothing: wb's statistics do
    no matrix algebra. Set before the command loads, so both libraries read it; a value
    the user set is kept, and the commands that run the user's benchmarks (whose BLAS
    threads are part of what is measured) are left alone; so is the TUI."""
    if cmd_name not in _RUNS_USER_COMMANDS:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


class _LazyGroup(click.Group):
    """Lists the commands from ``SUMMARIES``; imports a command's module only to run it."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUMMARIES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in SUMMARIES:
            return None
        _one_blas_thread(cmd_name)
        return importlib.import_module(f"{_COMMANDS_PACKAGE}.{module_name(cmd_name)}").command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # As click.Group.format_commands, with a stand-in command per summary (it
        # shortens the text to the terminal as the real command's help would be).
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        rows = [(name, click.Command(name, help=SUMMARIES[name]).get_short_help_str(limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=_LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--store",
    "store_url",
    envvar="WB_STORE",
    metavar="URL",
    help="Store URL (sqlite:///path or postgresql://...). Default: $XDG_DATA_HOME/wb/wb.sqlite.",
)
@click.option(
    "--server",
    "server_url",
    envvar="WB_SERVER",
    metavar="URL",
    help="A wb serve whose store the commands and the TUI use instead of a local one (token in $WB_TOKEN; "
    "docs/server.md).",
)
@click.option("--mouse", is_flag=True, help="Enable mouse support in the workbench TUI.")
@click.version_option(__version__, "--version", prog_name="wb", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context, store_url: str | None, server_url: str | None, mouse: bool) -> None:
    """wb: find what changed in GPU performance, prove it, share the evidence.

    With no command, opens the workbench TUI on the default store (or the server named).
    """
    ctx.ensure_object(dict)
    ctx.obj["store_url"] = store_url
    # An explicit --store wins over WB_SERVER from the environment; with a server named (--server or
    # WB_SERVER alike) the store commands run there, and a command that works on a local store only
    # is refused in one line, never run on a store nobody named.
    ctx.obj["server_url"] = server_url
    ctx.obj["store_given"] = ctx.get_parameter_source("store_url") is click.core.ParameterSource.COMMANDLINE
    server = server_url if not ctx.obj["store_given"] else None
    way = LOCAL_ONLY.get(ctx.invoked_subcommand or "")
    if server and way is not None:
        raise UsageError(
            f"'wb {ctx.invoked_subcommand}' works on a local store only, not through the server {server}: {way}"
        )
    if ctx.invoked_subcommand is None:
        launch_tui(store_url=store_url, server_url=server, mouse=mouse)


def _input_fault(exc: BaseException) -> str | None:
    """What an exception that only hostile input causes says about the input (None: a bug)."""
    if isinstance(exc, RecursionError):
        return "input nested too deeply to process"
    if isinstance(exc, MemoryError):
        return "input too large to process in the memory available"
    if isinstance(exc, UnicodeError) and "surrogate" in str(exc):
        return "input text is not valid Unicode (a lone surrogate)"
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return "input holds an integer of more than 4,300 digits"
    return None


def _fail(kind: str, line: str, exit_code: int, *, message: str | None = None, exc: object = None) -> None:
    """One human line on stderr, with ``--json`` the error document on stdout, then exit."""
    click.echo(line, err=True)
    if json_out.wanted():
        json_out.write_error(
            json_out.error_document(
                kind,
                message if message is not None else line.removeprefix("wb: error: ").removeprefix("wb: "),
                exit_code,
                file=getattr(exc, "file", None),
                where=getattr(exc, "where", None),
                details=getattr(exc, "details", None),
            )
        )
    sys.exit(exit_code)


def _internal(exc: BaseException) -> None:
    if os.environ.get("WB_DEBUG"):
        raise exc
    _fail(
        "internal",
        f"wb: internal error: {type(exc).__name__}: {clean(str(exc))} (set WB_DEBUG=1 for a traceback)",
        EXIT_FAILURE,
    )


def main(argv: list[str] | None = None) -> None:
    """Entry point: runs the CLI and turns errors into one line and an exit code (and,
    with ``--json``, into one JSON error document on stdout)."""
    json_out.start(sys.argv[1:] if argv is None else argv)
    try:
        # Without standalone mode Click returns ctx.exit()'s code instead of exiting.
        rc = cli.main(args=argv, prog_name="wb", standalone_mode=False)
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        # Click's own parse errors (a bad value, an unknown option, a missing argument) in the
        # project's one line, not Click's usage block: the command and its --help are named.
        message = " ".join(clean(exc.format_message()).split()).removesuffix(".")
        ctx = getattr(exc, "ctx", None)
        usage = isinstance(exc, click.UsageError)
        hint = f" (see '{ctx.command_path} --help')" if usage and ctx is not None else ""
        _fail("usage" if usage else "error", f"wb: error: {message}{hint}", exc.exit_code, message=message)
    except (click.exceptions.Abort, KeyboardInterrupt):
        _fail("interrupted", "wb: interrupted", EXIT_INTERRUPTED)
    except (WbError, _store_error()) as exc:
        failure = describe(exc)  # wb's own errors and the store's, here or on a server: one line each
        assert failure is not None
        message = clean(failure.message)
        _fail(failure.kind, f"wb: error: {message}", failure.exit_code, message=message, exc=failure)
    except BrokenPipeError:
        sys.exit(EXIT_FAILURE)
    except (RecursionError, MemoryError, UnicodeError, ValueError) as exc:
        # Input shapes no reader should have let through (the readers name the file and
        # the limit; this is the net under them): one line, bad input, not a traceback.
        if os.environ.get("WB_DEBUG") or _input_fault(exc) is None:
            _internal(exc)
        _fail(
            "bad_input",
            f"wb: error: {_input_fault(exc)} ({type(exc).__name__}: {clean(str(exc))[:200]}; "
            "set WB_DEBUG=1 for a traceback)",
            EXIT_USAGE,
        )
    except OSError as exc:
        if os.environ.get("WB_DEBUG") or exc.errno not in _WRITE_FAULTS:
            _internal(exc)
        where = _failed_output(exc)
        _fail("error", f"wb: error: {where}: cannot be written ({exc.strerror})", EXIT_FAILURE, exc=exc)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, not a traceback
        _internal(exc)


# A write the disk refused: full, over quota, a file too large, an I/O error, read-only.
_WRITE_FAULTS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS})


def _failed_output(exc: OSError) -> str:
    """The file a refused write was for: its name, or standard output when that is what
    cannot take more (what wb writes as a file goes through ``workbench.outputs``, which names it)."""
    if exc.filename:
        return clean(str(exc.filename))
    try:
        fd = sys.stdout.fileno()
        os.write(fd, b"")  # /dev/full refuses even nothing
        full = stat.S_ISREG(os.fstat(fd).st_mode) and os.fstatvfs(fd).f_bavail == 0  # a file on a full disk
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both of the first two
        return "standard output"
    return "standard output" if full else "a file being written"
