"""wb diagnose: which rank failed first, the failure class, and which collective waited."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import click

from workbench.cli.context import emit_json, open_store_from
from workbench.diagnostics import diagnose
from workbench.diagnostics.diagnosis import evidence_items
from workbench.errors import UsageError
from workbench.investigations.workflow import pin_observation
from workbench.textsafe import markup_safe as esc


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
@click.option("--clock-uncertainty", default="1.0", metavar="SECONDS", show_default=True, help="How far any node's clock may be off.")
@click.option("--host-clock", multiple=True, metavar="HOST=SECONDS", help="Clock uncertainty of one node (repeatable).")
@click.option("--boot-time", multiple=True, metavar="HOST=TIME", help="Boot time of a node (ISO or epoch) to place boot-relative kernel stamps.")
@click.option("--limit", default=30, show_default=True, help="Timeline rows shown (human output).")
@click.option("--pin", "pin_to", default=None, metavar="INVESTIGATION", help="Pin the observations to this investigation.")
@click.option("--by", default=None, help="Who pins them (default: your login name).")
@click.pass_context
def command(ctx, paths, as_json, clock_uncertainty, host_clock, boot_time, limit, pin_to, by) -> None:
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
    )
    pinned = []
    if pin_to is not None:
        store = open_store_from(ctx)
        pinned = [
            pin_observation(store, pin_to, o["text"], evidence_items(o), source="diagnose", by=by)
            for o in diagnosis.observations
        ]
    if as_json:
        doc = diagnosis.to_json()
        if pin_to is not None:
            doc["pinned"] = [o["ref"] for o in pinned]
        emit_json(doc)
    else:
        render(diagnosis.to_json(), limit=limit)
        if pinned:
            click.echo(f"pinned {len(pinned)} observations (observations, not causes) to investigation {pin_to}: " + ", ".join(o["ref"] for o in pinned))


def render(doc: dict, *, limit: int = 30, console=None) -> None:
    """Human report of a diagnosis document, 80 columns, untrusted text escaped."""
    from rich.console import Console  # Rich (~40 ms): only to draw, never for --json
    from rich.table import Table

    con = console or Console(width=80, highlight=False)

    def when(t):
        if t is None:
            return "unplaced"
        return datetime.fromtimestamp(t, timezone.utc).strftime("%m-%d %H:%M:%S.%f")[:-3]

    def origin(e):
        parts = [e.get("host") or "", f"r{e['rank']}" if e.get("rank") is not None else ""]
        return " ".join(p for p in parts if p) or "-"

    n_files = len(doc["inputs"]["files"])
    con.print(f"[bold]wb diagnose[/bold] — {n_files} files, {doc['inputs']['flight_recorder_dumps']} flight-recorder dumps")
    for note in doc["clock"]["notes"]:
        con.print(f"  [dim]{esc(note)}[/dim]")

    ff = doc["first_failure"]
    con.print()
    if ff["status"] == "named":
        e = ff["event"]
        con.print(f"[bold]First failure:[/bold] {esc(e['kind'])} on {esc(origin(e))} at {when(e['time'])}")
        con.print(f"  {esc(e['text'])}", overflow="fold")
        con.print(f"  [dim]{esc(ff['reason'])}[/dim]")
    elif ff["status"] == "undecided":
        con.print(f"[bold]First failure:[/bold] [yellow]undecided[/yellow] — {esc(ff['reason'])}")
        for c in ff["candidates"][:5]:
            con.print(f"  candidate: {esc(c['kind'])} on {esc(origin(c))} at {when(c['time'])}")
            con.print(f"    [dim]{esc(c['text'][:150])}[/dim]", overflow="fold")
    else:
        con.print(f"[bold]First failure:[/bold] none found — {esc(ff['reason'])}")

    fc = doc["failure_class"]
    role = f" ({fc['role']})" if fc.get("role") else ""
    con.print(f"[bold]Class:[/bold] {esc(fc['class'])}{esc(role)}" + (f" — {esc(fc['detail'])}" if fc.get("detail") else ""))
    if fc.get("candidate_classes"):
        con.print(f"  candidates: {esc(', '.join(fc['candidate_classes']))}")
    if fc.get("retry"):
        con.print(f"  [dim]{esc(fc['retry']['rule'])} What would change them: {esc(fc['retry']['what_would_change_it'])}.[/dim]")
        if fc["retry"].get("xid_action"):
            con.print(f"  {esc(fc['retry']['xid_action'])}")

    coll = doc.get("collectives")
    if coll:
        con.print()
        con.print(f"[bold]Collectives[/bold] ({len(coll['ranks_with_dumps'])} dumps): verdict {esc(coll['verdict'])}")
        if coll["missing_dumps"]:
            con.print(f"  no dump for ranks {esc(coll['missing_dumps'])}: undecided for them")
        table = Table(show_edge=False, pad_edge=False, width=80)
        for col in ("group", "desc", "seq", "op", "size", "missing", "status"):
            table.add_column(col, overflow="fold")
        for g in coll["groups"]:
            if g["status"] in ("missing", "undecided") or g["mismatches"]:
                table.add_row(
                    esc(g["group"]), esc(g["desc"][:22]), str(g["seq"]), esc((g["op"] or "").replace("nccl:", "")),
                    esc(g["size"] or ""), esc(",".join(map(str, g["never_entered"] or g["no_dump"] or g["unknown"]))), esc(g["status"]),
                )
        if table.row_count:
            con.print(table)
        else:
            con.print("  every member entered the newest collective of each group; no rank can be singled out")

    rows = doc["timeline"]
    interesting = [r for r in rows if r["role"] != "info" or r["kind"] == "collective_wait"]
    con.print()
    con.print(f"[bold]Timeline[/bold] ({len(interesting)} events, UTC)")
    table = Table(show_edge=False, pad_edge=False, width=80)
    table.add_column("time", no_wrap=True)
    table.add_column("where", overflow="fold")
    table.add_column("event", overflow="fold")
    table.add_column("label", no_wrap=True)
    for r, repeats in _collapse(interesting)[:limit]:
        text = _event_text(r) + (f" (x{repeats})" if repeats > 1 else "")
        table.add_row(when(r["time"]), esc(origin(r)), esc(text), esc(r["label"]))
    con.print(table)

    con.print()
    con.print("[bold]Observations[/bold] (observations, not causes)")
    for o in doc["observations"]:
        con.print(f"  • {esc(o['text'])}", overflow="fold")


def _collapse(rows: list[dict]) -> list[tuple[dict, int]]:
    """Runs of the same event on the same origin (an Xid burst) shown once with a count."""
    out: list[tuple[dict, int]] = []
    for r in rows:
        key = (r.get("host"), r.get("rank"), r["file"], _event_text(r))
        if out and out[-1][0]["label"] == r["label"] and (out[-1][0].get("host"), out[-1][0].get("rank"), out[-1][0]["file"], _event_text(out[-1][0])) == key:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((r, 1))
    return out


def _event_text(r: dict) -> str:
    v = r.get("values") or {}
    if r["kind"] == "xid":
        return f"Xid {v.get('code')} {v.get('pci', '')}"
    if r["kind"] == "collective_wait":
        return f"waiting: seq {v.get('seq')} of group {v.get('group')}; never entered: {','.join(map(str, v.get('never_entered', [])))}"
    if r["kind"] == "watchdog_timeout":
        return f"watchdog timeout {v.get('op')} seq {v.get('seq')}"
    if r["kind"] == "exception":
        return f"{v.get('exception')}: {v.get('message', '')}"[:60]
    return r["kind"].replace("_", " ")
