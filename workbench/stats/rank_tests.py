"""Optional nonparametric checks on run-level values: Mann–Whitney U (unpaired runs) and
Wilcoxon signed-rank (paired rounds). Each result states the smallest p the design can
reach, because with few runs no outcome can reach α (MWU needs 4 runs per arm for 0.05)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.stats._special import special

EXACT_MAX_N = 25  # above this the normal approximation is close, and exact is slow


@dataclass(frozen=True)
class RankTest:
    name: str
    statistic: float
    p: float
    method: str  # "exact" or "asymptotic"
    min_achievable_p: float
    alpha: float = 0.05

    @property
    def can_reach_alpha(self) -> bool:
        return self.min_achievable_p < self.alpha

    def to_json(self) -> dict[str, object]:
        return {
            "test": self.name,
            "statistic": self.statistic,
            "p": self.p,
            "method": self.method,
            "min_achievable_p": self.min_achievable_p,
            "can_reach_alpha": self.can_reach_alpha,
        }


def mwu_min_p(n_a: int, n_b: int) -> float:
    """Smallest exact two-sided Mann–Whitney p: 2/C(n_a + n_b, n_a), capped at 1 (0.0 where
    it is below the smallest double: int / int divides exactly, where a float of the
    binomial coefficient would overflow from 515 runs per arm)."""
    return min(1.0, 2 / math.comb(n_a + n_b, n_a))


def wilcoxon_min_p(n: int) -> float:
    """Smallest exact two-sided signed-rank p with n non-zero differences: 2/2^n (0.0
    beyond the doubles: 2.0 / 2**n overflowed from n = 1024)."""
    return min(1.0, 2 / 2**n)


def mann_whitney(a: Any, b: Any, *, alpha: float = 0.05, method: str = "auto") -> RankTest:
    """Mann–Whitney U of b against a (U is b's). ``auto``: exact without ties and with at
    most 25 values per arm, else the normal approximation with tie and continuity
    correction.

    The arithmetic is scipy's ``mannwhitneyu`` (1.17, two-sided), step for step, so the
    p is the same to the last bit; it lives here because importing ``scipy.stats`` costs
    more than a whole ``wb compare`` (tests/stats/test_rank_tests.py holds them equal)."""
    av, bv = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if method == "auto":
        ties = len(np.unique(np.concatenate([av, bv]))) < len(av) + len(bv)
        method = "exact" if not ties and max(len(av), len(bv)) <= EXACT_MAX_N else "asymptotic"
    if method not in ("exact", "asymptotic"):
        raise ValueError(f"method must be auto, exact or asymptotic, got {method!r}")
    n1, n2 = len(bv), len(av)
    if not n1 or not n2 or np.isnan(av).any() or np.isnan(bv).any():
        raise ValueError("Mann–Whitney U needs values on both sides and no NaN")
    ranks, ties_t = _average_ranks(np.concatenate([bv, av]))
    u1 = np.sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)  # two-sided: the larger U, and twice its tail
    if method == "exact":
        p = _mwu_exact_sf(int(u), n1, n2)
    else:
        p = _mwu_normal_sf(u, n1, n2, ties_t)
    p = float(np.clip(2.0 * p, 0.0, 1.0))
    return RankTest("mann-whitney-u", float(u1), p, method, mwu_min_p(len(av), len(bv)), alpha)


def _average_ranks(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based) and the tie counts in scipy's layout (at each distinct
    value's first sorted position, zeros elsewhere)."""
    order = np.argsort(x, kind="stable")
    y = x[order]
    first = np.concatenate([[True], y[:-1] != y[1:]])
    starts = np.flatnonzero(first)
    counts = np.diff(starts, append=len(y))
    sorted_ranks = np.repeat((starts + 1.0) + (counts.astype(np.float64) - 1) / 2, counts)
    ranks = np.empty_like(sorted_ranks)
    ranks[order] = sorted_ranks
    ties_t = np.zeros(len(x), dtype=np.float64)
    ties_t[first] = counts
    return ranks, ties_t


def _mwu_normal_sf(u: float, n1: int, n2: int, ties_t: np.ndarray) -> float:
    """P(U >= u) by the normal approximation, tie- and continuity-corrected."""
    n = n1 + n2
    tie_term = np.sum(ties_t**3 - ties_t)
    s = np.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (u - n1 * n2 / 2 - 0.5) / s
    return float(special().ndtr(-z))


def _mwu_exact_sf(u: int, n1: int, n2: int) -> float:
    """P(U >= u) under the null for u >= n1*n2/2: the CDF at the complement, from the
    frequencies of U (Löffler's recurrence, as scipy builds them)."""
    small, large = min(n1, n2), max(n1, n2)
    k = small * large - u
    freqs = _u_frequencies(small, large, k)
    return float(np.cumsum(freqs / special().binom(small + large, small))[k])


def _u_frequencies(n1: int, n2: int, maxu: int) -> np.ndarray:
    """How many arrangements give U = 0..maxu (n1 <= n2, maxu <= n1*n2/2): integers
    while they fit in uint64, floats beyond."""
    sigma = np.zeros(maxu + 1, dtype=int)
    for d in np.arange(1, n1 + 1):
        sigma[np.arange(d, maxu + 1, d)] += d
    for d in np.arange(n2 + 1, n2 + n1 + 1):
        sigma[np.arange(d, maxu + 1, d)] -= d
    sigma = sigma[1:]
    freqs = np.zeros(maxu + 1, dtype=np.uint64)
    freqs[0] = 1
    as_uint, uint_max = True, np.iinfo(np.uint64).max
    for k in np.arange(1, maxu + 1):
        value = np.dot(freqs[:k], sigma[k - 1 :: -1]) / k
        if value > uint_max and as_uint:
            freqs, as_uint = freqs.astype(float), False
        freqs[k] = value
    return freqs


def wilcoxon_signed_rank(d: Any, *, alpha: float = 0.05) -> RankTest:
    """Wilcoxon signed-rank on paired differences (e.g. per-round log ratios)."""
    from scipy.stats import wilcoxon

    dv = np.asarray(d, dtype=np.float64).ravel()
    nonzero = int(np.count_nonzero(dv))
    if nonzero == 0:
        return RankTest("wilcoxon-signed-rank", 0.0, 1.0, "exact", 1.0, alpha)
    ties = len(np.unique(np.abs(dv[dv != 0]))) < nonzero
    method = "exact" if nonzero == len(dv) and not ties and nonzero <= EXACT_MAX_N else "approx"
    res = wilcoxon(dv, alternative="two-sided", method=method)
    return RankTest(
        "wilcoxon-signed-rank",
        float(res.statistic),
        float(res.pvalue),
        "exact" if method == "exact" else "asymptotic",
        wilcoxon_min_p(nonzero),
        alpha,
    )
