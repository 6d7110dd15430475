"""The diagnosis for people: 80 columns, untrusted text escaped (``wb diagnose``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.numbers import utc_time
from workbench.diagnostics.hang_records import HangsRecord
from workbench.diagnostics.hangs import where
from workbench.diagnostics.result import (
    CollectivesRecord,
    DiagnosisReport,
    EventRecord,
    FailureClassRecord,
    FirstFailureRecord,
    TimelineRow,
)
from workbench.textsafe import markup_safe as esc

if TYPE_CHECKING:
    from rich.console import Console


def _when(t: float | None, since_boot: float | None = None, stamp: object = None, no_year: str = " (no year)") -> str:
    if t is None:
        # A boot-relative stamp still orders events on its node: say it, and how to place it.
        if since_boot is not None:
            return f"boot+{since_boot:.6g} s (unplaced: give --boot-time)"
        # So does a stamp without a year, within its file.
        return f"{esc(str(stamp))}{no_year}" if stamp else "unplaced"
    return utc_time(t, year=False, zone=False)


def _origin(e: EventRecord) -> str:
    parts = [e.host or "", f"r{e.rank}" if e.rank is not None else ""]
    named = " ".join(p for p in parts if p)
    if named:
        return named
    pci = e.values.get("pci") if isinstance(e.values, dict) else None
    return f"{e.file.rsplit('/', 1)[-1]}" + (f" (GPU {pci})" if isinstance(pci, str) else "")


def render(d: DiagnosisReport, *, limit: int = 30, console: "Console | None" = None) -> None:
    """Print the diagnosis: the one renderer of a diagnosis (a printed document:
    ``DiagnosisReport.from_json`` first)."""
    from rich.console import Console  # Rich (~40 ms): only to draw, never for --json

    con = console or Console(width=80, highlight=False)

    con.print(
        f"[bold]wb diagnose[/bold] — {len(d.inputs.files)} files, {d.inputs.flight_recorder_dumps} flight-recorder "
        f"dumps"
    )
    for lf in d.inputs.log_formats:
        con.print(f"  [dim]log {esc(lf.file.rsplit('/', 1)[-1])}: {esc(lf.format)}[/dim]")
    for note in d.clock.notes:
        con.print(f"  [dim]{esc(note)}[/dim]")

    con.print()
    _render_first_failure(con, d.first_failure)
    _render_class(con, d.failure_class)
    if d.collectives:
        _render_collectives(con, d.collectives)
    if d.hangs is not None:
        _render_hangs(con, d.hangs)
    _render_timeline(con, d.timeline, limit)

    con.print()
    con.print("[bold]Observations[/bold] (observations, not causes)")
    for o in d.observations:
        con.print(f"  • {esc(o.text)}", overflow="fold")


def _render_first_failure(con: "Console", ff: FirstFailureRecord) -> None:
    if ff.status == "named" and ff.event is not None:
        e = ff.event
        con.print(
            f"[bold]First failure:[/bold] {esc(e.kind)} on {esc(_origin(e))} at "
            f"{_when(e.time, e.since_boot_s, e.values.get('stamp_without_year'))}"
        )
        con.print(f"  {esc(e.text)}", overflow="fold")
        con.print(f"  [dim]{esc(ff.reason)}[/dim]")
    elif ff.status == "undecided":
        con.print(f"[bold]First failure:[/bold] [yellow]undecided[/yellow] — {esc(ff.reason)}")
        for c in ff.candidates[:5]:
            con.print(
                f"  candidate: {esc(c.kind)} on {esc(_origin(c))} at "
                f"{_when(c.time, c.since_boot_s, c.values.get('stamp_without_year'))}"
            )
            con.print(f"    [dim]{esc(c.text[:150])}[/dim]", overflow="fold")
    else:
        con.print(f"[bold]First failure:[/bold] none found — {esc(ff.reason)}")


def _render_class(con: "Console", fc: FailureClassRecord) -> None:
    role = f" ({fc.role})" if fc.role else ""
    con.print(f"[bold]Class:[/bold] {esc(fc.klass)}{esc(role)}" + (f" — {esc(fc.detail)}" if fc.detail else ""))
    if fc.candidate_classes:
        con.print(f"  candidates: {esc(', '.join(fc.candidate_classes))}")
    if fc.retry:
        con.print(f"  [dim]{esc(fc.retry.rule)} What would change them: {esc(fc.retry.what_would_change_it)}.[/dim]")
        if fc.retry.xid_action:
            con.print(f"  {esc(fc.retry.xid_action)}")


def _render_collectives(con: "Console", coll: CollectivesRecord) -> None:
    """The groups where a rank is missing or the members disagree; none: say so."""
    from rich.table import Table  # Rich: only to draw

    con.print()
    con.print(f"[bold]Collectives[/bold] ({len(coll.ranks_with_dumps)} dumps): verdict {esc(coll.verdict)}")
    if coll.missing_dumps:
        con.print(f"  no dump for ranks {esc(str(list(coll.missing_dumps)))}: undecided for them")
    table = Table(show_edge=False, pad_edge=False, width=80)
    for col in ("group", "desc", "seq", "op", "size", "missing", "status"):
        table.add_column(col, overflow="fold")
    for g in coll.groups:
        if g.status in ("missing", "undecided") or g.mismatches:
            table.add_row(
                esc(g.group),
                esc(g.desc[:22]),
                str(g.seq),
                esc((g.op or "").replace("nccl:", "")),
                esc(g.size or ""),
                esc(",".join(map(str, g.never_entered or g.no_dump or g.unknown))),
                esc(g.status),
            )
    if table.row_count:
        con.print(table)
    else:
        con.print("  every member entered the newest collective of each group; no rank can be singled out")


def _render_timeline(con: "Console", timeline: Sequence[TimelineRow], limit: int) -> None:
    """The events that matter (not plain info, but collective waits), repeats collapsed, the first ``limit``."""
    from rich.table import Table  # Rich: only to draw

    interesting = [r for r in timeline if r.role != "info" or r.kind == "collective_wait"]
    con.print()
    con.print(f"[bold]Timeline[/bold] ({len(interesting)} events, UTC)")
    table = Table(show_edge=False, pad_edge=False, width=80)
    table.add_column("time", no_wrap=True)
    table.add_column("where", overflow="fold")
    table.add_column("event", overflow="fold")
    table.add_column("label", no_wrap=True)
    for r, repeats in _collapse(interesting)[:limit]:
        text = _event_text(r) + (f" (x{repeats})" if repeats > 1 else "")
        table.add_row(
            _when(r.time, None, r.values.get("stamp_without_year"), " ?"), esc(_origin(r)), esc(text), esc(r.label)
        )
    con.print(table)
    if any(r.time is None and r.values.get("stamp_without_year") for r in interesting[:limit]):
        con.print("  [dim]?: a stamp without a year (give --year); rows of one log keep its line order[/dim]")


def _render_hangs(con: "Console", h: HangsRecord) -> None:
    """Hung ranks (the recorder's snapshots): who stopped first, where each one is."""
    con.print()
    if h.verdict == "named":
        head = f"{esc(h.first_stopped)} stopped making progress first (by its {esc(h.decided_by)})"
    elif h.verdict == "undecided":
        head = f"[yellow]undecided[/yellow] — {esc(h.reason)}"
    else:
        head = esc(h.reason)
    con.print(f"[bold]Hung ranks[/bold] ({len(h.ranks)} snapshots): {head}", overflow="fold")
    for r in h.ranks:
        role = "first" if r.process == h.first_stopped else "waiting" if r.process in h.waiting else ""
        con.print(f"  {esc(r.process)}: {esc(where(r))}" + (f" [dim]{role}[/dim]" if role else ""), overflow="fold")
    for m in h.missing:
        con.print(f"  [yellow]missing[/yellow] {esc(m)}", overflow="fold")
    for note in h.notes:
        con.print(f"  [dim]{esc(note)}[/dim]", overflow="fold")


def _collapse(rows: list[TimelineRow]) -> list[tuple[TimelineRow, int]]:
    """Runs of the same event on the same origin (an Xid burst) shown once with a count."""
    out: list[tuple[TimelineRow, int]] = []
    key = lambda r: (r.host, r.rank, r.file, _event_text(r))  # noqa: E731
    for r in rows:
        if out and out[-1][0].label == r.label and key(out[-1][0]) == key(r):
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((r, 1))
    return out


def _event_text(r: EventRecord) -> str:
    v = r.values
    if r.kind == "xid":
        return f"Xid {v.get('code')} {v.get('pci', '')}"
    if r.kind == "collective_wait":
        never = v.get("never_entered")
        return (
            f"waiting: seq {v.get('seq')} of group {v.get('group')}; never entered: "
            f"{','.join(map(str, never if isinstance(never, list) else []))}"
        )
    if r.kind == "watchdog_timeout":
        return f"watchdog timeout {v.get('op')} seq {v.get('seq')}"
    if r.kind == "exception":
        return f"{v.get('exception')}: {v.get('message', '')}"[:60]
    if r.kind == "kv_cache_config":
        needed, available = v.get("needed_gib"), v.get("available_gib")
        return "KV cache does not fit" + (f": {needed} GiB needed, {available} GiB free" if needed is not None else "")
    return r.kind.replace("_", " ")
