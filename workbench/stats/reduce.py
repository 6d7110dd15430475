"""Per-run reduction: from the steps of one run to the run-level statistics that inference uses.

Steps inside a run are autocorrelated and share the run's state, so they are only ever
summarised here; intervals and tests use one value per run (statistics.md 8.3).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from workbench.stats import exact

from workbench.stats._special import special

P95_MIN_SAMPLES = 72  # smallest n with a finite two-sided 95% order-statistic CI for p95


def default_warmup(n_steps: int) -> int:
    """The engineering default when no pilot exists: max(3, ⌈0.1·steps⌉) (not from the literature)."""
    return max(3, math.ceil(0.1 * n_steps))


@dataclass(frozen=True)
class RunReduction:
    """Run-level statistics after warm-up. ``mean`` is the primary statistic; ``min`` is a
    diagnostic (Chen & Revels) and must not be used as the effect; ``p95``/``p95_hd``
    are None below 72 kept samples. Diagnostics are reported, never used to filter."""

    n_total: int
    warmup: int
    n: int  # steps kept (after warm-up, NaN excluded)
    n_missing: int  # NaN (unknown) steps after warm-up, excluded
    mean: float
    median: float
    min: float
    max: float
    sd: float
    p95: float | None
    p95_hd: float | None
    lag1_autocorrelation: float | None
    half_ratio: float | None  # mean of the second half of kept steps / mean of the first half
    cov_settled_at: int | None  # first kept step whose trailing window CoV <= 0.02 (Georges)

    def to_json(self) -> dict[str, object]:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}


def harrell_davis(x: Any, p: float) -> float:
    """Harrell–Davis (1982) estimate of the p-quantile: Σ W_i X_(i) with Beta(p(n+1), (1-p)(n+1)) weights."""
    xs = np.sort(np.asarray(x, dtype=np.float64).ravel())
    n = len(xs)
    if n == 0:
        return math.nan
    a, b = p * (n + 1), (1 - p) * (n + 1)
    cdf = special().betainc(a, b, np.arange(n + 1) / n)
    return exact.dot(np.diff(cdf), xs)


def harrell_davis_se(x: Any, p: float) -> float:
    """Jackknife standard error of the Harrell–Davis estimate (as scipy's ``hdquantiles_sd``)."""
    xs = np.sort(np.asarray(x, dtype=np.float64).ravel())
    n = len(xs)
    if n < 2:
        return math.nan
    cdf = special().betainc(n * p, n * (1 - p), np.arange(n) / (n - 1))
    w = np.diff(cdf)  # weights of the n-1 order statistics of a leave-one-out sample
    loo = np.zeros(n)
    loo[1:] = np.cumsum(w * xs[:-1])
    loo[:-1] += np.cumsum(w[::-1] * xs[:0:-1])[::-1]
    return float(math.sqrt(loo.var() * (n - 1)))


def quantile_ci_ranks(n: int, p: float, alpha: float = 0.05) -> tuple[int | None, int | None, float]:
    """Distribution-free CI ranks (1-based) for the p-quantile: [X_(l), X_(u)].

    l is the largest index with F(l-1) ≤ α/2 and u the smallest with F(u-1) ≥ 1-α/2,
    F the Binomial(n, p) CDF; None where no such rank exists (the bound is infinite).
    Returns (l, u, coverage) with coverage = P(l ≤ K ≤ u-1) for the ranks found.
    """

    def cdf(k: int) -> float:
        return 0.0 if k < 0 else (1.0 if k >= n else float(special().bdtr(k, n, p)))

    low = None
    for rank in range(n, 0, -1):
        if cdf(rank - 1) <= alpha / 2:
            low = rank
            break
    high = None
    for rank in range(1, n + 1):
        if cdf(rank - 1) >= 1 - alpha / 2:
            high = rank
            break
    upper_cdf = cdf(high - 1) if high is not None else 1.0
    lower_cdf = cdf(low - 1) if low is not None else 0.0
    return low, high, upper_cdf - lower_cdf


def _lag1(x: np.ndarray) -> float | None:
    if len(x) < 3:
        return None
    d = x - x.mean()
    denom = exact.dot(d, d)
    return None if denom == 0 else exact.dot(d[:-1], d[1:]) / denom


def _cov_settled_at(x: np.ndarray, window: int = 10, threshold: float = 0.02) -> int | None:
    if len(x) < window:
        return None
    from numpy.lib.stride_tricks import sliding_window_view

    win = sliding_window_view(x, window)
    means = win.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = win.std(axis=1, ddof=1) / means
    hits = np.flatnonzero(cov <= threshold)
    return int(hits[0]) + window - 1 if len(hits) else None


def reduce_run(values: Any, warmup: int = 0) -> RunReduction:
    """Reduce one run's step values (e.g. step times) to its run-level statistics.

    The first ``warmup`` steps are dropped (see ``default_warmup``); NaN steps are
    unknown and excluded, and counted. Raises ValueError when nothing is left.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    if warmup < 0:
        raise ValueError("warm-up must be >= 0")
    kept_all = v[warmup:]
    missing = np.isnan(kept_all)
    kept = kept_all[~missing]
    if len(kept) == 0:
        raise ValueError(f"no steps left after a warm-up of {warmup} (of {len(v)}, {int(missing.sum())} unknown)")
    if not np.all(np.isfinite(kept)):
        raise ValueError("step values must be finite")
    n = len(kept)
    half = n // 2
    half_ratio = float(kept[half:].mean() / kept[:half].mean()) if half >= 1 and kept[:half].mean() != 0 else None
    p95 = p95_hd = None
    if n >= P95_MIN_SAMPLES:
        p95 = float(np.percentile(kept, 95))
        p95_hd = harrell_davis(kept, 0.95)
    return RunReduction(
        n_total=len(v),
        warmup=min(warmup, len(v)),
        n=n,
        n_missing=int(missing.sum()),
        mean=float(kept.mean()),
        median=float(np.median(kept)),
        min=float(kept.min()),
        max=float(kept.max()),
        sd=float(kept.std(ddof=1)) if n > 1 else math.nan,
        p95=p95,
        p95_hd=p95_hd,
        lag1_autocorrelation=_lag1(kept),
        half_ratio=half_ratio,
        cov_settled_at=_cov_settled_at(kept),
    )
