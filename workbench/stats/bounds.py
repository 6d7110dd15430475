"""Deterministic conservative ratio bounds in exact rationals (statistics.md section 8.7).

These are not confidence intervals: if the stated duration bounds hold, the ratio lies
inside, with certainty; nothing is said about probability.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

Number = int | float | str | Fraction

SLOWER_CERTAIN = "SLOWER_CERTAIN"
FASTER_CERTAIN = "FASTER_CERTAIN"
UNDETERMINED = "UNDETERMINED"


def to_fraction(x: Number) -> Fraction:
    """An exact rational from an int, a decimal string ("99.5", "1e3", "3/4") or a float
    (floats are taken at their exact binary value)."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"not a finite number: {x!r}")
    try:
        return Fraction(x.strip()) if isinstance(x, str) else Fraction(x)
    except (ValueError, ZeroDivisionError) as exc:
        raise ValueError(f"not a number: {x!r}") from exc


def round_down(x: Fraction, places: int) -> Fraction:
    scale = 10**places
    return Fraction(math.floor(x * scale), scale)


def round_up(x: Fraction, places: int) -> Fraction:
    scale = 10**places
    return Fraction(math.ceil(x * scale), scale)


def decimal_str(x: Fraction, places: int) -> str:
    """A fraction that is a multiple of 10^-places, written with exactly that many decimals."""
    scaled = x * 10**places
    assert scaled.denominator == 1
    n = scaled.numerator
    sign = "-" if n < 0 else ""
    digits = str(abs(n)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}" if places else f"{sign}{digits}"


def outward(low: Fraction, high: Fraction, places: int = 8) -> tuple[str, str]:
    """[low, high] rounded outward (low down, high up) for display."""
    return decimal_str(round_down(low, places), places), decimal_str(round_up(high, places), places)


@dataclass(frozen=True)
class BoundsResult:
    """Exact bounds on candidate/baseline ratios implied by stated duration bounds."""

    baseline: tuple[Fraction, Fraction]
    candidate: tuple[Fraction, Fraction]
    time_ratio: tuple[Fraction, Fraction]
    throughput_ratio: tuple[Fraction, Fraction]
    verdict: str
    work: Fraction | None = None
    unit: str | None = None
    baseline_throughput: tuple[Fraction, Fraction] | None = None
    candidate_throughput: tuple[Fraction, Fraction] | None = None

    @property
    def time_change_pct(self) -> tuple[Fraction, Fraction]:
        return (100 * (self.time_ratio[0] - 1), 100 * (self.time_ratio[1] - 1))

    @property
    def throughput_change_pct(self) -> tuple[Fraction, Fraction]:
        return (100 * (self.throughput_ratio[0] - 1), 100 * (self.throughput_ratio[1] - 1))

    def to_json(self, places: int = 8) -> dict[str, Any]:
        def pair(p: tuple[Fraction, Fraction]) -> list[float]:
            return [float(p[0]), float(p[1])]

        def exact(p: tuple[Fraction, Fraction]) -> list[str]:
            return [str(p[0]), str(p[1])]

        out: dict[str, Any] = {
            "kind": "deterministic-bounds",
            "note": "not a confidence interval: certain if the stated bounds hold, no probability attached",
            "baseline": exact(self.baseline),
            "candidate": exact(self.candidate),
            "time_ratio": pair(self.time_ratio),
            "throughput_ratio": pair(self.throughput_ratio),
            "time_ratio_exact": exact(self.time_ratio),
            "throughput_ratio_exact": exact(self.throughput_ratio),
            "time_ratio_display": list(outward(*self.time_ratio, places)),
            "throughput_ratio_display": list(outward(*self.throughput_ratio, places)),
            "time_change_pct": pair(self.time_change_pct),
            "throughput_change_pct": pair(self.throughput_change_pct),
            "verdict": self.verdict,
        }
        if self.work is not None:
            out["work"] = {"amount": str(self.work), "unit": self.unit}
            out["baseline_throughput"] = pair(self.baseline_throughput)  # type: ignore[arg-type]
            out["candidate_throughput"] = pair(self.candidate_throughput)  # type: ignore[arg-type]
            out["baseline_throughput_exact"] = exact(self.baseline_throughput)  # type: ignore[arg-type]
            out["candidate_throughput_exact"] = exact(self.candidate_throughput)  # type: ignore[arg-type]
        return out


def bounds(
    a_low: Number, a_high: Number, b_low: Number, b_high: Number, work: Number | None = None, unit: str | None = None
) -> BoundsResult:
    """Conservative ratio bounds from duration bounds for the same fixed work.

    Baseline A in [a_low, a_high], candidate B in [b_low, b_high]:
    time ratio B/A in [b_low/a_high, b_high/a_low]; throughput ratio in
    [a_low/b_high, a_high/b_low]. Refuses non-positive or inverted bounds
    (ValueError). ``work`` (per duration) adds throughput bounds work/duration.
    """
    a1, a2, b1, b2 = (to_fraction(v) for v in (a_low, a_high, b_low, b_high))
    for name, lo, hi in (("baseline", a1, a2), ("candidate", b1, b2)):
        if lo <= 0 or hi <= 0:
            raise ValueError(f"{name} bounds must be positive durations, got [{lo}, {hi}]")
        if lo > hi:
            raise ValueError(f"{name} bounds are inverted: {lo} > {hi}")
    time_ratio = (b1 / a2, b2 / a1)
    thr_ratio = (a1 / b2, a2 / b1)
    if thr_ratio[1] < 1:
        verdict = SLOWER_CERTAIN
    elif thr_ratio[0] > 1:
        verdict = FASTER_CERTAIN
    else:
        verdict = UNDETERMINED
    w = None
    base_thr = cand_thr = None
    if work is not None:
        w = to_fraction(work)
        if w <= 0:
            raise ValueError(f"work must be positive, got {w}")
        base_thr = (w / a2, w / a1)
        cand_thr = (w / b2, w / b1)
    return BoundsResult((a1, a2), (b1, b2), time_ratio, thr_ratio, verdict, w, unit, base_thr, cand_thr)
