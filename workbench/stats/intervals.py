"""Ratio intervals on per-run (or per-round) statistics.

Every interval is for a ratio ``numerator / denominator`` of arm means, where both
arrays hold one value per run (never one value per step). Which arm is the
numerator is the caller's choice: ``analyze`` puts the candidate on top for
time-like metrics so that > 1 always means "worse".

Methods (statistics.md section 8.5):

- ``fieller-paired``: Fieller (1954) on round means, with the covariance across
  rounds and df = m - 1. The primary interval for rounds.
- ``fieller-welch``: the unpaired form, covariance 0 and Welch-Satterthwaite df
  evaluated at the point estimate. The primary interval for independent runs.
- ``log-t-paired``: exp(mean ± t·sd/√m) of per-round log ratios; a ratio of geometric
  means, reported as a cross-check.
- ``delta-log-welch``: the delta-method interval of the log ratio of means with the
  same Welch df; the unpaired cross-check.
- ``bootstrap-percentile`` and ``bootstrap-expanded-percentile``: resampling of
  rounds (the same index for every arm) or, unpaired, of runs within each arm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.stats import exact

from workbench.stats._tdist import norm_cdf, t_quantile, t_two_sided_p


@dataclass(frozen=True)
class Interval:
    """A two-sided interval for a ratio, with the recipe that produced it.

    ``low``/``high`` are ``-inf``/``inf`` when the method gives no bounded interval
    (Fieller with a denominator mean not distinguishable from 0).
    """

    method: str
    level: float
    low: float
    high: float
    params: dict[str, object] = field(default_factory=dict)

    @property
    def bounded(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high

    def inverted(self) -> "Interval":
        """The interval for the reciprocal ratio: [L, U] -> [1/U, 1/L]."""
        if not self.bounded or self.low <= 0:
            low, high = -math.inf, math.inf
        else:
            low, high = 1.0 / self.high, 1.0 / self.low
        return Interval(self.method, self.level, low, high, dict(self.params))

    def to_json(self) -> dict[str, object]:
        return {
            "method": self.method,
            "level": self.level,
            "low": self.low if math.isfinite(self.low) else None,
            "high": self.high if math.isfinite(self.high) else None,
            "bounded": self.bounded,
            **self.params,
        }


def _as_values(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).ravel()


def fieller(
    num_mean: float, num_var: float, den_mean: float, den_var: float, cov: float, tq: float
) -> tuple[float, float]:
    """Fieller's interval for num_mean/den_mean given the variances of the two means,
    their covariance and the t quantile. Returns (-inf, inf) when unbounded (a <= 0 or
    a negative discriminant)."""
    a = den_mean * den_mean - tq * tq * den_var
    b = num_mean * den_mean - tq * tq * cov
    # b² - a·k with k = N̄² - t²·v_N, expanded so that the large N̄²D̄² terms cancel algebraically rather than
    # in floating point (the direct form loses half the digits when the CI is narrow).
    disc = (
        tq
        * tq
        * (
            den_mean * den_mean * num_var
            - 2 * num_mean * den_mean * cov
            + num_mean * num_mean * den_var
            - tq * tq * (num_var * den_var - cov * cov)
        )
    )
    if a <= 0 or disc < 0:
        return (-math.inf, math.inf)
    root = math.sqrt(disc)
    return ((b - root) / a, (b + root) / a)


def paired_fieller(num: Any, den: Any, level: float = 0.95) -> Interval:
    """Fieller CI for mean(num)/mean(den) over m paired rounds (df = m - 1)."""
    n, d = _as_values(num), _as_values(den)
    m = len(n)
    if m != len(d):
        raise ValueError("paired arrays must have the same length")
    if m < 2:
        raise ValueError("a paired interval needs at least 2 rounds")
    df = m - 1
    tq = t_quantile(0.5 + level / 2, df)
    nc, dc = n - n.mean(), d - d.mean()
    var_n, var_d, cov = (exact.dot(x, y) / (m - 1) for x, y in ((nc, nc), (dc, dc), (nc, dc)))
    low, high = fieller(float(n.mean()), var_n / m, float(d.mean()), var_d / m, cov / m, tq)
    return Interval("fieller-paired", level, low, high, {"df": df})


def welch_df_at_ratio(num: Any, den: Any, rho: float) -> float:
    """Welch-Satterthwaite df for N̄ - ρ·D̄ with independent arms."""
    n, d = _as_values(num), _as_values(den)
    vn = float(n.var(ddof=1)) / len(n)
    vd = rho * rho * float(d.var(ddof=1)) / len(d)
    denom = vn * vn / (len(n) - 1) + vd * vd / (len(d) - 1)
    if denom == 0:
        return float(len(n) + len(d) - 2)
    return (vn + vd) ** 2 / denom


def welch_fieller(num: Any, den: Any, level: float = 0.95) -> Interval:
    """Unpaired Fieller CI for mean(num)/mean(den): covariance 0, Welch df at ρ = θ̂."""
    n, d = _as_values(num), _as_values(den)
    if len(n) < 2 or len(d) < 2:
        raise ValueError("an unpaired interval needs at least 2 runs per arm")
    theta = float(n.mean() / d.mean())
    df = welch_df_at_ratio(n, d, theta)
    tq = t_quantile(0.5 + level / 2, df)
    low, high = fieller(
        float(n.mean()), float(n.var(ddof=1)) / len(n), float(d.mean()), float(d.var(ddof=1)) / len(d), 0.0, tq
    )
    return Interval("fieller-welch", level, low, high, {"df": df})


def paired_log_t(num: Any, den: Any, level: float = 0.95) -> Interval:
    """exp(d̄ ± t·s_d/√m) with d_k = ln num_k - ln den_k: ratio of geometric means."""
    n, d = _as_values(num), _as_values(den)
    diff = np.log(n) - np.log(d)
    m = len(diff)
    if m < 2:
        raise ValueError("a paired interval needs at least 2 rounds")
    df = m - 1
    tq = t_quantile(0.5 + level / 2, df)
    centre = float(diff.mean())
    half = tq * float(diff.std(ddof=1)) / math.sqrt(m)
    return Interval(
        "log-t-paired",
        level,
        math.exp(centre - half),
        math.exp(centre + half),
        {"df": df, "estimate": math.exp(centre)},
    )


def delta_log_welch(num: Any, den: Any, level: float = 0.95) -> Interval:
    """exp(ln θ̂ ± t·se) with the delta-method se of ln(N̄/D̄) and Welch df at θ̂."""
    n, d = _as_values(num), _as_values(den)
    nm, dm = float(n.mean()), float(d.mean())
    theta = nm / dm
    df = welch_df_at_ratio(n, d, theta)
    se = math.sqrt(float(n.var(ddof=1)) / len(n) / nm**2 + float(d.var(ddof=1)) / len(d) / dm**2)
    half = t_quantile(0.5 + level / 2, df) * se
    return Interval("delta-log-welch", level, theta * math.exp(-half), theta * math.exp(half), {"df": df})


# --- bootstrap ---------------------------------------------------------------------------


# Resampled values drawn and averaged at a time: a chunk of rows of the index matrix, so that
# memory stays flat however many rounds and resamples (10,000 x 10,000 is 800 MB as one matrix).
CHUNK_VALUES = 1 << 20
# The most resampled values one bootstrap may draw (resamples x units): 10,000 resamples of
# 10,000 rounds, a few seconds. Beyond it the cross-check is refused, never silently cut.
MAX_RESAMPLED_VALUES = 10**8


def check_bootstrap_size(n_boot: int, units: int) -> None:
    """Refuse a bootstrap beyond :data:`MAX_RESAMPLED_VALUES` (ValueError, one line)."""
    if n_boot * units > MAX_RESAMPLED_VALUES:
        raise ValueError(
            f"bootstrap of {n_boot:,} resamples of {units:,} values draws {n_boot * units:,} values, over the "
            f"limit of {MAX_RESAMPLED_VALUES:,}: give fewer resamples (n_boot at most "
            f"{MAX_RESAMPLED_VALUES // max(units, 1):,} here)"
        )


def resampled_means(
    arms: list[np.ndarray], *, n_boot: int, rng: np.random.Generator | None = None, indices: Any = None
) -> list[np.ndarray]:
    """The mean of each arm under each of ``n_boot`` resamples of its indices, one index row
    shared by every arm (rounds). Rows are drawn from ``rng`` a chunk at a time: the same
    stream, row for row, as one ``rng.integers(0, m, size=(n_boot, m))``
    (tests/stats/test_limits.py holds them equal), in bounded memory. ``indices``: the
    whole index matrix, given (tests)."""
    m = len(arms[0])
    if indices is not None:
        idx = np.asarray(indices)
        return [arm[idx].mean(axis=1) for arm in arms]
    assert rng is not None
    out = [np.empty(n_boot) for _ in arms]
    rows = max(1, CHUNK_VALUES // max(m, 1))
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        idx = rng.integers(0, m, size=(stop - start, m))
        for arm, means in zip(arms, out):
            means[start:stop] = arm[idx].mean(axis=1)
    return out


def bootstrap_ratios(
    a: Any,
    b: Any,
    *,
    paired: bool,
    seed: int,
    n_boot: int = 10_000,
    indices: Any = None,
) -> np.ndarray:
    """Resampled ratios mean(b*)/mean(a*).

    Paired: one index matrix of rounds, shared by both arms. Unpaired: A's runs are
    drawn first, then B's, from ``Generator(PCG64(seed))``. ``indices`` injects the
    index matrix (paired) or the pair ``(iA, iB)`` (unpaired) instead of drawing.
    """
    av, bv = _as_values(a), _as_values(b)
    if paired and len(av) != len(bv):
        raise ValueError("paired arrays must have the same length")
    if indices is None:
        check_bootstrap_size(n_boot, max(len(av), len(bv)))
    rng = np.random.Generator(np.random.PCG64(seed)) if indices is None else None
    if paired:
        mean_a, mean_b = resampled_means([av, bv], n_boot=n_boot, rng=rng, indices=indices)
    else:
        ia, ib = (None, None) if indices is None else indices
        (mean_a,) = resampled_means([av], n_boot=n_boot, rng=rng, indices=ia)
        (mean_b,) = resampled_means([bv], n_boot=n_boot, rng=rng, indices=ib)
    return mean_b / mean_a


def expanded_alpha(level: float, m: int) -> float:
    """Hesterberg's (2015) expanded percentile: the α' with α'/2 = Φ(-√(m/(m-1))·t_{1-α/2,m-1})."""
    alpha = 1.0 - level
    z = math.sqrt(m / (m - 1)) * t_quantile(1 - alpha / 2, m - 1)
    return 2.0 * norm_cdf(-z)


def percentile_interval(
    ratios: np.ndarray, level: float, *, expanded_m: int | None = None, params: dict | None = None
) -> Interval:
    """Percentile CI (numpy's linear interpolation); expanded when ``expanded_m`` is given."""
    alpha = 1.0 - level if expanded_m is None else expanded_alpha(level, expanded_m)
    low, high = np.percentile(ratios, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    method = "bootstrap-percentile" if expanded_m is None else "bootstrap-expanded-percentile"
    extra = dict(params or {})
    if expanded_m is not None:
        extra["alpha_prime"] = alpha
    return Interval(method, level, float(low), float(high), extra)


def percentile_intervals(
    ratios: np.ndarray, levels: tuple[float, ...], *, expanded_m: int | None = None, params: dict | None = None
) -> list[Interval]:
    """``percentile_interval`` for several levels (plain, then expanded when ``expanded_m``
    is given) from one partition of the resamples."""
    specs = [(level, None) for level in levels]
    if expanded_m is not None:
        specs += [(level, expanded_m) for level in levels]
    alphas = [1.0 - level if m is None else expanded_alpha(level, m) for level, m in specs]
    qs = [q for a in alphas for q in (100 * a / 2, 100 * (1 - a / 2))]
    ends = np.percentile(ratios, qs)
    out = []
    for k, ((level, m), alpha) in enumerate(zip(specs, alphas)):
        extra = dict(params or {})
        if m is not None:
            extra["alpha_prime"] = alpha
        method = "bootstrap-percentile" if m is None else "bootstrap-expanded-percentile"
        out.append(Interval(method, level, float(ends[2 * k]), float(ends[2 * k + 1]), extra))
    return out


def bootstrap_params(*, paired: bool, seed: int, n_boot: int) -> dict[str, object]:
    return {
        "resampling": "rounds" if paired else "runs-within-arm",
        "seed": seed,
        "n_boot": n_boot,
        "rng": "numpy.random.Generator(PCG64(seed))",
        "numpy_version": np.__version__,
    }


@dataclass(frozen=True)
class WelchDifference:
    """Welch's two-sample t on b - a (Georges et al. 2007): t, df, p and the CI of the difference."""

    t: float
    df: float
    p: float
    low: float
    high: float
    se: float


def welch_difference(a: Any, b: Any, level: float = 0.95) -> WelchDifference:
    av, bv = _as_values(a), _as_values(b)
    va, vb = float(av.var(ddof=1)) / len(av), float(bv.var(ddof=1)) / len(bv)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va * va / (len(av) - 1) + vb * vb / (len(bv) - 1))
    diff = float(bv.mean() - av.mean())
    t = diff / se
    half = t_quantile(0.5 + level / 2, df) * se
    return WelchDifference(t, df, t_two_sided_p(t, df), diff - half, diff + half, se)
