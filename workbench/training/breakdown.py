"""Per-step breakdown of one rank, on one clock.

A step's window is its ``ProfilerStep#N`` range on the host clock (GPU activity in
Kineto and Nsight Systems is on that same clock); a trace without step markers takes
its iterations from optimizer-step or data-loader annotations (``iterations``). Within it the wall time is split
into exposed phases that add up to the step time, claimed in this order so that no
instant is counted twice:

    compute        GPU busy with a non-communication kernel
    communication  a collective running with no compute kernel alongside (exposed)
    checkpoint     host inside a checkpoint-save range, GPU not computing/communicating
    input          host waiting on the data loader, none of the above (exposed input)
    memcpy         only a copy or memset running
    other          the rest (GPU idle for any other reason)

Beside them, kept apart and never added: the four timing measures (wall ``step_ms``,
summed kernel time, GPU busy time = union across streams, host API time = union of
CUDA runtime/driver calls), communication overlapped with compute, the host's total
data-loader wait, and idle attributed to late host submission.

A column the trace cannot speak to is NaN (unknown): input and checkpoint when the
trace has no such annotations, host API and host submission without runtime events.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.training import span_sets as iv
from workbench.training import iterations as it
from workbench.training import model as m

NS_PER_MS = 1e6

# Samples columns, in display order. The first seven are the native training columns.
SAMPLE_COLUMNS = (
    "step",
    "rank",
    "step_ms",
    "input_ms",
    "compute_ms",
    "communication_ms",
    "checkpoint_ms",
    "communication_overlapped_ms",
    "memcpy_ms",
    "other_ms",
    "gpu_busy_ms",
    "idle_ms",
    "kernel_sum_ms",
    "host_api_ms",
    "input_wait_ms",
    "host_submission_ms",
    "idle_unresolved_ms",
    "step_start_ms",
)


@dataclass
class Windows:
    numbers: np.ndarray  # float64 step numbers (NaN: the whole trace, no steps)
    starts: np.ndarray  # int64 ns
    ends: np.ndarray
    boundary: str = it.MARKER  # what the windows come from: iterations.MARKER, OPTIMIZER, LOADER or NONE


def step_windows(trace: m.RankTrace) -> Windows:
    """Sorted, disjoint step windows: the format's step markers, else the iterations that
    optimizer-step or data-loader annotations mark, else the whole trace as one window."""
    steps = trace.steps
    if len(steps["start"]) == 0:
        found = it.infer(trace)
        if found is not None:
            numbers = np.arange(1, len(found.starts) + 1, dtype=np.float64)
            return Windows(numbers, found.starts, found.ends, found.boundary)
        span = trace.span
        if span is None:
            return Windows(np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64), it.NONE)
        return Windows(np.array([np.nan]), np.array([span[0]], np.int64), np.array([span[1]], np.int64), it.NONE)
    order = np.lexsort((steps["number"], steps["start"]))
    numbers, starts, ends = steps["number"][order], steps["start"][order], steps["end"][order]
    # The same step recorded twice (a CPU and an annotation copy) is one step.
    keep = np.ones(len(numbers), dtype=bool)
    keep[1:] = (numbers[1:] != numbers[:-1]) | (starts[1:] != starts[:-1])
    numbers, starts, ends = numbers[keep], starts[keep], ends[keep]
    # Windows must not overlap: a step ends at the latest where the next one begins.
    ends = ends.copy()
    ends[:-1] = np.minimum(ends[:-1], starts[1:])
    return Windows(numbers.astype(np.float64), starts, ends)


def _lengths(u: iv.Union, w: Windows) -> np.ndarray:
    return iv.union_window_lengths(u, w.starts, w.ends)


def rank_samples(trace: m.RankTrace, w: Windows, origin_ns: int) -> dict[str, np.ndarray]:
    """The samples columns for one rank, one row per window."""
    n = len(w.starts)
    gpu = trace.gpu
    kind = gpu["kind"]
    has_gpu = len(kind) > 0
    compute = iv.union(gpu["start"][kind == m.KERNEL], gpu["end"][kind == m.KERNEL])
    comm = iv.union(gpu["start"][kind == m.COLLECTIVE], gpu["end"][kind == m.COLLECTIVE])
    copies = (kind == m.MEMCPY) | (kind == m.MEMSET)
    busy = iv.union(gpu["start"], gpu["end"])
    loader = iv.union(trace.loader["start"], trace.loader["end"])
    ckpt = iv.union(trace.checkpoint["start"], trace.checkpoint["end"])
    c_m = iv.union_of(compute, comm)
    c_m_k = iv.union_of(c_m, ckpt)
    c_m_k_l = iv.union_of(c_m_k, loader)
    everything = iv.union_of(c_m_k_l, iv.union(gpu["start"][copies], gpu["end"][copies]))

    step_ns = (w.ends - w.starts).astype(np.float64)
    len_c, len_m, len_cm = _lengths(compute, w), _lengths(comm, w), _lengths(c_m, w)
    len_cmk, len_cmkl, len_all = _lengths(c_m_k, w), _lengths(c_m_k_l, w), _lengths(everything, w)
    len_busy = _lengths(busy, w)
    unknown = np.full(n, np.nan)
    gpu_or_nan = (lambda x: x) if has_gpu else (lambda x: unknown.copy())

    kernels = (kind == m.KERNEL) | (kind == m.COLLECTIVE)
    kernel_sum = iv.window_lengths(gpu["start"][kernels], gpu["end"][kernels], w.starts, w.ends)

    if trace.has_host_api:
        host_api = _lengths(iv.union(trace.runtime["start"], trace.runtime["end"]), w)
    else:
        host_api = unknown.copy()
    submission, unresolved = _idle_attribution(trace, busy, iv.union_of(loader, ckpt), w)

    cols = {
        "step": w.numbers.astype(np.float64),
        "rank": np.full(n, np.nan if trace.rank is None else float(trace.rank)),
        "step_ms": step_ns / NS_PER_MS,
        "input_ms": (len_cmkl - len_cmk) / NS_PER_MS if trace.has_loader_annotations else unknown.copy(),
        "compute_ms": gpu_or_nan(len_c / NS_PER_MS),
        "communication_ms": gpu_or_nan((len_cm - len_c) / NS_PER_MS),
        "checkpoint_ms": (len_cmk - len_cm) / NS_PER_MS if trace.has_checkpoint_annotations else unknown.copy(),
        "communication_overlapped_ms": gpu_or_nan((len_c + len_m - len_cm) / NS_PER_MS),
        "memcpy_ms": gpu_or_nan((len_all - len_cmkl) / NS_PER_MS),
        "other_ms": gpu_or_nan((step_ns - len_all) / NS_PER_MS),
        "gpu_busy_ms": gpu_or_nan(len_busy / NS_PER_MS),
        "idle_ms": gpu_or_nan((step_ns - len_busy) / NS_PER_MS),
        "kernel_sum_ms": gpu_or_nan(kernel_sum / NS_PER_MS),
        "host_api_ms": host_api / NS_PER_MS,
        "input_wait_ms": _lengths(loader, w) / NS_PER_MS if trace.has_loader_annotations else unknown.copy(),
        "host_submission_ms": gpu_or_nan(submission / NS_PER_MS),
        "idle_unresolved_ms": gpu_or_nan(unresolved / NS_PER_MS),
        "step_start_ms": (w.starts - origin_ns).astype(np.float64) / NS_PER_MS,
    }
    return cols


def _idle_attribution(
    trace: m.RankTrace, busy: iv.Union, explained: iv.Union, w: Windows
) -> tuple[np.ndarray, np.ndarray]:
    """Idle gaps ended by a kernel whose launch call began only after the GPU went idle.

    The gap's closing GPU activity is matched to its launching runtime call through the
    correlation id. Gaps whose activity has no correlation id, or whose launch call is
    not in the trace, are left unresolved rather than guessed. Time already explained
    by a data-loader wait or a checkpoint is not counted again.
    Returns (host submission ns, unresolved ns) per window; host submission is NaN
    when the trace has no runtime events at all.
    """
    n = len(w.starts)
    gap_start, gap_end, nxt = iv.gaps(busy)
    if len(gap_start) == 0:
        zeros = np.zeros(n)
        return (zeros if trace.has_host_api else np.full(n, np.nan)), zeros.copy()
    event = busy.first[nxt]
    corr = trace.gpu["correlation"][event]
    rt_corr = trace.runtime["correlation"]
    late = np.zeros(len(event), dtype=bool)
    resolved = np.zeros(len(event), dtype=bool)
    if len(rt_corr):
        order = np.argsort(rt_corr, kind="stable")
        sorted_corr = rt_corr[order]
        pos = np.searchsorted(sorted_corr, corr)
        pos_c = np.minimum(pos, len(sorted_corr) - 1)
        found = (corr >= 0) & (sorted_corr[pos_c] == corr)
        launch_start = trace.runtime["start"][order[pos_c]]
        resolved = found
        late = found & (launch_start >= gap_start)
    host_gaps = iv.union(gap_start[late], gap_end[late])
    submission = _lengths(iv.union_of(host_gaps, explained), w) - _lengths(explained, w)
    unresolved = iv.window_lengths(gap_start[~resolved], gap_end[~resolved], w.starts, w.ends)
    if not trace.has_host_api:
        submission = np.full(n, np.nan)
    return submission, unresolved


def launch_steps(trace: m.RankTrace, w: Windows) -> np.ndarray:
    """For each GPU activity, the window index of its launch (by correlation), else of its start; -1 outside."""
    gpu = trace.gpu
    when = gpu["start"].copy()
    rt_corr = trace.runtime["correlation"]
    if len(rt_corr) and len(when):
        order = np.argsort(rt_corr, kind="stable")
        sorted_corr = rt_corr[order]
        pos = np.minimum(np.searchsorted(sorted_corr, gpu["correlation"]), len(sorted_corr) - 1)
        found = (gpu["correlation"] >= 0) & (sorted_corr[pos] == gpu["correlation"])
        when[found] = trace.runtime["start"][order[pos[found]]]
    return window_index(when, w)


def window_index(t: np.ndarray, w: Windows) -> np.ndarray:
    idx = np.searchsorted(w.starts, t, side="right") - 1
    inside = (idx >= 0) & (t < w.ends[np.maximum(idx, 0)])
    return np.where(inside, idx, -1)


def _launch_calls(trace: m.RankTrace, graphs: bool = False) -> np.ndarray:
    """Which runtime calls launch kernels (cudaLaunchKernel*, cuLaunchKernel*, ...; with
    ``graphs`` only the CUDA-graph launches: cudaGraphLaunch, cuGraphLaunch)."""
    words = ("GraphLaunch",) if graphs else ("LaunchKernel", "GraphLaunch")
    ids = np.array([i for i, name in enumerate(trace.names) if any(w in name for w in words)], dtype=np.int32)
    return np.isin(trace.runtime["name"], ids)


def unmatched_launches(trace: m.RankTrace, w: Windows) -> np.ndarray:
    """Per window, kernel and CUDA-graph launch calls with no kernel in the trace: the trace
    was cut short (the last window only), or it under-records kernels (graph replays)."""
    rt = trace.runtime
    if len(rt["start"]) == 0 or len(w.starts) == 0:
        return np.zeros(len(w.starts), dtype=np.int64)
    is_launch = _launch_calls(trace) & (rt["correlation"] >= 0)
    missing = is_launch & ~np.isin(rt["correlation"], trace.gpu["correlation"])
    idx = window_index(rt["start"][missing], w)
    idx = idx[idx >= 0]
    return np.bincount(idx, minlength=len(w.starts))


def launch_coverage(trace: m.RankTrace) -> dict[str, float]:
    """Launch calls against the kernels recorded: ``launches`` (kernel and graph launch
    calls), ``graph_launches``, ``kernels`` (kernels and collectives in the trace) and
    ``unmatched`` (launch calls whose correlation id no recorded activity carries)."""
    rt = trace.runtime
    launches = _launch_calls(trace)
    kinds = trace.gpu["kind"]
    missing = launches & (rt["correlation"] >= 0) & ~np.isin(rt["correlation"], trace.gpu["correlation"])
    return {
        "launches": float(np.count_nonzero(launches)),
        "graph_launches": float(np.count_nonzero(_launch_calls(trace, graphs=True))),
        "kernels": float(np.count_nonzero((kinds == m.KERNEL) | (kinds == m.COLLECTIVE))),
        "unmatched": float(np.count_nonzero(missing)),
    }


OP_KINDS = ("kernel", "collective", "memcpy", "op")


def rank_operations(trace: m.RankTrace, w: Windows) -> dict[str, np.ndarray]:
    """Per-step counts and total time of each kernel, collective, copy and CPU operator, by name.

    GPU activities belong to the step that launched them (correlation id), CPU
    operators to the step they start in; times are inclusive (a parent op's time
    includes its children's), as in the profiler's own tables.
    """
    gpu = trace.gpu
    gpu_kind = np.where(gpu["kind"] == m.KERNEL, 0, np.where(gpu["kind"] == m.COLLECTIVE, 1, 2)).astype(np.int64)
    names = np.concatenate([gpu["name"], trace.ops["name"]]).astype(np.int64)
    kinds = np.concatenate([gpu_kind, np.full(len(trace.ops["name"]), 3, dtype=np.int64)])
    where = np.concatenate([launch_steps(trace, w), window_index(trace.ops["start"], w)]).astype(np.int64)
    dur = np.concatenate([gpu["end"] - gpu["start"], trace.ops["end"] - trace.ops["start"]]).astype(np.float64)
    keep = where >= 0
    names, kinds, where, dur = names[keep], kinds[keep], where[keep], dur[keep]
    n_win = max(len(w.starts), 1)
    key = (names * n_win + where) * 4 + kinds
    uniq, inverse = np.unique(key, return_inverse=True)
    counts = np.bincount(inverse, minlength=len(uniq)).astype(np.float64)
    totals = np.bincount(inverse, weights=dur, minlength=len(uniq)) / NS_PER_MS
    kind_of = uniq % 4
    win_of = (uniq // 4) % n_win
    name_of = uniq // 4 // n_win
    name_values = np.array(trace.names, dtype=object)
    return {
        "name": name_values[name_of].astype(str) if len(uniq) else np.zeros(0, dtype="<U1"),
        "kind": np.array(OP_KINDS, dtype=object)[kind_of].astype(str) if len(uniq) else np.zeros(0, dtype="<U1"),
        "step": w.numbers[win_of] if len(w.numbers) else np.zeros(0),
        "rank": np.full(len(uniq), np.nan if trace.rank is None else float(trace.rank)),
        "count": counts,
        "total_ms": totals,
    }
