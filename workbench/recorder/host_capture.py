"""The ``host`` section of a snapshot: stacks, CPU and memory, GC pauses, from what a
snapshot took of the host streams (runs on the writer thread)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from msgspec import UNSET

from workbench.recorder.host import HOST_FIELDS, PROCESS_METRICS
from workbench.recorder.records import CpuSection, GcSection, HostActivity, Row, StacksSection, ThreadInfo
from workbench.recorder.ring import RingView

CPU_SOURCE = "getrusage(RUSAGE_SELF) for the process, /proc/self/statm for RSS, /proc/self/task/<tid>/stat per thread"
CPU_UNITS = {
    "cpu_user_s": "s (cumulative)",
    "cpu_sys_s": "s (cumulative)",
    "minor_faults": "count (cumulative)",
    "major_faults": "count (cumulative)",
    "rss_bytes": "bytes",
    "voluntary_switches": "count (cumulative)",
    "involuntary_switches": "count (cumulative)",
}
_COUNTS = {"minor_faults", "major_faults", "rss_bytes", "voluntary_switches", "involuntary_switches"}


@dataclass
class HostTaken:
    """What one snapshot took of the host streams, by reference (or a copied length)."""

    stacks: RingView | None
    cpu: RingView | None
    gc: RingView | None
    frames: list[tuple[str, str, int]]
    stack_table: list[tuple[int, ...]]
    threads: list[tuple[str, int | None]]
    stack_hz: float | None
    host_interval_s: float | None
    max_depth: int
    gil: str
    stacks_status: str
    cpu_status: str
    ticks: int
    achieved_hz: float | None
    overruns: int
    sampler_cpu_s: float
    stack_drops: dict[str, int]
    gc_status: str
    gc_pauses_seen: int


def _num(value: float, integral: bool) -> float | int | None:
    if math.isnan(value) or math.isinf(value):
        return None  # unknown
    return int(value) if integral else value


def build_host(
    taken: HostTaken, epoch: Callable[[float], float], since_ns: float | None, rows_of: Callable[[RingView], object]
) -> HostActivity:
    """The section, keeping rows from ``since_ns`` (the snapshot's window) on; what was cut
    by the window or evicted by the budget is counted in ``dropped``."""
    threads = [
        ThreadInfo(id=i, name=name, **({} if nid is None else {"native_id": nid}))
        for i, (name, nid) in enumerate(taken.threads)
    ]
    return HostActivity(
        threads=threads,
        stacks=_stacks(taken, epoch, since_ns, rows_of),
        cpu=_cpu(taken, epoch, since_ns, rows_of),
        gc=_gc(taken, epoch, since_ns, rows_of),
    )


def _kept(
    view: RingView, rows_of: Callable[[RingView], object], since_ns: float | None
) -> tuple[list[list[float]], int]:
    rows = rows_of(view).tolist()  # type: ignore[attr-defined]
    if since_ns is None:
        return rows, 0
    kept = [r for r in rows if r[0] >= since_ns]
    return kept, len(rows) - len(kept)


def _stacks(
    taken: HostTaken, epoch: Callable[[float], float], since_ns: float | None, rows_of: Callable[[RingView], object]
) -> StacksSection:
    if taken.stacks is None:
        return StacksSection(status="off", reason="stack sampling not configured (stack_hz=None)")
    rows, cut = _kept(taken.stacks, rows_of, since_ns)
    out: list[Row] = [[epoch(t), int(thread), int(stack)] for t, thread, stack in rows]
    used = sorted({r[2] for r in out})
    # Only the stacks and frames these rows use, renumbered: a snapshot of one second
    # does not carry the whole process's intern table.
    stack_ids = {old: new for new, old in enumerate(used)}
    frame_ids: dict[int, int] = {}
    stacks = []
    for old in used:
        stacks.append([frame_ids.setdefault(f, len(frame_ids)) for f in taken.stack_table[old]])
    frames_by_new = sorted(frame_ids, key=frame_ids.__getitem__)
    frames: list[list[str | int]] = [list(taken.frames[f]) for f in frames_by_new]
    for r in out:
        r[2] = stack_ids[r[2]]
    dropped = {"evicted_rows": taken.stacks.evicted_rows, "outside_window": cut, **taken.stack_drops}
    return StacksSection(
        status=taken.stacks_status,
        rate_hz=UNSET if taken.stack_hz is None else taken.stack_hz,
        achieved_hz=UNSET if taken.achieved_hz is None else round(taken.achieved_hz, 3),
        gil=taken.gil,
        max_depth=taken.max_depth,
        frames=frames,
        stacks=stacks,
        fields=["t", "thread", "stack"],
        rows=out,
        ticks=taken.ticks,
        overruns=taken.overruns,
        sampler_cpu_s=round(taken.sampler_cpu_s, 6),
        dropped=dropped,
    )


def _cpu(
    taken: HostTaken, epoch: Callable[[float], float], since_ns: float | None, rows_of: Callable[[RingView], object]
) -> CpuSection:
    if taken.cpu is None:
        return CpuSection(status="off", reason="CPU and memory sampling not configured (host_interval_s=None)")
    # One tick before the window too, so the first interval's change is known.
    reach = None if since_ns is None or taken.host_interval_s is None else since_ns - 2e9 * taken.host_interval_s
    rows, cut = _kept(taken.cpu, rows_of, reach)
    out: list[Row] = []
    for r in rows:
        row: Row = [epoch(r[0]), int(r[1])]
        row += [_num(v, name in _COUNTS) for name, v in zip(PROCESS_METRICS, r[2:])]
        out.append(row)
    return CpuSection(
        status=taken.cpu_status,
        interval_s=taken.host_interval_s or UNSET,
        source=CPU_SOURCE,
        units=CPU_UNITS,
        fields=["t", *HOST_FIELDS[1:]],
        rows=out,
        dropped={"evicted_rows": taken.cpu.evicted_rows, "outside_window": cut},
    )


def _gc(
    taken: HostTaken, epoch: Callable[[float], float], since_ns: float | None, rows_of: Callable[[RingView], object]
) -> GcSection:
    if taken.gc is None:
        return GcSection(status="off")
    rows, cut = _kept(taken.gc, rows_of, None)
    if since_ns is not None:
        kept = [r for r in rows if r[1] >= since_ns]
        cut, rows = len(rows) - len(kept), kept
    out: list[Row] = [
        [epoch(s), round((e - s) / 1e6, 6), _num(g, True), _num(c, True), _num(u, True)] for s, e, g, c, u in rows
    ]
    return GcSection(
        status=taken.gc_status,
        fields=["start", "duration_ms", "generation", "collected", "uncollectable"],
        rows=out,
        pauses_seen=taken.gc_pauses_seen,
        dropped={"evicted_rows": taken.gc.evicted_rows, "outside_window": cut},
    )
