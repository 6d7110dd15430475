"""Measurement boundaries: what one "step" of a training run is, so that two runs whose
steps are not the same thing are caught before any delta.

A changed step marker (``ProfilerStep#N`` against NVTX ``step N`` ranges), a different
cadence (profiled every step against every other step; several optimizer steps per
marked step, or one per several), gradient accumulation (several backward passes per
step) and a changed warm-up exclusion each move the boundary without changing any
device operation. ``boundary`` records the run's side at import (``window["boundary"]``);
``compare_boundaries`` is the comparability finding, both values, never a delta.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from workbench.vocabulary import JSONDoc

DIMENSION = "measurement_boundary"
TITLE = "Measurement boundary"
_LABELS = {
    "marker": "step marker",
    "step_is": "a step is",
    "step_stride": "step numbers advance by (cadence)",
    "optimizer_steps_per_step": "optimizer steps per step",
    "backward_passes_per_step": "backward passes per step (gradient accumulation)",
    "warmup_excluded": "warm-up steps excluded",
}


def _median(values: np.ndarray) -> float | None:  # of the finite values; None when there are none
    v = values[np.isfinite(values)]
    return float(np.median(v)) if v.size else None


def boundary(
    marker: str,
    numbers: Sequence[float],
    warmup_excluded: int,
    optimizer_steps: np.ndarray,
    backward_passes: np.ndarray,
) -> JSONDoc:
    """One run's boundary: the marker, the cadence and the work inside one step (medians over kept steps)."""
    nums = np.array(sorted(float(n) for n in numbers), dtype=np.float64)
    out: JSONDoc = {"marker": marker, "warmup_excluded": int(warmup_excluded)}
    stride = _median(np.diff(nums)) if len(nums) >= 2 else None
    if stride is not None:
        out["step_stride"] = stride
    opt = np.asarray(optimizer_steps, dtype=np.float64)
    opt = opt[np.isfinite(opt)]
    if opt.size and opt.sum() > 0:  # none seen (forward-only, no operators) is not a cadence
        out["optimizer_steps_per_step"] = round(
            float(opt.mean()), 2
        )  # 0.25: one optimizer step every fourth marked step
    passes = np.asarray(backward_passes, dtype=np.float64)
    passes = passes[np.isfinite(passes)]
    # Only a count every kept step agrees on: a count that varies from step to step is the
    # heuristic losing track (the loss's node name recurring in the graph), not a cadence.
    if passes.size and passes[0] > 0 and np.all(passes == passes[0]):
        out["backward_passes_per_step"] = float(passes[0])
    return out


@dataclass(frozen=True)
class BoundaryCheck:
    baseline: JSONDoc
    candidate: JSONDoc
    differs: bool
    note: str


def _side(runs: Sequence[Any]) -> tuple[JSONDoc | None, str]:
    found = [r.window.get("boundary") for r in runs]
    if not found or any(not isinstance(b, Mapping) for b in found):
        return None, ""
    first = dict(found[0])
    for run, b in zip(runs[1:], found[1:]):
        if dict(b) != first:
            return first, f"runs of one side disagree ({_ref(runs[0])}: {first}, {_ref(run)}: {dict(b)})"
    return first, ""


def _ref(run: Any) -> str:
    return f"run {run.id}" if run.id is not None else f"run {run.label!r}"


def compare_boundaries(baseline: Sequence[Any], candidate: Sequence[Any]) -> BoundaryCheck | None:
    """Both sides' boundaries and what differs; None when a side's runs do not record one."""
    b, nb = _side(baseline)
    c, nc = _side(candidate)
    if b is None or c is None:
        return None
    moved = []
    for key, label in _LABELS.items():
        if key in b and key in c and b[key] != c[key]:
            moved.append(f"{label}: {b[key]!r} against {c[key]!r}")
    notes = [n for n in (nb, nc) if n]
    note = "; ".join(moved + notes)
    if moved:
        note += ": the steps measure different things, so their times are not comparable"
    return BoundaryCheck(baseline=b, candidate=c, differs=bool(moved or notes), note=note)
