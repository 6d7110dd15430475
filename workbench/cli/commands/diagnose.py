"""wb diagnose: which rank failed first, the failure class, and which collective waited."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import click

from workbench.cli.context import emit_json, open_store_from
from workbench.diagnostics import diagnose
from workbench.diagnostics.diagnosis import evidence_items
from workbench.diagnostics.render import render
from workbench.errors import UsageError
from workbench.investigations.workflow import new_observation


def _pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    out = {}
    for v in values:
        host, sep, value = v.partition("=")
        if not sep or not host or not value:
            raise UsageError(f"{option} expects HOST=VALUE, got {v!r}")
        out[host] = value
    return out


def _seconds(text: str, option: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{option}: {text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"{option}: {text!r} must be a finite, non-negative number of seconds")
    return value


def _epoch(text: str, option: str) -> float:
    try:
        return float(text)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{option}: {text!r} is neither epoch seconds nor an ISO time") from None
    return (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).timestamp()


@click.command("diagnose")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option(
    "--clock-uncertainty",
    default="1.0",
    metavar="SECONDS",
    show_default=True,
    help="How far any node's clock may be off.",
)
@click.option("--host-clock", multiple=True, metavar="HOST=SECONDS", help="Clock uncertainty of one node (repeatable).")
@click.option(
    "--boot-time",
    multiple=True,
    metavar="HOST=TIME",
    help="Boot time of a node (ISO or epoch) to place boot-relative kernel stamps.",
)
@click.option(
    "--year",
    type=click.IntRange(1970, 9999),
    default=None,
    help="Year of stamps that have none (vLLM's INFO 10-21 12:39:26, syslog, glog) and that no dated line of "
    "their own file dates.",
)
@click.option("--limit", default=30, show_default=True, help="Timeline rows shown (human output).")
@click.option(
    "--pin", "pin_to", default=None, metavar="INVESTIGATION", help="Pin the observations to this investigation."
)
@click.option("--by", default=None, help="Who pins them (default: your login name).")
@click.pass_context
def command(ctx, paths, as_json, clock_uncertainty, host_clock, boot_time, year, limit, pin_to, by) -> None:
    """Diagnose an incident from rank dumps and logs in PATHS (files or directories).

    Reads NCCL flight-recorder dumps (pickle, read without running code, or JSON),
    per-rank logs, torchrun error files and kernel logs. Names the first failure only
    when it precedes the others by more than the clock uncertainty; otherwise says
    undecided. Files in a sub-folder of a given directory are attributed to a node
    named after that sub-folder.
    """
    diagnosis = diagnose(
        paths,
        clock_uncertainty=_seconds(clock_uncertainty, "--clock-uncertainty"),
        host_uncertainty={h: _seconds(v, "--host-clock") for h, v in _pairs(host_clock, "--host-clock").items()},
        boot_times={h: _epoch(v, "--boot-time") for h, v in _pairs(boot_time, "--boot-time").items()},
        year=year,
    )
    pinned = []
    if pin_to is not None:
        store = open_store_from(ctx)
        pinned = [
            new_observation(store, pin_to, o.text, evidence_items(o), source="diagnose", by=by).to_json()
            for o in diagnosis.observations
        ]
    report = diagnosis.report()
    if pin_to is not None:
        report = report.with_pinned([o["ref"] for o in pinned])
    if as_json:
        emit_json(report.to_json())
    else:
        render(report, limit=limit)
        if pinned:
            click.echo(
                f"pinned {len(pinned)} observations (observations, not causes) to investigation {pin_to}: "
                + ", ".join(o["ref"] for o in pinned)
            )
