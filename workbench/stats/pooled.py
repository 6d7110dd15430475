"""Pooled figures (all steps or requests of all runs together): descriptive only.

A pooled p95 is a quantile of a mixture over runs: one slow run can supply most of the
tail, and busy runs weigh more. It may be shown with that label; its interval, when one is
wanted, comes from resampling **whole runs** (a run-level cluster bootstrap), never from
treating requests as independent (statistics.md 7.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.stats.intervals import Interval, bootstrap_params, percentile_interval

EXPANDED_BELOW = 20


@dataclass(frozen=True)
class PooledRatio:
    q: float
    baseline: float  # pooled quantile of A
    candidate: float  # pooled quantile of B
    ratio: float  # candidate / baseline
    intervals: list[Interval]
    label: str = "pooled over runs (descriptive); interval from a run-level cluster bootstrap"

    def to_json(self) -> dict[str, object]:
        return {
            "q": self.q,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "ratio": self.ratio,
            "label": self.label,
            "intervals": [i.to_json() for i in self.intervals],
        }


def _runs(name: str, runs: Sequence[Any]) -> list[np.ndarray]:
    out = []
    for r in runs:
        v = np.asarray(r, dtype=np.float64).ravel()
        v = v[~np.isnan(v)]  # unknown samples are left out, never zero
        if len(v):
            out.append(v)
    if len(out) < 2:
        raise ValueError(f"{name}: a cluster bootstrap needs at least 2 runs with samples")
    return out


def pooled_quantile_ratio(
    runs_a: Sequence[Any],
    runs_b: Sequence[Any],
    q: float = 0.95,
    *,
    seed: int = 12345,
    n_boot: int = 2000,
    levels: tuple[float, ...] = (0.95, 0.90),
) -> PooledRatio:
    """Pooled q-quantile of B over that of A, with a cluster-bootstrap interval that
    resamples runs (A's first, then B's, from ``Generator(PCG64(seed))``); the expanded
    percentile interval is added below 20 runs per arm."""
    a, b = _runs("A", runs_a), _runs("B", runs_b)
    rng = np.random.Generator(np.random.PCG64(seed))
    ia = rng.integers(0, len(a), size=(n_boot, len(a)))
    ib = rng.integers(0, len(b), size=(n_boot, len(b)))

    def pooled(runs: list[np.ndarray], idx: np.ndarray) -> np.ndarray:
        return np.array([np.percentile(np.concatenate([runs[j] for j in row]), 100 * q) for row in idx])

    ratios = pooled(b, ib) / pooled(a, ia)
    qa = float(np.percentile(np.concatenate(a), 100 * q))
    qb = float(np.percentile(np.concatenate(b), 100 * q))
    params = {
        "role": "descriptive",
        **bootstrap_params(paired=False, seed=seed, n_boot=n_boot),
        "resampling": "whole runs",
    }
    ints = [percentile_interval(ratios, level, params=params) for level in levels]
    m = min(len(a), len(b))
    if m < EXPANDED_BELOW:
        ints += [percentile_interval(ratios, level, expanded_m=m, params=params) for level in levels]
    return PooledRatio(q, qa, qb, qb / qa, ints)
