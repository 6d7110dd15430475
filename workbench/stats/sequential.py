"""Sequential stopping for interleaved reruns: look after every round, keep the error at α.

Looking at the interval after each round and stopping when it clears the band inflates
the false-positive rate (ten looks at a nominal 5 % give well over 10 %). A rerun plan
knows its maximum number of rounds N, so we use a **group-sequential design with
Lan–DeMets alpha spending** (O'Brien–Fleming-type by default, Pocock-type on request):
the look after round n spends α*(n/N) − α*(previous), and its boundary z_k is solved by
recursive numerical integration over the Brownian-motion form of the look statistics
(Armitage, McPherson & Rowe 1969) so that the chance of crossing at look k and not
before, with no effect, is exactly that increment. From the boundaries come *repeated
confidence intervals* (Jennison & Turnbull 1989): intervals for the mean per-round log
ratio that cover the true value at every look at once with probability 1 − α. A look
stops when its interval clears the practical band, exactly as the fixed design's rules
decide (``analysis.decide``), so the false REGRESSION rate across all looks stays ≤ α/2;
where the A/A control's noise floor is above the band, the control rule of the fixed
analysis applies at each look too (``aa_control``, ``workbench.stats.control``).

Why not an always-valid confidence sequence: a plan has a known maximum N, and a
spending design spends all of α by N, so at the last round it is nearly as narrow as the
fixed design; a confidence sequence pays for unlimited looks it does not need. The look
statistic uses the estimated spread of 3–30 rounds, so each z boundary is applied as a t
quantile with n − 1 degrees of freedom at the same tail probability; ``bench/sequential.py``
checks the resulting error rates by simulation (docs/methods.md has its table).

Everything below works on arrays of sessions at once, so the simulation and a live
rerun go through the same code.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from workbench.stats import control
from workbench.stats._special import special

from workbench.stats.analysis import (
    EQUIVALENT,
    FASTER_UNRESOLVED,
    IMPROVEMENT,
    INCONCLUSIVE,
    MIN_ROUNDS,
    REGRESSION,
    SLOWER_UNRESOLVED,
)

CONTINUE = "CONTINUE"
SPENDING = ("obrien-fleming", "pocock")
STOPPINGS = ("fixed", "sequential")
FIRST_LOOK = MIN_ROUNDS  # no interval is worth a look before round 3
# Looks of one design at most: each costs a pass of the boundary integration, and a look
# after every one of 10,000 rounds buys nothing over one every 100 (the spending holds
# for any schedule fixed before the data).
MAX_LOOKS = 100

_GRID_HALF_WIDTH = 10.0  # the B-value grid spans ±10 (B = Z·√t, t ≤ 1)
_GRID_STEP = 0.0025


def spent(t: float, alpha: float, spending: str) -> float:
    """Cumulative error spent by information fraction ``t`` (Lan–DeMets)."""
    if t <= 0:
        return 0.0
    t = min(t, 1.0)
    if spending == "obrien-fleming":
        return float(2.0 - 2.0 * special().ndtr(special().ndtri(1.0 - alpha / 2.0) / math.sqrt(t)))
    if spending == "pocock":
        return float(alpha * math.log(1.0 + (math.e - 1.0) * t))
    raise ValueError(f"unknown spending function {spending!r} (known: {', '.join(SPENDING)})")


@lru_cache(maxsize=256)
def boundaries(
    fractions: tuple[float, ...], alpha: float, spending: str = "obrien-fleming", sides: int = 2
) -> tuple[float, ...]:
    """The z boundary of each look at information fractions ``fractions`` (increasing, last 1).

    ``sides=2``: P(|Z_k| ≥ z_k at some look | no effect) = α, spent per look as the
    spending function says; ``sides=1``: the upper boundary alone. ``inf`` where a look
    spends nothing.
    """
    if (
        not fractions
        or any(b <= a for a, b in zip(fractions, fractions[1:]))
        or not 0 < fractions[0]
        or fractions[-1] > 1 + 1e-12
    ):
        raise ValueError(f"information fractions must increase within (0, 1]: {fractions}")
    grid = np.arange(-_GRID_HALF_WIDTH, _GRID_HALF_WIDTH + _GRID_STEP / 2, _GRID_STEP)
    mass: np.ndarray | None = None  # probability mass, per grid cell, of paths not yet stopped
    previous_t = 0.0
    previous_spent = 0.0
    out: list[float] = []
    for t in fractions:
        step_sd = math.sqrt(t - previous_t)
        if mass is None:
            edges = np.concatenate(([-np.inf], (grid[:-1] + grid[1:]) / 2, [np.inf]))
            mass = np.diff(special().ndtr(edges / step_sd))
        else:
            reach = int(math.ceil(8 * step_sd / _GRID_STEP))
            offsets = np.arange(-reach, reach + 1) * _GRID_STEP
            kernel = np.diff(
                special().ndtr(np.concatenate((offsets - _GRID_STEP / 2, [offsets[-1] + _GRID_STEP / 2])) / step_sd)
            )
            mass = np.convolve(mass, kernel, mode="same")
        target = spent(t, alpha, spending) - previous_spent
        z = _solve(grid, mass, target, math.sqrt(t), sides)
        out.append(z)
        if math.isfinite(z):
            b = z * math.sqrt(t)
            keep = grid < b if sides == 1 else np.abs(grid) < b
            mass = np.where(keep, mass, 0.0)
        previous_spent += target
        previous_t = t
    return tuple(out)


def _tail(edges: np.ndarray, cdf: np.ndarray, b: float, sides: int) -> float:
    """Mass at or beyond ``b`` (and ``-b`` when two-sided), each cell's mass spread evenly
    over its width so the tail is continuous in ``b``."""
    upper = cdf[-1] - float(np.interp(b, edges, cdf))
    return upper if sides == 1 else upper + float(np.interp(-b, edges, cdf))


def _solve(grid: np.ndarray, mass: np.ndarray, target: float, sqrt_t: float, sides: int) -> float:
    """The z whose tail mass at this look equals ``target`` (bisection on the B scale)."""
    if target <= 1e-15:
        return math.inf
    edges = np.concatenate(([grid[0] - _GRID_STEP / 2], grid + _GRID_STEP / 2))
    cdf = np.concatenate(([0.0], np.cumsum(mass)))  # once per look: the bisection only reads it
    lo, hi = 0.0, _GRID_HALF_WIDTH
    for _ in range(60):
        mid = (lo + hi) / 2
        if _tail(edges, cdf, mid, sides) > target:
            lo = mid
        else:
            hi = mid
    return hi / sqrt_t


@dataclass(frozen=True)
class SequentialDesign:
    """Looks after every round from ``first_look`` to ``max_rounds``, at level ``alpha``."""

    max_rounds: int
    alpha: float = 0.05
    spending: str = "obrien-fleming"
    first_look: int = FIRST_LOOK

    def __post_init__(self) -> None:
        if self.spending not in SPENDING:
            raise ValueError(f"unknown spending function {self.spending!r} (known: {', '.join(SPENDING)})")
        if self.max_rounds < self.first_look:
            raise ValueError(f"a sequential plan needs at least {self.first_look} rounds, got {self.max_rounds}")

    @property
    def looks(self) -> tuple[int, ...]:
        """After every round from ``first_look``; beyond :data:`MAX_LOOKS` looks, spread evenly
        over the same span (the last round always one of them)."""
        span = self.max_rounds - self.first_look
        if span < MAX_LOOKS:
            return tuple(range(self.first_look, self.max_rounds + 1))
        return tuple(sorted({self.first_look + round(i * span / (MAX_LOOKS - 1)) for i in range(MAX_LOOKS)}))

    def last_look(self, rounds: int) -> int | None:
        """The latest look after ``rounds`` complete rounds (None before the first)."""
        done = [n for n in self.looks if n <= rounds]
        return done[-1] if done else None

    def z(self, level_alpha: float) -> dict[int, float]:
        """Two-sided z boundary per look (round number) for a 1 − ``level_alpha`` interval."""
        fractions = tuple(n / self.max_rounds for n in self.looks)
        return dict(zip(self.looks, boundaries(fractions, level_alpha, self.spending, 2)))

    def to_json(self) -> dict[str, object]:
        return {
            "stopping": "sequential",
            "max_rounds": self.max_rounds,
            "alpha": self.alpha,
            "spending": self.spending,
            "first_look": self.first_look,
        }


def t_boundary(z: float, n: int) -> float:
    """The z boundary applied as a t quantile (n − 1 df) at the same one-sided tail."""
    from scipy.stats import t as t_dist

    if not math.isfinite(z):
        return math.inf
    return float(t_dist.isf(special().ndtr(-z), n - 1))


def repeated_interval(mean: np.ndarray, sd: np.ndarray, n: int, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Repeated confidence interval for the mean log ratio after ``n`` rounds."""
    half = t_boundary(z, n) * sd / math.sqrt(n)
    half = np.where(np.isfinite(half), half, np.inf)
    return mean - half, mean + half


def decide_at(
    design: SequentialDesign,
    n: int,
    mean: np.ndarray,
    sd: np.ndarray,
    delta: float,
    *,
    unstable: np.ndarray | None = None,
    widen: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """The decision of the look after round ``n`` for each session (arrays of equal shape).

    ``mean``/``sd``: mean and standard deviation of the per-round log ratios (time-like,
    > 0 is slower). ``unstable``: the A/A control's guard at this look; an unstable
    session never stops early, and ends INCONCLUSIVE at the last round. ``widen``: the
    control rule (``aa_control``): where its mask is set, the spread scaled by its factor
    and a change also needs the α/5 repeated interval to exclude 0.
    """
    band = math.log1p(delta)
    low95, high95, low90, high90 = verdict_intervals(design, n, mean, sd, widen)
    beyond_up, beyond_down = low95 > band, high95 < -band
    if widen is not None and np.any(widen[0]):
        mask, factor = widen
        strict = design.alpha / control.STRICTER
        low, high = repeated_interval(mean, sd * np.where(mask, factor, 1.0), n, design.z(strict)[n])
        beyond_up &= ~mask | (low > 0)
        beyond_down &= ~mask | (high < 0)
    out = np.full(np.shape(mean), CONTINUE, dtype=object)
    out[(low90 >= -band) & (high90 <= band)] = EQUIVALENT
    out[beyond_down] = IMPROVEMENT
    out[beyond_up] = REGRESSION
    if n >= design.max_rounds:
        undecided = out == CONTINUE
        out[undecided] = INCONCLUSIVE
        out[undecided & (low95 > 0)] = SLOWER_UNRESOLVED
        out[undecided & (high95 < 0)] = FASTER_UNRESOLVED
    if unstable is not None:
        out[unstable & (out != CONTINUE)] = INCONCLUSIVE if n >= design.max_rounds else CONTINUE
    return out


def verdict_intervals(
    design: SequentialDesign, n: int, mean: np.ndarray, sd: np.ndarray, widen: tuple[np.ndarray, np.ndarray] | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The repeated 95 % and 90 % intervals a look decides on; where the control rule's mask
    is set, with the spread scaled by its factor."""
    if widen is not None:
        sd = sd * np.where(widen[0], widen[1], 1.0)
    low95, high95 = repeated_interval(mean, sd, n, design.z(design.alpha)[n])
    low90, high90 = repeated_interval(mean, sd, n, design.z(2 * design.alpha)[n])
    return low95, high95, low90, high90


def aa_unstable(design: SequentialDesign, n: int, mean: np.ndarray, sd: np.ndarray, delta: float) -> np.ndarray:
    """The A/A stability guard on the repeated interval: A′ differs from A by more than
    half the band, and the difference is real (its interval excludes 0)."""
    low, high = repeated_interval(mean, sd, n, design.z(design.alpha)[n])
    return ((low > 0) | (high < 0)) & (np.abs(mean) > math.log1p(delta) / 2)


def aa_control(
    design: SequentialDesign, n: int, mean: np.ndarray, sd: np.ndarray, delta: float, effect_sd: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The control rule at this look (``workbench.stats.control``): where the A/A CI90 of the
    rounds so far is not inside the band (its noise floor is above it: UNDERPOWERED, as a fixed
    analysis of these rounds says), the mask; and the factor on the effect's spread."""
    band = math.log1p(delta)
    one_look = float(special().ndtri(1 - design.alpha))  # the fixed design's CI90, not the repeated one
    low90, high90 = repeated_interval(mean, sd, n, one_look)
    mask = ~((low90 >= -band) & (high90 <= band))
    return mask, control.scale(sd, effect_sd)


@dataclass(frozen=True)
class Look:
    """One look of a live rerun: the interval, the decision and why."""

    round: int
    ratio: float
    low95: float  # the repeated 95 % interval (widened where the control rule changed the decision)
    high95: float
    decision: str
    aa_unstable: bool | None
    widened: float | None = None  # the control rule changed the decision: the factor on the spread (1: level only)

    def to_json(self) -> dict[str, object]:
        return {
            "round": self.round,
            "ratio": self.ratio,
            "ci95": [self.low95, self.high95],
            "decision": self.decision,
            "aa_unstable": self.aa_unstable,
            "widened": self.widened,
        }


def look(
    design: SequentialDesign,
    log_ratios: Sequence[float],
    delta: float,
    aa_log_ratios: Sequence[float] | None = None,
    *,
    widen: bool = True,
) -> Look:
    """The look after the rounds so far (one per-round log ratio each, time-like).
    ``widen=False``: without the control rule (the model alone, for the bench's comparison)."""
    x = np.asarray(log_ratios, dtype=float)
    last = design.last_look(len(x))
    if last is None:
        n = len(x)
        return Look(n, math.exp(float(x.mean())) if n else math.nan, math.nan, math.nan, CONTINUE, None)
    n = last  # between looks, the latest look stands
    x = x[:n]
    mean, sd = np.array([x.mean()]), np.array([x.std(ddof=1)])
    unstable = rule = None
    if aa_log_ratios is not None:
        y = np.asarray(aa_log_ratios, dtype=float)[:n]
        aa_mean, aa_sd = np.array([y.mean()]), np.array([y.std(ddof=1)])
        unstable = aa_unstable(design, n, aa_mean, aa_sd, delta)
        if widen:
            rule = aa_control(design, n, aa_mean, aa_sd, delta, sd)
    decision = decide_at(design, n, mean, sd, delta, unstable=unstable, widen=rule)[0]
    if rule is not None and decision == decide_at(design, n, mean, sd, delta, unstable=unstable)[0]:
        rule = None  # the rule is said where it changes the decision, as in a fixed analysis
    low, high, _, _ = verdict_intervals(design, n, mean, sd, rule)
    return Look(
        n,
        _exp(float(mean[0])),
        _exp(float(low[0])),
        _exp(float(high[0])),
        str(decision),
        None if unstable is None else bool(unstable[0]),
        float(rule[1][0]) if rule is not None and bool(rule[0][0]) else None,
    )


def _exp(x: float) -> float:
    """exp, infinite past the largest double (an interval widened without bound)."""
    return math.exp(x) if x < 709.0 else math.inf


def simulate(
    design: SequentialDesign,
    *,
    effect: float,
    cv: float,
    delta: float,
    sessions: int,
    seed: int = 12345,
    aa_effect: float = 0.0,
    widen: bool = True,
) -> dict[str, float]:
    """Simulated A/B/A′ sessions: run values lognormal with coefficient of variation ``cv``,
    B slower by ``effect`` (0.05 = 5 %). Returns the rate of each final decision and the
    mean rounds used (what bench/sequential.py tabulates). ``widen``: with the control rule."""
    rng = np.random.default_rng(seed)
    s = math.sqrt(math.log1p(cv * cv))
    shape = (sessions, design.max_rounds)
    log_a = rng.normal(0.0, s, shape)
    log_b = rng.normal(math.log1p(effect), s, shape)
    log_ap = rng.normal(math.log1p(aa_effect), s, shape)
    d, d_aa = log_b - log_a, log_ap - log_a
    decided = np.full(sessions, "", dtype=object)
    used = np.full(sessions, design.max_rounds)
    counts = np.arange(1, design.max_rounds + 1)
    means, means_aa = np.cumsum(d, axis=1) / counts, np.cumsum(d_aa, axis=1) / counts
    sq, sq_aa = np.cumsum(d * d, axis=1), np.cumsum(d_aa * d_aa, axis=1)
    for n in design.looks:
        open_ = decided == ""
        if not open_.any():
            break
        m, m_aa = means[:, n - 1], means_aa[:, n - 1]
        sd = np.sqrt(np.maximum(sq[:, n - 1] - n * m * m, 0.0) / (n - 1))
        sd_aa = np.sqrt(np.maximum(sq_aa[:, n - 1] - n * m_aa * m_aa, 0.0) / (n - 1))
        unstable = aa_unstable(design, n, m_aa, sd_aa, delta)
        rule = aa_control(design, n, m_aa, sd_aa, delta, sd) if widen else None
        decision = decide_at(design, n, m, sd, delta, unstable=unstable, widen=rule)
        stop = open_ & (decision != CONTINUE)
        decided[stop] = decision[stop]
        used[stop] = n
    rates = {
        v: float(np.mean(decided == v))
        for v in (REGRESSION, IMPROVEMENT, EQUIVALENT, SLOWER_UNRESOLVED, FASTER_UNRESOLVED, INCONCLUSIVE)
    }
    rates["mean_rounds"] = float(used.mean())
    return rates


def fixed_rates(
    rounds: int,
    *,
    effect: float,
    cv: float,
    delta: float,
    sessions: int,
    seed: int = 12345,
    alpha: float = 0.05,
    widen: bool = True,
) -> dict[str, float]:
    """The fixed design of ``rounds`` rounds, one look at the end, on the same simulated data
    model (a single look spends all of α: its boundary is the ordinary t quantile)."""
    return simulate(
        SequentialDesign(rounds, alpha=alpha, first_look=rounds),
        effect=effect,
        cv=cv,
        delta=delta,
        sessions=sessions,
        seed=seed,
        widen=widen,
    )
