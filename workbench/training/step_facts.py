"""What one rank's trace says about each step beyond its phases: the facts the window
classification, the measurement boundary, the clock checks, memory pressure and the
shape-aligned operations need. Computed beside the reader (``rank_summary.summarize``),
so only these small per-step arrays travel.

- ``step_facts``: per window, host time inside a checkpoint save, optimizer steps,
  backward operators and backward passes (bursts of autograd nodes separated by a
  forward pass's worth of aten operators: N under N-way gradient accumulation).
- ``host_device_clock``: each kernel's start against its launch call's start (a kernel
  cannot start before it is launched: if it does, the host and device timelines are
  not aligned).
- ``first_collectives``: the first collective kernel of each window, on the rank's clock.
- ``memory_steps``: peak allocated/reserved device memory, allocation churn and
  out-of-memory markers per window, from the caching allocator's instant events.
- ``shape_operations``: operators and kernels by (name, recorded shape) per window.
"""

from __future__ import annotations

import re

import numpy as np

from workbench.training import breakdown as bd
from workbench.training import span_sets as iv
from workbench.training import model as m

_OPTIMIZER = re.compile(r"^Optimizer\.step#")
_BACKWARD = re.compile(r"backward", re.IGNORECASE)
_POINT_TO_POINT = re.compile(r"SendRecv|(^|_)(Send|Recv)(_|$|\()", re.IGNORECASE)
_AUTOGRAD_NODE = "autograd::engine::evaluate_function: "
_ATEN = re.compile(r"^aten::")
FORWARD_OPS = 10  # aten operators between two bursts of autograd nodes that make a forward pass
# A kernel may start this long before its launch call (timestamp conversion jitter)
# before the timelines count as misaligned.
LAUNCH_TOLERANCE_NS = 10_000
MB = 1 << 20
# Operator and kernel names kept by shape, the costliest first: the summary that travels
# must stay small beside the trace (shapes are many: one per layer size and batch).
SHAPE_OPERATORS, SHAPE_KERNELS = 8, 4


def _name_mask(trace: m.RankTrace, pattern: re.Pattern[str]) -> np.ndarray:
    ids = np.array([i for i, name in enumerate(trace.names) if pattern.search(name)], dtype=np.int32)
    return np.isin(trace.ops["name"], ids)


def step_facts(trace: m.RankTrace, w: bd.Windows) -> dict[str, np.ndarray]:
    n = len(w.starts)
    ckpt = iv.union(trace.checkpoint["start"], trace.checkpoint["end"])
    where = bd.window_index(trace.ops["start"], w)
    inside = where >= 0
    optimizer = np.bincount(where[inside & _name_mask(trace, _OPTIMIZER)], minlength=n).astype(np.float64)
    backward = np.bincount(where[inside & _name_mask(trace, _BACKWARD)], minlength=n).astype(np.float64)
    passes = np.zeros(n)
    node_ids = np.array([i for i, name in enumerate(trace.names) if name.startswith(_AUTOGRAD_NODE)], dtype=np.int32)
    nodes = inside & np.isin(trace.ops["name"], node_ids)
    forward = inside & _name_mask(trace, _ATEN) & ~_name_mask(trace, _BACKWARD) & ~nodes
    for k in np.unique(where[nodes]):
        sel = nodes & (where == k)
        burst = iv.union(trace.ops["start"][sel], trace.ops["end"][sel])
        # A gap between bursts of autograd nodes that holds a forward pass's worth of operators
        # starts another backward: N-way gradient accumulation gives N bursts per step.
        gap_start, gap_end = burst.ends[:-1], burst.starts[1:]
        fwd_starts = np.sort(trace.ops["start"][forward & (where == k)])
        in_gap = np.searchsorted(fwd_starts, gap_end) - np.searchsorted(fwd_starts, gap_start, side="right")
        passes[k] = 1.0 + float(np.count_nonzero(in_gap >= FORWARD_OPS))
    has_ops = len(trace.ops["name"]) > 0
    unknown = np.full(n, np.nan)
    return {
        "checkpoint_host_ms": iv.union_window_lengths(ckpt, w.starts, w.ends) / bd.NS_PER_MS
        if trace.has_checkpoint_annotations
        else unknown.copy(),
        "optimizer_steps": optimizer if has_ops else unknown.copy(),
        "backward_ops": backward if has_ops else unknown.copy(),
        "backward_passes": passes if has_ops else unknown.copy(),
    }


def host_device_clock(trace: m.RankTrace) -> dict[str, float]:
    """Kernels matched to their launch calls: how many, how many started more than the
    tolerance before their launch, and the largest such lead (ms)."""
    gpu, rt = trace.gpu, trace.runtime
    if not len(gpu["start"]) or not len(rt["correlation"]):
        return {"matched": 0.0, "early": 0.0, "worst_lead_ms": float("nan")}
    order = np.argsort(rt["correlation"], kind="stable")
    sorted_corr = rt["correlation"][order]
    pos = np.minimum(np.searchsorted(sorted_corr, gpu["correlation"]), len(sorted_corr) - 1)
    found = (gpu["correlation"] >= 0) & (sorted_corr[pos] == gpu["correlation"])
    lead = rt["start"][order[pos[found]]] - gpu["start"][found]  # > 0: the kernel started first
    early = lead > LAUNCH_TOLERANCE_NS
    return {
        "matched": float(found.sum()),
        "early": float(early.sum()),
        "worst_lead_ms": float(lead.max()) / bd.NS_PER_MS if len(lead) else float("nan"),
    }


def first_collectives(trace: m.RankTrace, w: bd.Windows) -> dict[str, np.ndarray]:
    """Start, end (ns, the rank's clock) and name of each window's first group collective
    kernel (-1 and "": none). Point-to-point kernels (send/recv, all-to-all built from
    them) are left out: a rank may finish its part before another starts."""
    n = len(w.starts)
    start, end = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    names = np.full(n, "", dtype=object)
    p2p = np.array([i for i, name in enumerate(trace.names) if _POINT_TO_POINT.search(name)], dtype=np.int32)
    coll = (trace.gpu["kind"] == m.COLLECTIVE) & ~np.isin(trace.gpu["name"], p2p)
    if coll.any():
        idx = bd.launch_steps(trace, w)[coll]
        s, e = trace.gpu["start"][coll], trace.gpu["end"][coll]
        order = np.lexsort((s, idx))
        idx, s, e = idx[order], s[order], e[order]
        first = np.ones(len(idx), dtype=bool)
        first[1:] = idx[1:] != idx[:-1]
        first &= idx >= 0
        start[idx[first]], end[idx[first]] = s[first], e[first]
        label = np.array(trace.names, dtype=object)
        names[idx[first]] = label[trace.gpu["name"][coll][order][first]]
    return {"start": start, "end": end, "name": names.astype(str)}


def memory_steps(trace: m.RankTrace, w: bd.Windows) -> dict[str, np.ndarray] | None:
    """Per window: peak allocated and reserved (MiB), MiB allocated (churn), allocations and OOM markers."""
    mem = trace.memory
    if mem is None or not len(mem["time"]):
        return None
    n = len(w.starts)
    where = bd.window_index(mem["time"], w)
    keep = where >= 0
    idx = where[keep]
    out = {}
    for name, values in (("peak_allocated_mb", mem["allocated"]), ("peak_reserved_mb", mem["reserved"])):
        peak = np.full(n, -np.inf)
        v = values[keep]
        ok = np.isfinite(v)
        np.maximum.at(peak, idx[ok], v[ok] / MB)
        out[name] = np.where(np.isfinite(peak), peak, np.nan)
    nbytes = mem["bytes"][keep]
    alloc = np.isfinite(nbytes) & (nbytes > 0)
    out["allocated_mb"] = np.bincount(idx[alloc], weights=nbytes[alloc] / MB, minlength=n)
    out["allocations"] = np.bincount(idx[alloc], minlength=n).astype(np.float64)
    out["oom_events"] = np.bincount(idx[mem["oom"][keep]], minlength=n).astype(np.float64)
    return out


def shape_operations(trace: m.RankTrace, w: bd.Windows) -> dict[str, np.ndarray] | None:
    """Operators (by their tensor inputs' dims) and kernels (by grid and block), per window:
    count and total ms (float32: a few thousand rows travel with the rank's summary)."""
    if not trace.shapes:
        return None
    gpu, ops = trace.gpu, trace.ops
    gshape = gpu.get("shape", np.full(len(gpu["start"]), -1, np.int32))
    oshape = ops.get("shape", np.full(len(ops["start"]), -1, np.int32))
    is_kernel = (gpu["kind"] == m.KERNEL) | (gpu["kind"] == m.COLLECTIVE)
    name = np.concatenate([gpu["name"][is_kernel], ops["name"]]).astype(np.int64)
    shape = np.concatenate([gshape[is_kernel], oshape]).astype(np.int64)
    kind = np.concatenate([np.zeros(int(is_kernel.sum()), np.int64), np.ones(len(ops["name"]), np.int64)])
    where = np.concatenate([bd.launch_steps(trace, w)[is_kernel], bd.window_index(ops["start"], w)]).astype(np.int64)
    dur = np.concatenate([(gpu["end"] - gpu["start"])[is_kernel], ops["end"] - ops["start"]]).astype(np.float64)
    keep = (where >= 0) & (shape >= 0)
    if not keep.any():
        return None
    name, shape, kind, where, dur = name[keep], shape[keep], kind[keep], where[keep], dur[keep]
    # Only the costliest names of each kind: the summary must stay small beside the trace.
    costly = np.zeros(len(name), dtype=bool)
    for k, most in ((0, SHAPE_KERNELS), (1, SHAPE_OPERATORS)):
        sel = kind == k
        if sel.any():
            uniq, inv = np.unique(name[sel], return_inverse=True)
            total = np.bincount(inv, weights=dur[sel])
            top = uniq[np.argsort(-total, kind="stable")[:most]]
            costly |= sel & np.isin(name, top)
    name, shape, kind, where, dur = name[costly], shape[costly], kind[costly], where[costly], dur[costly]
    key = np.stack([name, shape, kind, where], axis=1)
    uniq, inverse = np.unique(key, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    names = np.array(trace.names, dtype=object)
    shapes = np.array(trace.shapes, dtype=object)
    return {
        "name": names[uniq[:, 0]].astype(str),
        "shape": shapes[uniq[:, 1]].astype(str),
        "kind": np.where(uniq[:, 2] == 0, "kernel", "op").astype(str),
        "step": w.numbers[uniq[:, 3]].astype(np.float32),
        "count": np.bincount(inverse, minlength=len(uniq)).astype(np.float32),
        "total_ms": (np.bincount(inverse, weights=dur, minlength=len(uniq)) / bd.NS_PER_MS).astype(np.float32),
    }
