"""wb snapshot: ask a running process's flight recorder for a snapshot."""

from __future__ import annotations

import math

import click

from workbench.cli.context import emit_json
from workbench.errors import EXIT_REFUSED, NotFound, UsageError, WbError
from workbench.recorder.snapshot_socket import NoRecorder, Refused, request_snapshot
from workbench.textsafe import clean


@click.command("snapshot")
@click.argument("pid", type=int)
@click.option(
    "--wait",
    "wait_s",
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="How long the recorder may take to write the snapshot.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the pid and the snapshot paths as JSON.")
def command(pid: int, wait_s: float, as_json: bool) -> None:
    """Ask the flight recorder in a running process (yours) for a snapshot and print its path.

    The process must run workbench.recorder with its control socket on (the default); the
    request goes through a Unix socket in your runtime directory, checked to be yours, so
    no ptrace and no root are needed and other users can neither ask nor read
    (docs/recorder.md, "When a step never ends").
    """
    if pid <= 0:
        raise UsageError(f"PID must be a positive process id, not {pid}")
    if not math.isfinite(wait_s) or not 0 < wait_s <= 600:
        raise UsageError(f"--wait must be between 0 and 600 seconds, not {wait_s:g}")
    try:
        paths = request_snapshot(pid, wait_s)
    except NoRecorder as exc:
        raise NotFound(str(exc)) from None
    except Refused as exc:
        raise WbError(str(exc), exit_code=EXIT_REFUSED) from None
    if as_json:
        emit_json({"pid": pid, "paths": paths})
    else:
        for path in paths:
            click.echo(clean(path))
