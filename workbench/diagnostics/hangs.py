"""Hung ranks together, from the flight recorder's snapshots (``workbench.recorder``).

A hang, termination or on-request snapshot states where its process was (``at_snapshot``):
the open step and its open phase, the phases of that step already done, the latest closed
step, and every thread's stack with the loop's thread marked. Across the ranks of a job:

* **Position in the loop** (the step, then how many of its phases are done) orders ranks
  without any clock: a rank behind every other one stopped making progress first, and the
  ranks further along that stopped too are waiting for it (in a collective, typically).
  Each rank's recorder numbers its own steps from its start, so positions compare ranks that
  recorded the same loop from the same step; phases compare when the behind rank's done
  phases are a prefix of the others' (the same loop body).
* Ranks **at the same place** are ordered by when each last made progress (the latest of its
  open phase's start, its done phases' ends, its open step's start, its last closed step's
  end), each on its own clock: only when further apart than the clocks' uncertainty
  (``timeline.ClockPolicy``: ``--clock-uncertainty``, ``--host-clock``; one host's clock
  against itself is exact to a millisecond).
* Otherwise **undecided**, with what is missing: a rank of the job without a snapshot (the job's
  ranks: the ``rank_count`` dimension, the flight-recorder groups), clocks too close to order
  two ranks, every rank at the same place (the hang is inside that phase: see the dumps).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from workbench.diagnostics.hang_records import HangsRecord, RankHang
from workbench.diagnostics.timeline import ClockPolicy
from workbench.errors import BadInput
from workbench.inputs import read_bounded
from workbench.limits import MAX_UPLOAD_BYTES

_SNAPSHOT = re.compile(rb'^\s*\{\s*"format"\s*:\s*"workbench\.capture/1"')
SAME_HOST_MARGIN_S = 0.001  # one host's clock against itself: its stamps are microseconds


def sniff(head: bytes) -> bool:
    """A native capture (the recorder writes ``format`` first); whether it holds the recorder's
    state is known once it is read."""
    return _SNAPSHOT.match(head) is not None


# -- what is read of a snapshot (everything else is skipped by the decoder) ------------------


class _Frame(msgspec.Struct):
    function: str
    file: str
    line: int | None = None
    stdlib: bool = False


class _Thread(msgspec.Struct):
    name: str
    workload: bool = False
    frames: list[_Frame] = []


class _OpenSpan(msgspec.Struct):
    kind: str
    seq: int
    opened_at: float
    open_s: float
    phases_done: list[tuple[str, float]] = []


class _OpenPhase(msgspec.Struct):
    name: str
    opened_at: float
    open_s: float


class _At(msgspec.Struct):
    reason: str
    at: float
    host: str
    pid: int
    rank: int | None = None
    open_span: _OpenSpan | None = None
    open_phase: _OpenPhase | None = None
    last_closed_seq: int | None = None
    last_closed_at: float | None = None
    threads: list[_Thread] = []


class _Window(msgspec.Struct):
    snapshot_reason: str = ""


class _Recorder(msgspec.Struct):
    pid: int | None = None
    host: str | None = None


class _Doc(msgspec.Struct):
    format: str
    dimensions: dict[str, Any] = {}
    window: _Window | None = None
    at_snapshot: _At | None = None
    trigger: dict[str, Any] | None = None
    samples: list[dict[str, Any]] = []
    recorder: _Recorder | None = None


@dataclass
class Snapshot:
    """One recorder capture as diagnose reads it."""

    file: str
    reason: str
    rank_count: int | None
    at: _At | None
    trigger: dict[str, Any]
    rank: int | None  # from at_snapshot, else the samples
    pid: int | None
    host: str | None

    @property
    def useful(self) -> bool:
        return self.at is not None or self.trigger.get("kind") == "hang ended"


def load(path: Path) -> Snapshot:
    """Read a recorder capture (one line naming the file and place when it is malformed)."""
    data = read_bounded(path, MAX_UPLOAD_BYTES, "is larger than a recorder snapshot may be (1 GiB)")
    try:
        doc = msgspec.json.decode(data, type=_Doc)
    except msgspec.ValidationError as exc:
        raise BadInput(path, f"not a recorder snapshot: {exc}") from None
    except msgspec.DecodeError as exc:
        raise BadInput(path, f"not valid JSON ({exc})") from None
    count = doc.dimensions.get("rank_count")
    at = doc.at_snapshot
    rank = at.rank if at is not None else next((s["rank"] for s in doc.samples if isinstance(s.get("rank"), int)), None)
    rec = doc.recorder or _Recorder()
    return Snapshot(
        file=str(path),
        reason=doc.window.snapshot_reason if doc.window else "",
        rank_count=count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else None,
        at=at,
        trigger=doc.trigger or {},
        rank=rank,
        pid=at.pid if at is not None else rec.pid,
        host=at.host if at is not None else rec.host,
    )


# -- one rank's place ---------------------------------------------------------------------------


def _process(rank: int | None, pid: int, host: str) -> str:
    return f"rank {rank}" if rank is not None else f"pid {pid} on {host}"


def _frame(at: _At) -> str | None:
    """The innermost frame of the loop's thread outside the standard library."""
    threads = [t for t in at.threads if t.workload] or at.threads[:1]
    for thread in threads:
        for f in thread.frames:
            if not f.stdlib:
                name = f.file.replace("\\", "/").rsplit("/", 1)[-1]
                return f"{f.function} ({name}:{f.line})" if f.line is not None else f"{f.function} ({name})"
    return None


def _last_progress(at: _At) -> float | None:
    marks = [at.last_closed_at]
    span = at.open_span
    if span is not None:
        marks.append(span.opened_at)
        elapsed = sum(ms for _, ms in span.phases_done) / 1e3
        marks.append(span.opened_at + elapsed if span.phases_done else None)
    if at.open_phase is not None:
        marks.append(at.open_phase.opened_at)
    known = [m for m in marks if m is not None]
    return max(known) if known else None


@dataclass
class _Entry:
    record: RankHang
    position: tuple[int, int] | None  # (step, phases done); between steps: (next step, -1)
    done: tuple[str, ...]


def _entry(snap: Snapshot, at: _At, ended_after: float | None) -> _Entry:
    span, phase = at.open_span, at.open_phase
    done = tuple(name for name, _ in span.phases_done) if span is not None else ()
    if span is not None:
        position: tuple[int, int] | None = (span.seq, len(done))
    elif at.last_closed_seq is not None:
        position = (at.last_closed_seq + 1, -1)
    else:
        position = None
    record = RankHang(
        process=_process(at.rank, at.pid, at.host),
        rank=at.rank,
        host=at.host,
        pid=at.pid,
        file=snap.file,
        snapshot_reason=at.reason,
        at=at.at,
        step=span.seq if span is not None else None,
        open_s=span.open_s if span is not None else None,
        phase=phase.name if phase is not None else None,
        phase_open_s=phase.open_s if phase is not None else None,
        phases_done=done,
        last_closed_step=at.last_closed_seq,
        frame=_frame(at),
        last_progress_at=_last_progress(at),
        hang_ended_after_s=ended_after,
    )
    return _Entry(record, position, done)


def _latest(snaps: list[Snapshot]) -> tuple[dict[str, tuple[Snapshot, _At]], dict[str, float]]:
    """Each process's latest snapshot with a state, and the length of a hang that ended later."""
    latest: dict[str, tuple[Snapshot, _At]] = {}
    for snap in snaps:
        at = snap.at
        if at is None:
            continue
        key = _process(at.rank, at.pid, at.host)
        if key not in latest or at.at > latest[key][1].at:
            latest[key] = (snap, at)
    ended: dict[str, float] = {}
    for snap in snaps:
        if snap.at is None and snap.trigger.get("kind") == "hang ended" and snap.pid is not None:
            key = _process(snap.rank, snap.pid, snap.host or "")
            duration, seq = snap.trigger.get("duration_ms"), snap.trigger.get("seq")
            state = latest.get(key)
            span = state[1].open_span if state is not None else None
            # The hang of the step the rank's latest state shows open (the same step's end).
            if isinstance(duration, (int, float)) and span is not None and span.seq == seq:
                ended[key] = float(duration) / 1e3
    return latest, ended


# -- across ranks -------------------------------------------------------------------------------


@dataclass
class _Decision:
    verdict: str
    reason: str
    first: _Entry | None = None
    decided_by: str | None = None
    waiting: tuple[_Entry, ...] = ()


def _margin(a: RankHang, b: RankHang, policy: ClockPolicy) -> float:
    if a.host == b.host:
        return SAME_HOST_MARGIN_S
    return policy.for_host(a.host) + policy.for_host(b.host)


def _by_clock(tied: list[_Entry], policy: ClockPolicy) -> tuple[_Entry | None, str]:
    """The tied rank that last made progress earliest, if the clocks can tell; else why not."""
    if any(e.record.last_progress_at is None for e in tied):
        unknown = [e.record.process for e in tied if e.record.last_progress_at is None]
        return None, f"no progress time for {', '.join(unknown)}"
    ordered = sorted(tied, key=lambda e: e.record.last_progress_at or 0.0)
    first = ordered[0]
    for other in ordered[1:]:
        gap = (other.record.last_progress_at or 0.0) - (first.record.last_progress_at or 0.0)
        margin = _margin(first.record, other.record, policy)
        if gap <= margin:
            return None, (
                f"the clocks cannot order {first.record.process} and {other.record.process}: their last progress is "
                f"{gap:.3f} s apart, within the clocks' margin of {margin:.3f} s (--clock-uncertainty, --host-clock)"
            )
    return first, ""


def _decide(entries: list[_Entry], policy: ClockPolicy) -> _Decision:
    placed = [e for e in entries if e.position is not None]
    if len(placed) < len(entries):
        lost = [e.record.process for e in entries if e.position is None]
        return _Decision("undecided", f"the snapshot of {', '.join(lost)} places it nowhere in the loop (no step)")
    lowest = min(e.position for e in placed if e.position is not None)
    behind = [e for e in placed if e.position == lowest]
    ahead = tuple(e for e in placed if e.position != lowest)
    if not ahead:
        return _Decision(
            "undecided",
            f"every rank is at the same place ({place(behind[0].record)}): none is behind the others; "
            "the hang is inside that phase (a collective every rank entered: see the flight-recorder dumps)",
        )
    step = lowest[0]
    prefix = behind[0].done
    if any(e.position is not None and e.position[0] == step and e.done[: len(prefix)] != prefix for e in ahead):
        candidates = placed  # the phases do not line up: only the clocks can order the ranks
        first, why = _by_clock(candidates, policy)
        if first is None:
            return _Decision("undecided", f"the ranks' phases of step {step} differ, and {why}")
        return _Decision("named", "", first, "clocks", tuple(e for e in placed if e is not first))
    if len(behind) == 1:
        return _Decision("named", "", behind[0], "position in the loop", ahead)
    first, why = _by_clock(behind, policy)
    if first is None:
        names = ", ".join(e.record.process for e in behind)
        return _Decision("undecided", f"{names} are at the same place, behind the others, and {why}")
    return _Decision("named", "", first, "clocks", ahead)


def analyze(
    snapshots: list[Snapshot], policy: ClockPolicy, *, expected_ranks: set[int], never_entered: list[int]
) -> HangsRecord | None:
    """The hung ranks, or ``None`` when no snapshot states where its process was."""
    latest, ended = _latest(snapshots)
    if not latest:
        return None
    entries = [_entry(snap, at, ended.get(key)) for key, (snap, at) in sorted(latest.items())]
    entries.sort(key=lambda e: (e.record.rank is None, e.record.rank or 0, e.record.process))
    notes: list[str] = []
    seen = {e.record.rank for e in entries if e.record.rank is not None}
    expected = set(expected_ranks) | {r for s in snapshots if s.rank_count for r in range(s.rank_count)}
    missing = sorted(expected - seen) if seen else []  # ranks are matched only where snapshots state them
    missing_text = tuple(f"rank {r}: no hang, termination or on-request snapshot" for r in missing)
    if any(e.record.rank is None for e in entries) and len(entries) > 1:
        notes.append("some snapshots carry no rank (RANK unset): they are told apart by host and pid")
    if len(entries) == 1 and not missing:
        e = entries[0]
        return HangsRecord(
            verdict="one process",
            reason=f"one process's snapshot ({where(e.record)}); which rank stopped first needs every rank's",
            ranks=(e.record,),
        )
    decision = _decide(entries, policy)
    if missing:
        if decision.first is not None:
            notes.append(
                f"among the ranks with a snapshot, {decision.first.record.process} is behind ({decision.decided_by})"
            )
        decision = _Decision(
            "undecided",
            f"no snapshot for rank{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))}: the rank that "
            "stopped first may be among them",
        )
    first = decision.first
    if first is not None and never_entered:
        notes.append(_dumps_agree(first.record.rank, never_entered))
    ranks, notes_out = tuple(e.record for e in entries), tuple(notes)
    if first is None:
        return HangsRecord(
            verdict="undecided", missing=missing_text, reason=decision.reason, ranks=ranks, notes=notes_out
        )
    return HangsRecord(
        verdict="named",
        first_stopped=first.record.process,
        first_stopped_rank=first.record.rank,
        decided_by=decision.decided_by,
        waiting=tuple(e.record.process for e in decision.waiting),
        missing=missing_text,
        reason=decision.reason,
        ranks=ranks,
        notes=notes_out,
    )


def _dumps_agree(rank: int | None, never_entered: list[int]) -> str:
    """Whether the flight-recorder dumps name the same rank as the one the snapshots show stopped first."""
    if rank in never_entered:
        return "the flight-recorder dumps agree: it never entered the collective its peers wait on"
    return (
        f"the flight-recorder dumps name rank(s) {', '.join(map(str, never_entered))} as never entering the "
        "collective its peers wait on, not this rank"
    )


def place(r: RankHang, *, timed: bool = False) -> str:
    """Where in the loop a rank is: its open step and phase (how long each has been open)."""
    if r.step is None:
        return f"between steps, after step {r.last_closed_step}" if r.last_closed_step is not None else "no step open"
    step = f"step {r.step}" + (f" open {r.open_s:.1f} s" if timed and r.open_s is not None else "")
    if not r.phase:
        return step + ", no phase open"
    phase_open = f" open {r.phase_open_s:.1f} s" if timed and r.phase_open_s is not None else ""
    return f"{step}, phase {r.phase}{phase_open}"


def where(r: RankHang) -> str:
    """A rank's place with its innermost workload frame, for observations and the rendering."""
    return place(r, timed=True) + (f", in {r.frame}" if r.frame else "")
