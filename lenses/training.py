"""The training lens: one sample is a step on a rank.

Primary metric: mean step time: each step's ``step_ms`` averaged over its ranks (in a
synchronous step every rank's wall time includes its wait for the others), then over
steps, so a step missing a rank still weighs as one step. Phases are exposed time
on one clock (input, compute, communication, checkpoint): overlapped time is not in
them, so they are not additive with anything else and are never summed into the step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lenses.base import (
    NAN,
    WINDOW_DIMENSION,
    DimensionSpec,
    GuardrailSpec,
    Lens,
    MetricSpec,
    PhaseSpec,
    WorkPerItem,
    as_number,
    column,
    finite,
    observed_window,
)
from store.records import SAMPLES, Dimension, RunRecord
from store.run_meta import SampleFinding

EVAL_LOSS_KEYS = ("eval_loss", "evaluation_loss", "eval/loss", "val_loss")


def number_equal(a: Any, b: Any) -> bool | None:
    """Numeric dimensions ("8", 8, "8 ranks"): equal within 0.5 %; ``None`` if unreadable."""
    na, nb = as_number(a), as_number(b)
    if na is None or nb is None:
        return None
    return math.isclose(na, nb, rel_tol=0.005)


def per_step(run: RunRecord, name: str, reduce: str) -> np.ndarray | None:
    """``name`` reduced over ranks for each step (``mean``, ``max`` or ``sum``), in step order."""
    values = column(run, name)
    if values is None:
        return None
    steps = column(run, "step")
    if steps is None or not finite(steps).size:
        return values
    keep = np.isfinite(steps) & np.isfinite(values)
    if not keep.any():
        return np.empty(0)
    uniq, inverse = np.unique(steps[keep], return_inverse=True)
    out = np.full(len(uniq), -np.inf if reduce == "max" else 0.0)
    if reduce == "max":
        np.maximum.at(out, inverse, values[keep])
        return out
    np.add.at(out, inverse, values[keep])
    if reduce == "sum":  # a rank that does not report a step makes its total unknown, not smaller
        out[np.isin(uniq, steps[np.isfinite(steps) & ~np.isfinite(values)])] = NAN
    if reduce == "mean":
        out /= np.bincount(inverse, minlength=len(uniq))
    return out


def check_steps(run: RunRecord) -> list[SampleFinding]:
    """A step has a boundary and a positive duration: a sample without a step number (a
    trace with no step annotations read as one window) is not a step, so its ``step_ms`` is
    unknown, never a "per step" figure. (A duration of 0 or less is screened by the bounds.)"""
    table = run.tables.get(SAMPLES)
    if not isinstance(table, dict) or "step" not in table or "step_ms" not in table:
        return []
    steps = np.asarray(table["step"], dtype=np.float64)
    step_ms = np.asarray(table["step_ms"], dtype=np.float64)
    loose = np.isnan(steps) & ~np.isnan(step_ms)
    if not loose.any():
        return []
    step_ms = table["step_ms"] = step_ms.copy()
    step_ms[loose] = np.nan
    count, n = int(loose.sum()), len(steps)
    return [
        SampleFinding(
            code="no_step_boundary",
            text=f"{count:,} of {n:,} samples have no step boundary (no step number: a window over the whole trace, "
            f"not a step): their step time is unknown, and no per-step figure is drawn from them",
            count=count,
            of=n,
        )
    ]


class TrainingLens(Lens):
    def check_samples(self, run: RunRecord) -> list[SampleFinding]:
        return [*super().check_samples(run), *check_steps(run)]

    def step_times(self, run: RunRecord) -> np.ndarray:
        v = per_step(run, "step_ms", "mean")
        return finite(v)

    def primary_value(self, run: RunRecord) -> float:
        v = self.step_times(run)
        return float(v.mean()) if v.size else NAN

    def batch_per_step(self, run: RunRecord) -> tuple[float, str] | None:
        for col, unit in (("samples", "samples"), ("tokens", "tokens")):
            v = finite(per_step(run, col, "sum"))
            if v.size:
                return float(np.median(v)), unit
        return None

    def observed_dimensions(self, run: RunRecord) -> dict[str, Dimension]:
        out = observed_window(run)
        ranks = finite(column(run, "rank"))
        if ranks.size:
            out["rank_count"] = Dimension(int(np.unique(ranks).size), "derived")
        batch = self.batch_per_step(run)
        if batch is not None:
            out["effective_batch"] = Dimension(f"{batch[0]:g} {batch[1]}", "derived")
        return out

    def guardrail_value(self, run: RunRecord, metric: str) -> float:
        if metric == "eval_loss":
            for key in EVAL_LOSS_KEYS:
                if key in run.quality:
                    return super().guardrail_value(run, key)
            return NAN
        return super().guardrail_value(run, metric)

    def work_per_item(self, run: RunRecord) -> WorkPerItem | None:
        batch = self.batch_per_step(run)
        return WorkPerItem(f"{batch[1]} per step", batch[0]) if batch else None

    def item_series(self, run: RunRecord) -> dict[str, np.ndarray]:
        # per_step is vectorized: one pass, however many steps
        out = {"step_time": per_step(run, "step_ms", "mean")}
        for p in self.phases:
            out[p.name] = per_step(run, p.column, "mean")
        return {k: v for k, v in out.items() if v is not None}

    def throughput(self, run: RunRecord) -> tuple[float, str] | None:
        batch, step_ms = self.batch_per_step(run), self.primary_value(run)
        if batch is None or not math.isfinite(step_ms) or step_ms <= 0:
            return None
        return batch[0] / (step_ms / 1000.0), f"{batch[1]}/s"


LENS = TrainingLens(
    name="training",
    title="Training",
    dimensions=(
        DimensionSpec("model", "Model", True),
        DimensionSpec("objective", "Objective", True),
        DimensionSpec("hardware", "Hardware", True),
        DimensionSpec("topology", "Topology", True),
        DimensionSpec("rank_count", "Rank count", True, equal=number_equal),
        DimensionSpec("effective_batch", "Effective batch", True, equal=number_equal),
        DimensionSpec(WINDOW_DIMENSION, "Window kind", True, changeable=False),
        DimensionSpec("optimizer", "Optimizer", False),
        DimensionSpec("eval_metric", "Evaluation metric", False),
        DimensionSpec("framework", "Framework and library versions", False),
    ),
    primary=MetricSpec("mean_step_time", "mean step time", "ms"),
    phases=(
        PhaseSpec("input", "Input", "input_ms"),
        PhaseSpec("compute", "Compute", "compute_ms"),
        PhaseSpec("communication", "Communication", "communication_ms"),
        PhaseSpec("checkpoint", "Checkpoint", "checkpoint_ms"),
    ),
    phase_note="Phases are exposed time on one clock; overlapped work is not in them, so they are not additive.",
    work_unit="samples",
    throughput_from_primary=True,
    item_measure=MetricSpec("step_time", "step time by step", "ms"),
    item_order="step",
    item_name="steps",
    span_column="step_ms",
    guardrails=(
        # Evaluation loss may not get worse by more than 1 % of the baseline's.
        GuardrailSpec("eval_loss", "Evaluation loss", "eval_loss", "max_increase_pct", 1.0),
    ),
)
