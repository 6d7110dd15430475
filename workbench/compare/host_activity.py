"""What the host was doing in a slow window against a normal one, from a flight recorder's
host tables (``workbench.importers._host_sections``): sampled stacks, CPU and memory, GC.

- Moved frames: the share of stack samples in which a function is the innermost Python
  frame (``self``) or anywhere on the stack (``total``), slow window against normal, the
  frames that gained most first. Samples are counts of sampling instants, not timings;
  a frame that gained is an observation, not a cause.
- CPU and memory around the trigger: process CPU time, RSS, page faults and context
  switches over the slow spans against the seconds before them, and each thread's CPU.
- GC pauses that overlap the slow spans, against their share of the normal spans.

The slow window is the run's spans at or above the trigger's threshold (an incident
snapshot states it); the normal window is every other span (``within_run``), or the
baseline's spans when two sides are inspected (``between``).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from msgspec import UNSET, UnsetType

from lenses import builtin_lens
from store.records import SAMPLES, RunRecord
from workbench.numbers import count, mib, share
from workbench.compare.results import Result
from workbench.textsafe import clean

THREADS, FRAMES, STACKS, STACK_SAMPLES, CPU, GC = (
    "host_threads",
    "host_frames",
    "host_stacks",
    "host_stack_samples",
    "host_cpu",
    "host_gc",
)
BEFORE_S = 5.0  # the normal stretch the CPU figures compare the slow spans against
WIDTH = 80


class MovedFrame(Result, frozen=True, kw_only=True):
    function: str
    file: str
    line: int
    slow_self: float  # share of the slow window's samples with this as the innermost frame
    normal_self: float
    slow_total: float  # share with this frame anywhere on the stack
    normal_total: float
    gain: float  # slow_self - normal_self, in shares (0.25 = 25 points)


class CpuStretch(Result, frozen=True, kw_only=True):
    """Process counters over one stretch (changes between the ticks that bracket it)."""

    name: str  # "slow spans" or "before"
    seconds: float
    cpu_user_s: float | None
    cpu_sys_s: float | None
    cpu_cores: float | None  # (user + sys) / seconds: 1.0 = one core busy throughout
    rss_start_bytes: float | None
    rss_end_bytes: float | None
    minor_faults: float | None
    major_faults: float | None
    voluntary_switches: float | None
    involuntary_switches: float | None
    threads: dict[str, float] = {}  # thread name -> CPU seconds in the stretch (clock-tick resolution)


class GcOverlap(Result, frozen=True, kw_only=True):
    slow_ms: float  # total duration of the slow spans
    pauses: int  # GC pauses overlapping them
    pause_ms: float  # the overlap
    generations: dict[str, int] = {}
    normal_ms: float | None = None
    normal_pause_ms: float | None = None


class HostReport(Result, frozen=True, kw_only=True):
    """The host side of a slow window against a normal one (descriptive only)."""

    slow: str  # what the slow window is
    normal: str
    slow_samples: int
    normal_samples: int
    moved: tuple[MovedFrame, ...] = ()
    cpu: tuple[CpuStretch, ...] = ()
    gc: GcOverlap | UnsetType = UNSET
    notes: tuple[str, ...] = ()


@dataclass
class _Host:
    """One run's host tables, decoded."""

    run: RunRecord
    frames: list[tuple[str, str, int]]
    stacks: list[list[int]]  # frame ids, innermost first
    t: np.ndarray
    stack: np.ndarray
    threads: list[str]

    @classmethod
    def of(cls, run: RunRecord) -> _Host | None:
        tables = run.tables
        if STACK_SAMPLES not in tables or FRAMES not in tables or STACKS not in tables:
            return None
        fr = tables[FRAMES]
        frames = [
            (str(f), str(p), int(ln))
            for f, p, ln in zip(fr["function"].tolist(), fr["file"].tolist(), fr["line"].tolist())
        ]
        st = tables[STACKS]
        n_stacks = int(st["stack"].max()) + 1 if len(st["stack"]) else 0
        stacks: list[list[int]] = [[] for _ in range(n_stacks)]
        for s, f in zip(st["stack"].astype(int).tolist(), st["frame"].astype(int).tolist()):
            stacks[s].append(f)  # rows are in depth order
        names = [str(n) for n in tables.get(THREADS, {}).get("name", np.array([])).tolist()]
        ss = tables[STACK_SAMPLES]
        return cls(run, frames, stacks, ss["t"], ss["stack"].astype(int), names)

    def profile(self, mask: np.ndarray) -> tuple[Counter[tuple[str, str, int]], Counter[tuple[str, str, int]], int]:
        """Counts of (self, total) per frame over the samples ``mask`` selects."""
        own: Counter[tuple[str, str, int]] = Counter()
        total: Counter[tuple[str, str, int]] = Counter()
        per_stack = np.bincount(self.stack[mask], minlength=len(self.stacks))
        for sid in np.flatnonzero(per_stack).tolist():
            n = int(per_stack[sid])
            ids = self.stacks[sid] if sid < len(self.stacks) else []
            if not ids:
                continue
            own[self.frames[ids[0]]] += n
            for key in {self.frames[f] for f in ids}:
                total[key] += n
        return own, total, int(mask.sum())


def has_host(run: RunRecord) -> bool:
    return STACK_SAMPLES in run.tables or CPU in run.tables or GC in run.tables


def slow_spans(run: RunRecord) -> tuple[np.ndarray, np.ndarray, float | None]:
    """(starts, ends) in epoch seconds of every span and the trigger's threshold (ms)."""
    samples = run.tables.get(SAMPLES, {})
    start = samples.get("started_at")
    column = builtin_lens(run.lens).span_column  # a step's or a request's time: the lens says which
    dur = samples.get(column) if column else None
    threshold = run.window.get("threshold_ms")
    if threshold is None:
        trig = (run.meta.get("extra") or {}).get("trigger")
        threshold = trig.get("threshold_ms") if isinstance(trig, dict) else None
    threshold = float(threshold) if isinstance(threshold, (int, float)) and math.isfinite(threshold) else None
    if start is None or dur is None:
        return np.empty(0), np.empty(0), threshold
    ok = np.isfinite(start) & np.isfinite(dur)
    return start[ok], start[ok] + dur[ok] / 1e3, threshold


def _inside(t: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    if not len(starts):
        return np.zeros(len(t), dtype=bool)
    order = np.argsort(starts)
    s, e = starts[order], ends[order]
    i = np.searchsorted(s, t, side="right") - 1
    return (i >= 0) & (t <= e[np.clip(i, 0, None)])


def _split(run: RunRecord) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float | None]:
    """(slow starts, slow ends, normal starts, normal ends, threshold)."""
    starts, ends, threshold = slow_spans(run)
    slow = (ends - starts) * 1e3 >= threshold if threshold is not None else np.zeros(len(starts), dtype=bool)
    return starts[slow], ends[slow], starts[~slow], ends[~slow], threshold


def _moved(
    slow: list[tuple[_Host, np.ndarray]], normal: list[tuple[_Host, np.ndarray]], top: int
) -> tuple[list[MovedFrame], int, int]:
    def pooled(parts: list[tuple[_Host, np.ndarray]]) -> tuple[Counter, Counter, int]:
        own: Counter = Counter()
        total: Counter = Counter()
        n = 0
        for host, mask in parts:
            o, t, k = host.profile(mask)
            own.update(o)
            total.update(t)
            n += k
        return own, total, n

    s_own, s_tot, n_s = pooled(slow)
    n_own, n_tot, n_n = pooled(normal)
    if not n_s:
        return [], n_s, n_n
    rows = []
    for key in set(s_own) | set(s_tot):
        so, no = s_own[key] / n_s, (n_own[key] / n_n if n_n else 0.0)
        st, nt = s_tot[key] / n_s, (n_tot[key] / n_n if n_n else 0.0)
        if so - no > 0 or st - nt > 0:
            rows.append(
                MovedFrame(
                    function=key[0],
                    file=key[1],
                    line=key[2],
                    slow_self=so,
                    normal_self=no,
                    slow_total=st,
                    normal_total=nt,
                    gain=so - no,
                )
            )
    rows.sort(key=lambda m: (-m.gain, -(m.slow_total - m.normal_total), m.function))
    return rows[:top], n_s, n_n


def _stretch(run: RunRecord, name: str, t0: float, t1: float) -> CpuStretch | None:
    cpu = run.tables.get(CPU)
    if cpu is None or t1 <= t0:
        return None
    t, thread = cpu["t"], cpu["thread"]
    proc = np.flatnonzero(thread == -1)
    if len(proc) < 2:
        return None
    pt = t[proc]
    # The ticks that bracket the stretch: the last at or before t0, the first at or after t1.
    a = proc[max(0, int(np.searchsorted(pt, t0, side="right")) - 1)]
    b = proc[min(len(proc) - 1, int(np.searchsorted(pt, t1, side="left")))]
    if b == a:
        return None
    seconds = float(t[b] - t[a])

    def delta(col: str) -> float | None:
        if col not in cpu:
            return None
        v = float(cpu[col][b] - cpu[col][a])
        return v if math.isfinite(v) else None

    def at(col: str, i: int) -> float | None:
        v = float(cpu[col][i]) if col in cpu else math.nan
        return v if math.isfinite(v) else None

    user, sys_ = delta("cpu_user_s"), delta("cpu_sys_s")
    cores = (user + sys_) / seconds if user is not None and sys_ is not None and seconds > 0 else None
    names = [str(n) for n in run.tables.get(THREADS, {}).get("name", np.array([])).tolist()]
    threads: dict[str, float] = {}
    for slot in sorted(set(thread[thread >= 0].astype(int).tolist())):
        rows = np.flatnonzero(thread == slot)
        rt = t[rows]
        ra = rows[np.clip(np.searchsorted(rt, t[a], side="left"), 0, len(rows) - 1)]
        rb = rows[np.clip(np.searchsorted(rt, t[b], side="left"), 0, len(rows) - 1)]
        if ra != rb and t[ra] == t[a] and t[rb] == t[b]:
            used = float(cpu["cpu_user_s"][rb] - cpu["cpu_user_s"][ra] + cpu["cpu_sys_s"][rb] - cpu["cpu_sys_s"][ra])
            if math.isfinite(used):
                threads[names[slot] if slot < len(names) else f"thread {slot}"] = round(used, 3)
    return CpuStretch(
        name=name,
        seconds=seconds,
        cpu_user_s=user,
        cpu_sys_s=sys_,
        cpu_cores=cores,
        rss_start_bytes=at("rss_bytes", a),
        rss_end_bytes=at("rss_bytes", b),
        minor_faults=delta("minor_faults"),
        major_faults=delta("major_faults"),
        voluntary_switches=delta("voluntary_switches"),
        involuntary_switches=delta("involuntary_switches"),
        threads=threads,
    )


def _cpu(run: RunRecord, slow_s: np.ndarray, slow_e: np.ndarray) -> list[CpuStretch]:
    if not len(slow_s):
        return []
    t0, t1 = float(slow_s.min()), float(slow_e.max())
    out = [
        s for s in (_stretch(run, "slow spans", t0, t1), _stretch(run, "before", t0 - BEFORE_S, t0)) if s is not None
    ]
    return out


def _overlap(gs: np.ndarray, ge: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[int, float, np.ndarray]:
    hit = np.zeros(len(gs), dtype=bool)
    total = 0.0
    for s, e in zip(starts.tolist(), ends.tolist()):
        o = np.clip(np.minimum(ge, e) - np.maximum(gs, s), 0, None)
        hit |= o > 0
        total += float(o.sum())
    return int(hit.sum()), total * 1e3, hit


def _gc(
    run: RunRecord, slow_s: np.ndarray, slow_e: np.ndarray, norm_s: np.ndarray, norm_e: np.ndarray
) -> GcOverlap | None:
    gc = run.tables.get(GC)
    if gc is None or not len(slow_s):
        return None
    gs = gc["start"]
    ge = gs + gc["duration_ms"] / 1e3
    n, ms, hit = _overlap(gs, ge, slow_s, slow_e)
    gens = Counter(str(int(g)) for g in gc["generation"][hit].tolist() if math.isfinite(g))
    normal_ms = float((norm_e - norm_s).sum() * 1e3) if len(norm_s) else None
    normal_pause = _overlap(gs, ge, norm_s, norm_e)[1] if len(norm_s) else None
    return GcOverlap(
        slow_ms=float((slow_e - slow_s).sum() * 1e3),
        pauses=n,
        pause_ms=ms,
        generations=dict(sorted(gens.items())),
        normal_ms=normal_ms,
        normal_pause_ms=normal_pause,
    )


def within_run(run: RunRecord, *, top: int = 5) -> HostReport | None:
    """A recorder capture's slow spans against its other spans (``wb show``)."""
    if not has_host(run):
        return None
    slow_s, slow_e, norm_s, norm_e, threshold = _split(run)
    notes = []
    host = _Host.of(run)
    moved: list[MovedFrame] = []
    n_s = n_n = 0
    if host is not None:
        if len(slow_s):
            moved, n_s, n_n = _moved(
                [(host, _inside(host.t, slow_s, slow_e))], [(host, _inside(host.t, norm_s, norm_e))], top
            )
        else:
            moved, n_s, n_n = _moved([(host, _inside(host.t, norm_s, norm_e))], [], top)
    if threshold is None:
        notes.append("no trigger threshold in this run: the hottest frames of all its spans, no slow window")
        slow_name, normal_name = "all spans", "none"
    elif not len(slow_s):
        notes.append(f"no span at or above the threshold ({threshold:g} ms): the hottest frames of all its spans")
        slow_name, normal_name = "all spans", "none"
    else:
        slow_name = f"{len(slow_s)} span(s) at or above {threshold:g} ms"
        normal_name = f"the other {len(norm_s)} span(s) of this run"
    gc = _gc(run, slow_s, slow_e, norm_s, norm_e)
    return HostReport(
        slow=slow_name,
        normal=normal_name,
        slow_samples=n_s,
        normal_samples=n_n,
        moved=tuple(moved),
        cpu=tuple(_cpu(run, slow_s, slow_e)),
        gc=gc if gc is not None else UNSET,
        notes=tuple(notes + _sampler_notes([run])),
    )


def between(baseline: Sequence[RunRecord], candidate: Sequence[RunRecord], *, top: int = 5) -> HostReport | None:
    """The candidate's slow spans (all its spans, without a trigger) against the baseline's
    spans (``wb inspect``); CPU and GC around the candidate's trigger."""
    if not any(has_host(r) for r in candidate):
        return None
    slow_parts, normal_parts = [], []
    n_slow_spans = 0
    cpu: list[CpuStretch] = []
    gc_runs = []
    for run in candidate:
        slow_s, slow_e, norm_s, norm_e, _ = _split(run)
        if not len(slow_s):
            slow_s, slow_e = norm_s, norm_e
        n_slow_spans += len(slow_s)
        host = _Host.of(run)
        if host is not None:
            slow_parts.append((host, _inside(host.t, slow_s, slow_e)))
        cpu += _cpu(run, slow_s, slow_e) if len(candidate) == 1 else []
        if (g := _gc(run, slow_s, slow_e, norm_s, norm_e)) is not None:
            gc_runs.append(g)
    for run in baseline:
        host = _Host.of(run)
        if host is not None:
            starts, ends, _ = slow_spans(run)
            normal_parts.append((host, _inside(host.t, starts, ends)))
    moved, n_s, n_n = _moved(slow_parts, normal_parts, top)
    notes = []
    if not normal_parts:
        notes.append("the baseline has no sampled stacks: shares of the candidate alone")
    gc = None
    if gc_runs:
        gc = GcOverlap(
            slow_ms=sum(g.slow_ms for g in gc_runs),
            pauses=sum(g.pauses for g in gc_runs),
            pause_ms=sum(g.pause_ms for g in gc_runs),
            generations=dict(sorted(sum((Counter(g.generations) for g in gc_runs), Counter()).items())),
        )
    return HostReport(
        slow=f"candidate: {n_slow_spans} slow span(s)",
        normal=f"baseline: {len(baseline)} run(s), all spans",
        slow_samples=n_s,
        normal_samples=n_n,
        moved=tuple(moved),
        cpu=tuple(cpu),
        gc=gc if gc is not None else UNSET,
        notes=tuple(notes + _sampler_notes([*baseline, *candidate])),
    )


def _sampler_notes(runs: Sequence[RunRecord]) -> list[str]:
    out = []
    for run in runs:
        stacks = (run.meta.get("host") or {}).get("stacks") or {}
        dropped = stacks.get("dropped") or {}
        lost = {k: v for k, v in dropped.items() if k != "outside_window" and isinstance(v, int) and v}
        if lost:
            out.append(
                f"run {run.id if run.id is not None else run.label}: dropped to stay in budget: "
                + ", ".join(f"{k} {v:,}" for k, v in sorted(lost.items()))
            )
    return out


# --------------------------------------------------------------------------- text


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def render_host(report: HostReport, *, width: int = WIDTH, top: int = 5) -> list[str]:
    """Plain lines, at most ``width`` columns (capture strings made safe; the caller
    escapes markup where it prints through Rich)."""
    lines = [
        "host (flight recorder; observation, not cause)",
        _fit(f"  slow window: {clean(report.slow)} ({report.slow_samples:,} stack samples)", width),
        _fit(f"  normal: {clean(report.normal)} ({report.normal_samples:,} samples)", width),
    ]
    if report.moved:
        header = (
            "  frames that gained most samples  self: slow/normal  on stack"
            if report.normal_samples
            else "  hottest frames (no normal window)   self: slow/normal  on stack"
        )
        lines.append(_fit(header, width))
        for m in report.moved[:top]:
            where = f"{clean(m.function)} ({clean(m.file).rsplit('/', 1)[-1]}:{m.line})"
            self_, total = (
                f"{share(m.slow_self):>4}/{share(m.normal_self):<4}",
                f"{share(m.slow_total):>4}/{share(m.normal_total):<4}",
            )
            tail = f" {self_} {total}"
            lines.append(_fit(f"    {where}", width - len(tail)).ljust(width - len(tail)) + tail)
    elif report.slow_samples == 0:
        lines.append("  no stack samples in the slow window")
    for c in report.cpu:
        lines.append(
            _fit(
                f"  cpu {c.name} ({c.seconds:.2f} s): {('unknown' if c.cpu_cores is None else f'{c.cpu_cores:.2f}')} "
                f"cores, "
                f"rss {mib(c.rss_start_bytes)} -> {mib(c.rss_end_bytes)}",
                width,
            )
        )
        lines.append(
            _fit(
                f"    faults {count(c.minor_faults)} minor, {count(c.major_faults)} major; switches "
                f"{count(c.voluntary_switches)} voluntary, {count(c.involuntary_switches)} involuntary",
                width,
            )
        )
        if c.threads:
            lines.append(
                _fit(
                    "    threads: "
                    + ", ".join(
                        f"{clean(k)} {v:.2f} s" for k, v in sorted(c.threads.items(), key=lambda kv: -kv[1])[:4]
                    ),
                    width,
                )
            )
    if report.gc is not UNSET:
        g = report.gc
        paused = g.pause_ms / g.slow_ms if g.slow_ms else None
        line = (
            f"  gc: {g.pauses} pause(s) overlap the slow spans, {g.pause_ms:,.1f} ms of {g.slow_ms:,.1f} ms "
            f"({share(paused)})"
        )
        lines.append(_fit(line, width))
        if g.normal_ms:
            lines.append(
                _fit(
                    f"    normal spans: {g.normal_pause_ms or 0:,.1f} ms of {g.normal_ms:,.1f} ms "
                    f"({share((g.normal_pause_ms or 0) / g.normal_ms)})",
                    width,
                )
            )
        if g.generations:
            lines.append(
                _fit("    generations: " + ", ".join(f"gen {k}: {v}" for k, v in g.generations.items()), width)
            )
    for note in report.notes:
        lines.append(_fit(f"  note: {clean(note)}", width))
    return lines
