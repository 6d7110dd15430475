"""Session stability: drift across slots, outlier runs, and Kalibera–Jones variance components.

Outliers and drift are flagged for a person to look at; no run is ever dropped here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.stats import exact

from workbench.stats._tdist import t_quantile, t_two_sided_p

OUTLIER_Z = 3.5  # Iglewicz & Hoaglin (1993)


@dataclass(frozen=True)
class Drift:
    """OLS slope of ln(run value) on slot index for one arm."""

    slope_log: float  # per slot
    se: float
    p: float
    n: int
    span: float = 0.0  # slots from the first run to the last

    @property
    def change_log(self) -> float:
        """The fitted log change across the session (slope × span)."""
        return self.slope_log * self.span

    @property
    def pct_per_slot(self) -> float:
        return 100.0 * math.expm1(self.slope_log)

    def to_json(self) -> dict[str, object]:
        return {
            "slope_log_per_slot": self.slope_log,
            "pct_per_slot": self.pct_per_slot,
            "se": self.se if math.isfinite(self.se) else None,
            "p": self.p if math.isfinite(self.p) else None,
            "n": self.n,
            "session_change_pct": 100.0 * math.expm1(self.change_log),
        }


def drift(values: Any, slots: Any = None) -> Drift | None:
    """Slope of the log run value on its slot index (position in the session when
    ``slots`` is None). None with fewer than 3 runs."""
    y = np.log(np.asarray(values, dtype=np.float64).ravel())
    n = len(y)
    if n < 3:
        return None
    x = np.arange(n, dtype=np.float64) if slots is None else np.asarray(slots, dtype=np.float64).ravel()
    if len(x) != n:
        raise ValueError("one slot index per run")
    xc = x - x.mean()
    sxx = exact.dot(xc, xc)
    if sxx == 0:
        return None
    slope = exact.dot(xc, y - y.mean()) / sxx
    resid = y - y.mean() - slope * xc
    s2 = exact.dot(resid, resid) / (n - 2)
    se = math.sqrt(s2 / sxx)
    p = t_two_sided_p(slope / se, n - 2) if se > 0 else (0.0 if slope != 0 else 1.0)
    return Drift(slope, se, p, n, float(x.max() - x.min()))


def modified_z(values: Any) -> np.ndarray:
    """Iglewicz–Hoaglin modified z of the log values: 0.6745·(x - median)/MAD; when the
    MAD is 0, the mean absolute deviation stands in ((x - median)/(1.253314·MeanAD))."""
    y = np.log(np.asarray(values, dtype=np.float64).ravel())
    med = np.median(y)
    dev = y - med
    mad = float(np.median(np.abs(dev)))
    if mad > 0:
        return 0.6745 * dev / mad
    mean_ad = float(np.mean(np.abs(dev)))
    if mean_ad > 0:
        return dev / (1.253314 * mean_ad)
    return np.zeros_like(y)


def outlier_runs(values: Any, threshold: float = OUTLIER_Z) -> list[int]:
    """Indices of runs whose |modified z| of the log value exceeds the threshold."""
    if len(np.asarray(values).ravel()) < 3:
        return []
    return [int(i) for i in np.flatnonzero(np.abs(modified_z(values)) > threshold)]


# --- Kalibera & Jones dimensioning (statistics.md 2.2-2.4) -------------------------------


def kj_s2(y: Any, level: int) -> float:
    """K&J S_i²: the average over parents of the sample variance of level-i unit means.
    ``y`` is balanced with axes (level n, ..., level 1); level 1 is the last axis."""
    arr = np.asarray(y, dtype=np.float64)
    n = arr.ndim
    if not 1 <= level <= n:
        raise ValueError(f"level must be 1..{n}")
    means = arr.mean(axis=tuple(range(n - level + 1, n))) if level > 1 else arr
    parents = int(np.prod(arr.shape[: n - level]))
    r = arr.shape[n - level]
    return float(((means - means.mean(axis=-1, keepdims=True)) ** 2).sum() / (parents * (r - 1)))


def kj_t2(y: Any) -> list[float]:
    """Unbiased variance components [T_1², ..., T_n²] (T_i² = S_i² - S_{i-1}²/r_{i-1});
    a negative T_i² means level i adds no detectable variance."""
    arr = np.asarray(y, dtype=np.float64)
    n = arr.ndim
    s2 = [kj_s2(arr, i) for i in range(1, n + 1)]
    out = [s2[0]]
    for i in range(2, n + 1):
        out.append(s2[i - 1] - s2[i - 2] / arr.shape[n - (i - 1)])
    return out


def kj_optimal_reps(t2: list[float], costs: list[float]) -> list[float]:
    """Unrounded optimal repetitions r_i = sqrt((c_{i+1}/c_i)·(T_i²/T_{i+1}²)) for i = 1..n-1.

    ``t2`` is ordered from level 1 up, ``costs`` likewise (c_1 = one step). A
    non-positive T_i² (i ≥ 2) gives 1; a non-positive T_{i+1}² gives inf (cap by budget).
    Take ⌈r_i⌉ for the counts.
    """
    reps = []
    for i in range(len(t2) - 1):
        if i >= 1 and t2[i] <= 0:
            reps.append(1.0)
        elif t2[i + 1] <= 0:
            reps.append(math.inf)
        else:
            reps.append(math.sqrt(costs[i + 1] / costs[i] * t2[i] / t2[i + 1]))
    return reps


def hierarchical_bootstrap_ratio(
    a: Any, b: Any, *, seed: int, n_boot: int = 10_000, all_levels: bool = False
) -> np.ndarray:
    """Resampled ratios of grand means B*/A* for balanced runs × steps arrays.

    Top level only (default) redraws whole runs, keeping each run's steps intact;
    ``all_levels`` also redraws steps within each drawn run (K&J; over-states the
    within-run variance). Arm A is drawn first, then B, from ``Generator(PCG64(seed))``.
    """
    rng = np.random.Generator(np.random.PCG64(seed))
    means = []
    for arm in (np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)):
        runs, steps = arm.shape
        ir = rng.integers(0, runs, (n_boot, runs))
        if all_levels:
            js = rng.integers(0, steps, (n_boot, runs, steps))
            means.append(arm[ir[:, :, None], js].mean(axis=(1, 2)))
        else:
            means.append(arm[ir].mean(axis=(1, 2)))
    return means[1] / means[0]


def kj_mean_ci(y: Any, level: float = 0.95) -> tuple[float, float]:
    """K&J CI of one system's grand mean: Ȳ ± t_{r_n - 1}·sqrt(S_n²/r_n) (top level only).
    Returns (mean, half-width)."""
    arr = np.asarray(y, dtype=np.float64)
    r = arr.shape[0]
    half = t_quantile(0.5 + level / 2, r - 1) * math.sqrt(kj_s2(arr, arr.ndim) / r)
    return float(arr.mean()), half
