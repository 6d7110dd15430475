"""Findings about a baseline/candidate pair of training runs, from their tables: where host
time leads (the GPU idle for most of the step), operations aligned by name and shape, and
memory pressure against step time. Each is a ``diagnostics.Finding``: an observation, not
a cause; the compare layer renders them and decides nothing from them.

- **Host time leads** (``host_time``): when the GPU is idle for most of the step on both
  sides (idle share at least ``HOST_BOUND_IDLE``), the step is host time, and the headline
  is about host submission, host API calls and input wait, with their figures, not about
  compute. The same when host submission or exposed input wait moved more than compute
  and accounts for at least half of the step's change.
- **Shapes** (``shapes``): operators and kernels aligned by (name, shape) from the
  ``op_shapes`` tables (``record_shapes`` traces): a shape on one side only is new or gone;
  at the shapes both sides share, the time per step is compared.
- **Memory** (``memory``): peak allocated and reserved device memory per step and
  allocation churn from the ``memory`` tables; a finding when the candidate's peak rose by
  at least ``MEMORY_RISE`` together with its step time, or when either side hit an OOM.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from store.records import RunRecord
from workbench.numbers import percent
from workbench.training.op_rates import Reduced, ShapeRates, reduce_loaded
from workbench.training.step_findings import OBSERVATION, Figures, Finding, _finding

HOST_BOUND_IDLE = 0.5  # share of the step the GPU is idle: "most of the step"
SHAPE_UNCHANGED = 0.05  # relative change per step within which a shared shape is "unchanged"
MEMORY_RISE = 0.05


def _run_mean(run: RunRecord, column: str) -> float:
    """The run's mean per step of ``column`` (each step's mean over ranks); NaN when unknown."""
    s = run.tables.get("samples") or {}
    if column not in s or "step" not in s:
        return math.nan
    values = np.asarray(s[column], dtype=np.float64)
    steps = np.asarray(s["step"], dtype=np.float64)
    ok = np.isfinite(values)
    if not ok.any():
        return math.nan
    keys = np.where(np.isfinite(steps[ok]), steps[ok], -1.0)
    uniq, inv = np.unique(keys, return_inverse=True)
    return float((np.bincount(inv, weights=values[ok]) / np.bincount(inv)).mean())


def _stepless(run: RunRecord) -> bool:
    """A run whose trace had no steps: one window over the whole trace, step NaN."""
    steps = np.asarray((run.tables.get("samples") or {}).get("step", ()), dtype=np.float64)
    return bool(len(steps)) and bool(np.all(np.isnan(steps)))


class _Words:
    """How a pair's figures read: per step, or over the whole trace when neither side has steps."""

    def __init__(self, stepless: bool) -> None:
        self.per = "over the whole trace" if stepless else "per step"
        self.each = "the whole trace (no steps)" if stepless else "each step"
        self.the_step = "the trace" if stepless else "the step"


def _words(base: Sequence[RunRecord], cand: Sequence[RunRecord]) -> _Words | None:
    """The pair's words; None when one side has steps and the other none (not comparable per step)."""
    kinds = {_stepless(r) for r in [*base, *cand]}
    return None if len(kinds) > 1 else _Words(kinds == {True})


def _side(runs: Sequence[RunRecord], column: str) -> float:
    values = [v for v in (_run_mean(r, column) for r in runs) if math.isfinite(v)]
    return float(np.mean(values)) if len(values) == len(runs) and values else math.nan


_HOST_PARTS = (
    ("host_submission_ms", "host submission"),
    ("host_api_ms", "host API calls (launches and syncs)"),
    ("input_ms", "input wait"),
)
# Parts of the step's idle time (exposed), which can explain a change of the step; host API
# time is not one: a synchronizing call's time is the host waiting on the GPU.
_EXPOSED = ("host_submission_ms", "input_ms")


def host_time(base: Sequence[RunRecord], cand: Sequence[RunRecord]) -> Finding | None:
    """The headline when host time, not compute, is what the step is made of (or moved)."""
    words = _words(base, cand)
    if words is None:
        return None
    cols = ("step_ms", "idle_ms", "compute_ms", *(c for c, _ in _HOST_PARTS))
    b = {c: _side(base, c) for c in cols}
    c = {k: _side(cand, k) for k in cols}
    if not all(math.isfinite(x) and x > 0 for x in (b["step_ms"], c["step_ms"])):
        return None
    known = [(col, name) for col, name in _HOST_PARTS if math.isfinite(b[col]) and math.isfinite(c[col])]
    compute = (
        f"compute {b['compute_ms']:.2f} → {c['compute_ms']:.2f} ms"
        if math.isfinite(b["compute_ms"]) and math.isfinite(c["compute_ms"])
        else "compute unknown"
    )
    evidence = _host_evidence(b, c, known)
    return _host_bound(words, b, c, known, compute, evidence) or _host_part_moved(words, b, c, known, compute, evidence)


def _host_evidence(b: dict[str, float], c: dict[str, float], known: list[tuple[str, str]]) -> Figures:
    evidence: Figures = {
        "idle_share_baseline": b["idle_ms"] / b["step_ms"],
        "idle_share_candidate": c["idle_ms"] / c["step_ms"],
        "step_ms_baseline": b["step_ms"],
        "step_ms_candidate": c["step_ms"],
        "idle_ms_baseline": b["idle_ms"],
        "idle_ms_candidate": c["idle_ms"],
        "compute_ms_baseline": b["compute_ms"],
        "compute_ms_candidate": c["compute_ms"],
    }
    for col, _ in known:
        evidence[f"{col[:-3]}_ms_baseline"], evidence[f"{col[:-3]}_ms_candidate"] = b[col], c[col]
    return evidence


def _host_bound(
    words: _Words,
    b: dict[str, float],
    c: dict[str, float],
    known: list[tuple[str, str]],
    compute: str,
    evidence: Figures,
) -> Finding | None:
    """The GPU idle for most of the step on both sides: the step is host time."""
    share_b, share_c = b["idle_ms"] / b["step_ms"], c["idle_ms"] / c["step_ms"]
    if not (math.isfinite(share_b) and math.isfinite(share_c) and min(share_b, share_c) >= HOST_BOUND_IDLE):
        return None
    figures = "; ".join(f"{name} {b[col]:.2f} → {c[col]:.2f} ms" for col, name in known)
    step_change = c["step_ms"] / b["step_ms"] - 1
    text = (
        f"The GPU is idle for most of {words.each} on both sides ({percent(share_b, 0)} and "
        f"{percent(share_c, 0)} of {words.the_step}): "
        f"{words.the_step} ({b['step_ms']:.2f} → {c['step_ms']:.2f} ms, {percent(step_change, 1, sign=True)}) "
        f"is host time, not compute. "
        f"Idle {b['idle_ms']:.2f} → {c['idle_ms']:.2f} ms"
        + (f"; {figures}" if figures else "; host submission not recorded")
        + f"; {compute} ({OBSERVATION})."
    )
    return _finding(
        "host_bound",
        "found",
        text,
        evidence,
        f"idle share at least {HOST_BOUND_IDLE:.0%} of {words.the_step} on both sides",
    )


def _host_part_moved(
    words: _Words,
    b: dict[str, float],
    c: dict[str, float],
    known: list[tuple[str, str]],
    compute: str,
    evidence: Figures,
) -> Finding | None:
    """An exposed host part moved more than compute, the step's way, by at least half the step's change."""
    dstep = c["step_ms"] - b["step_ms"]
    dcompute = (
        c["compute_ms"] - b["compute_ms"] if math.isfinite(b["compute_ms"]) and math.isfinite(c["compute_ms"]) else 0.0
    )
    movers = sorted(((abs(c[col] - b[col]), col, name) for col, name in known if col in _EXPOSED), reverse=True)
    if not movers or dstep == 0:
        return None
    size, col, name = movers[0]
    same_way = (c[col] - b[col]) * dstep > 0
    if not (size > abs(dcompute) and same_way and size >= 0.5 * abs(dstep)):
        return None
    text = (
        f"{name[:1].upper() + name[1:]} moved most: {b[col]:.2f} → {c[col]:.2f} ms {words.per}, against "
        f"{compute}, "
        f"while {words.the_step} went {b['step_ms']:.2f} → {c['step_ms']:.2f} ms ({OBSERVATION})."
    )
    return _finding(
        "host_bound",
        "found",
        text,
        evidence,
        "the host-side figure moved more than compute and by at least half the step's change",
    )


def _shape_rates(per_run: Sequence[ShapeRates | None]) -> dict[tuple[str, str, str], float] | None:
    """(name, kind, shape) -> ms per step, averaged over a side's runs (None: a run has no shapes)."""
    out: dict[tuple[str, str, str], list[float]] = {}
    for per in per_run:
        if per is None:
            return None
        for key, value in per.items():
            out.setdefault(key, []).append(value)
    return {k: float(np.sum(v)) / len(per_run) for k, v in out.items()}


def shapes(
    base: Sequence[RunRecord],
    cand: Sequence[RunRecord],
    top: int = 5,
    reduced: tuple[Sequence[Reduced], Sequence[Reduced]] | None = None,
) -> list[Finding]:
    """Per operation name, the shapes new or gone and the change at the shapes both sides share
    (``reduced``: each run's op_shapes table reduced already, ``workbench.training.op_rates``)."""
    words = _words(base, cand)
    rb, rc = reduced or ([reduce_loaded(r) for r in base], [reduce_loaded(r) for r in cand])
    b, c = _shape_rates([r.shapes for r in rb]), _shape_rates([r.shapes for r in rc])
    if words is None:
        return []
    if b is None or c is None:
        missing = "the baseline" if b is None else "the candidate"
        return (
            [
                _finding(
                    "shapes",
                    "undecided",
                    f"no recorded shapes in {missing} (record_shapes off, or not a Kineto trace): "
                    "operations are aligned by name only",
                )
            ]
            if (b is not None or c is not None)
            else []
        )
    rows = _shape_rows(b, c)
    rows.sort(key=lambda r: (-r[0], r[1]))
    moved = [r for r in rows if r[3] or r[4] or not r[9] or abs(r[8] - r[7]) > SHAPE_UNCHANGED * max(r[7], 1e-12)]
    if not moved:
        n_shapes = sum(r[9] for r in rows)
        total_b, total_c = sum(r[7] for r in rows), sum(r[8] for r in rows)
        return [
            _finding(
                "shapes",
                "not_found",
                f"{len(rows)} operation(s) at {n_shapes} shape(s), every shape on both sides and "
                f"unchanged within {SHAPE_UNCHANGED:.0%} ({total_b:.3f} → {total_c:.3f} ms {words.per} in all)",
                {
                    "operations": len(rows),
                    "shapes": n_shapes,
                    "ms_per_step_baseline": total_b,
                    "ms_per_step_candidate": total_c,
                },
            )
        ]
    out = []
    for _weight, name, kind, new, gone, new_ms, gone_ms, shared_b, shared_c, n_shared in moved[:top]:
        parts = _shape_parts(new, gone, new_ms, gone_ms, shared_b, shared_c, n_shared, words.per)
        evidence: Figures = {
            "new_shapes": len(new),
            "gone_shapes": len(gone),
            "shared_shapes": n_shared,
            "new_ms_per_step": new_ms,
            "gone_ms_per_step": gone_ms,
            "shared_ms_per_step_baseline": shared_b,
            "shared_ms_per_step_candidate": shared_c,
        }
        out.append(
            _finding(
                "shapes",
                "found",
                f"{name} ({kind}) " + "; ".join(parts) + f" ({OBSERVATION})",
                evidence,
                "shapes are the tensor inputs' dims (operators) or grid and block (kernels); the costliest names per "
                "rank are kept",
            )
        )
    return out


def _shape_rows(b: dict[tuple[str, str, str], float], c: dict[tuple[str, str, str], float]) -> list[tuple[Any, ...]]:
    """Per (name, kind): weight, name, kind, new shapes, gone shapes (costliest first), their ms, the shared
    shapes' ms on each side and how many are shared."""
    by_name: dict[tuple[str, str], dict[str, set[str]]] = {}
    for side, rates in (("b", b), ("c", c)):
        for name, kind, shape in rates:
            by_name.setdefault((name, kind), {"b": set(), "c": set()})[side].add(shape)
    rows = []
    for (name, kind), sides in by_name.items():
        new, gone, shared = sides["c"] - sides["b"], sides["b"] - sides["c"], sides["c"] & sides["b"]
        new_ms = sum(c[(name, kind, s)] for s in new)
        gone_ms = sum(b[(name, kind, s)] for s in gone)
        shared_b = sum(b[(name, kind, s)] for s in shared)
        shared_c = sum(c[(name, kind, s)] for s in shared)
        weight = new_ms + gone_ms + abs(shared_c - shared_b)
        rows.append(
            (
                weight,
                name,
                kind,
                sorted(new, key=lambda s: -c[(name, kind, s)]),
                sorted(gone, key=lambda s: -b[(name, kind, s)]),
                new_ms,
                gone_ms,
                shared_b,
                shared_c,
                len(shared),
            )
        )
    return rows


def _shape_parts(
    new: list[str],
    gone: list[str],
    new_ms: float,
    gone_ms: float,
    shared_b: float,
    shared_c: float,
    n_shared: int,
    per: str,
) -> list[str]:
    """The clauses of one operation's shape sentence: new shapes, gone shapes, the shared ones' change."""
    parts = []
    if new:
        parts.append(
            f"at {new[0]}"
            + (f" and {len(new) - 1} more shape(s)" if len(new) > 1 else "")
            + f": new in the candidate ({new_ms:.3f} ms {per})"
        )
    if gone:
        parts.append(
            f"at {gone[0]}"
            + (f" and {len(gone) - 1} more" if len(gone) > 1 else "")
            + f": only in the baseline ({gone_ms:.3f} ms {per})"
        )
    if n_shared:
        rel = shared_c / shared_b - 1 if shared_b > 0 else math.nan
        if math.isfinite(rel) and abs(rel) <= SHAPE_UNCHANGED:
            parts.append(
                f"at the {n_shared} shape(s) both sides share, unchanged within {SHAPE_UNCHANGED:.0%} "
                f"({shared_b:.3f} → {shared_c:.3f} ms {per})"
            )
        else:
            parts.append(f"at the {n_shared} shape(s) both sides share, {shared_b:.3f} → {shared_c:.3f} ms {per}")
    else:
        parts.append("no shape in common")
    return parts


def _memory_side(runs: Sequence[RunRecord]) -> dict[str, float] | None:
    values: dict[str, list[float]] = {}
    for run in runs:
        t = run.tables.get("memory")
        if not t or not len(t.get("step", ())):
            return None
        for col in ("peak_allocated_mb", "peak_reserved_mb", "allocated_mb", "oom_events"):
            v = np.asarray(t.get(col, ()), dtype=np.float64)
            v = v[np.isfinite(v)]
            if v.size:
                values.setdefault(col, []).append(
                    float(v.sum()) if col == "oom_events" else float(v.max() if col.startswith("peak") else v.mean())
                )
    return {k: float(np.mean(v)) for k, v in values.items()}


def memory(base: Sequence[RunRecord], cand: Sequence[RunRecord]) -> Finding | None:
    words = _words(base, cand)
    b, c = _memory_side(base), _memory_side(cand)
    if words is None or (b is None and c is None):
        return None
    if b is None or c is None:
        return _finding(
            "memory",
            "undecided",
            f"no allocator events in the {'baseline' if b is None else 'candidate'} "
            "(profile_memory off): memory pressure cannot be compared",
        )
    step_b, step_c = _side(base, "step_ms"), _side(cand, "step_ms")
    evidence: Figures = {f"{k}_{side}": v for side, d in (("baseline", b), ("candidate", c)) for k, v in d.items()}
    evidence.update(step_ms_baseline=step_b, step_ms_candidate=step_c)
    figures = (
        f"peak reserved {b.get('peak_reserved_mb', math.nan):,.0f} → {c.get('peak_reserved_mb', math.nan):,.0f} MiB, "
        f"peak allocated {b.get('peak_allocated_mb', math.nan):,.0f} → {c.get('peak_allocated_mb', math.nan):,.0f} "
        f"MiB, "
        f"allocated {words.per} {b.get('allocated_mb', math.nan):,.0f} → {c.get('allocated_mb', math.nan):,.0f} MiB"
    )
    ooms = b.get("oom_events", 0.0) + c.get("oom_events", 0.0)
    rose = [
        k for k in ("peak_reserved_mb", "peak_allocated_mb") if k in b and k in c and c[k] > (1 + MEMORY_RISE) * b[k]
    ]
    slower = math.isfinite(step_b) and math.isfinite(step_c) and step_c > step_b
    if ooms:
        return _finding(
            "memory",
            "found",
            f"out-of-memory markers in the trace (baseline {b.get('oom_events', 0):.0f}, candidate "
            f"{c.get('oom_events', 0):.0f}); {figures} ({OBSERVATION})",
            evidence,
        )
    if rose and slower:
        return _finding(
            "memory",
            "found",
            f"memory pressure rose with the time of {words.the_step} ({step_b:.2f} → {step_c:.2f} ms): {figures} "
            f"({OBSERVATION})",
            evidence,
            f"a rise of more than {MEMORY_RISE:.0%} in peak memory; allocator retries are not in Kineto traces",
        )
    return _finding(
        "memory", "not_found", f"memory pressure did not rise with the time of {words.the_step}: {figures}", evidence
    )
