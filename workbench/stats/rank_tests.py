"""Optional nonparametric checks on run-level values: Mann–Whitney U (unpaired runs) and
Wilcoxon signed-rank (paired rounds). Each result states the smallest p the design can
reach, because with few runs no outcome can reach α (MWU needs 4 runs per arm for 0.05)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

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

    def to_json(self) -> dict[str, Any]:
        return {
            "test": self.name,
            "statistic": self.statistic,
            "p": self.p,
            "method": self.method,
            "min_achievable_p": self.min_achievable_p,
            "can_reach_alpha": self.can_reach_alpha,
        }


def mwu_min_p(n_a: int, n_b: int) -> float:
    """Smallest exact two-sided Mann–Whitney p: 2/C(n_a + n_b, n_a), capped at 1."""
    return min(1.0, 2.0 / math.comb(n_a + n_b, n_a))


def wilcoxon_min_p(n: int) -> float:
    """Smallest exact two-sided signed-rank p with n non-zero differences: 2/2^n."""
    return min(1.0, 2.0 / 2**n)


def mann_whitney(a: Any, b: Any, *, alpha: float = 0.05, method: str = "auto") -> RankTest:
    """Mann–Whitney U of b against a (U is b's). ``auto``: exact without ties and with at
    most 25 values per arm, else the normal approximation with tie and continuity
    correction. The method is always passed explicitly to scipy (its own default changed)."""
    from scipy.stats import mannwhitneyu

    av, bv = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if method == "auto":
        ties = len(np.unique(np.concatenate([av, bv]))) < len(av) + len(bv)
        method = "exact" if not ties and max(len(av), len(bv)) <= EXACT_MAX_N else "asymptotic"
    res = mannwhitneyu(bv, av, alternative="two-sided", method=method)
    return RankTest("mann-whitney-u", float(res.statistic), float(res.pvalue), method, mwu_min_p(len(av), len(bv)), alpha)


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
