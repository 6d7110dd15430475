"""Noise floor, minimum detectable effect and rounds needed (statistics.md section 6.1).

All of it works on log ratios: ``sd_unit`` is the SD of one unit's log ratio (a
round's ln(X_k/A_k) when paired; sqrt(s²_ln A + s²_ln X) for two independent runs
when unpaired) and the standard error with n units is sd_unit/√n.
"""

from __future__ import annotations

import math

from workbench.stats._tdist import chi2_quantile, nct_cdf, t_quantile

MAX_ROUNDS = 10_000


def _df(n: int, paired: bool) -> int:
    return n - 1 if paired else 2 * (n - 1)


def mde_log(sd_unit: float, n: int, *, alpha: float = 0.05, power: float = 0.8, paired: bool = True) -> float:
    """Minimum detectable |ln θ| (two-sided α, given power) with n rounds (or runs per arm),
    by the t approximation (t_{1-α/2} + t_{power})·sd/√n."""
    if n < 2 or not math.isfinite(sd_unit):
        return math.inf
    df = _df(n, paired)
    return (t_quantile(1 - alpha / 2, df) + t_quantile(power, df)) * sd_unit / math.sqrt(n)


def mde_log_exact(sd_unit: float, n: int, *, alpha: float = 0.05, power: float = 0.8, paired: bool = True) -> float:
    """The same, solving the noncentral-t power equation exactly (bisection)."""
    if n < 2 or not math.isfinite(sd_unit):
        return math.inf
    if sd_unit == 0:
        return 0.0
    df = _df(n, paired)
    se = sd_unit / math.sqrt(n)
    tc = t_quantile(1 - alpha / 2, df)

    def achieved(effect: float) -> float:
        nc = effect / se
        return (1.0 - nct_cdf(tc, df, nc)) + nct_cdf(-tc, df, nc)

    lo, hi = 0.0, mde_log(sd_unit, n, alpha=alpha, power=power, paired=paired) * 2 + se
    while achieved(hi) < power:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if achieved(mid) < power:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * max(1.0, hi):
            break
    return (lo + hi) / 2


def pct(log_effect: float) -> float:
    """A log effect as a percentage change: 100·(exp(x) - 1)."""
    return 100.0 * math.expm1(log_effect) if math.isfinite(log_effect) else math.inf


def rounds_needed(
    sd_unit: float,
    delta: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = True,
    goal: str = "detect",
    minimum: int = 3,
    conservative: bool = False,
    sd_from_n: int | None = None,
) -> int | None:
    """Smallest n (rounds, or runs per arm when unpaired) whose MDE resolves δ.

    ``goal="detect"``: (t_{1-α/2} + t_{power})·sd/√n ≤ ln(1+δ).
    ``goal="equivalence"`` (TOST at θ = 1): (t_{1-α} + t_{1-β/2})·sd/√n ≤ ln(1+δ).
    ``conservative`` replaces sd by its upper (1-α) confidence bound
    sd·sqrt((k-1)/χ²_{α,k-1}) where k = ``sd_from_n`` is the n the sd came from.
    Never below ``minimum`` (the hard minimum of 3 rounds); None if more than
    MAX_ROUNDS would be needed or sd is unknown.
    """
    if not math.isfinite(sd_unit) or delta <= 0:
        return None
    if conservative and sd_from_n and sd_from_n >= 2:
        sd_unit = sd_unit * math.sqrt((sd_from_n - 1) / chi2_quantile(alpha, sd_from_n - 1))
    target = math.log1p(delta)
    beta = 1 - power
    if goal not in ("detect", "equivalence"):
        raise ValueError(f"unknown goal {goal!r}")

    def resolves(n: int) -> bool:
        df = _df(n, paired)
        if goal == "detect":
            q = t_quantile(1 - alpha / 2, df) + t_quantile(power, df)
        else:
            q = t_quantile(1 - alpha, df) + t_quantile(1 - beta / 2, df)
        return q * sd_unit / math.sqrt(n) <= target

    # The margin q(n)/√n falls monotonically with n: bracket, then bisect.
    lo = max(2, minimum)
    if resolves(lo):
        return lo
    hi = lo
    while not resolves(hi):
        if hi >= MAX_ROUNDS:
            return None
        lo, hi = hi, min(MAX_ROUNDS, hi * 2)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if resolves(mid):
            hi = mid
        else:
            lo = mid
    return hi
