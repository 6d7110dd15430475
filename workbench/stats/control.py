"""The control rule: a verdict that respects what the A/A control shows (docs/methods.md section 6).

Under the model (independent rounds, one spread of the per-round log ratio), REGRESSION
needs the CI95 above 1 + δ. While the noise floor is inside the band that is rare in an A/A
session; where the control's noise floor is above the band (its CI90 is not inside
[1/(1+δ), 1+δ]: the ``UNDERPOWERED`` flag), δ is small beside the interval, "beyond δ" is
nearly "beyond 1", and up to α/2 of A/A sessions end REGRESSION (as many IMPROVEMENT). On
real run times (``bench/aa_sessions.py``) the model alone called 1.7 % of A/A sessions
REGRESSION or IMPROVEMENT, 3.2 % in the worst cell. There the control also shows what B/A's
own scatter can understate: two runs of the same baseline differing more than B and A do.

So, where the control's noise floor is above the band:

1. every interval the verdict reads is widened by what the control shows: its log
   half-widths scaled by the session's scatter as A′/A and B/A show it together over B/A's
   own (``scale``), where that is larger;
2. REGRESSION and IMPROVEMENT need, besides the CI95 clearing the band, the interval at
   level 1 − α/5 (99 %) excluding 1. In an A/A session that happens at most α/5 of the time
   under the model, whatever the noise; in a quiet session (δ well beyond the interval) it
   follows from the first condition and costs nothing.

Fixed analyses (``analysis.analyze``) and sequential looks (``sequential.look``, on the
repeated intervals) both go through :func:`scale` and :data:`STRICTER`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from workbench.stats.intervals import Interval

STRICTER = 5  # the level a difference from 1 must also hold at: α/5 (0.01 at the default α)


def scale(sd_control: ArrayLike, sd_effect: ArrayLike) -> np.ndarray:
    """The factor on the effect's log half-widths: the session's scatter as both ratios show
    it (the root mean square of the control's and the effect's: under the null they estimate
    one spread) over the effect's own, never below 1. 1 where either is unknown, infinite
    where the effect's rounds agree exactly and the control's do not. Elementwise."""
    c, e = np.asarray(sd_control, dtype=float), np.asarray(sd_effect, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.where(e > 0, np.maximum(1.0, np.sqrt((c * c + e * e) / 2) / e), np.inf)
    return np.where(np.isfinite(c) & (c > 0) & np.isfinite(e), ratio, 1.0)


def widen(interval: Interval, estimate: float, factor: float) -> Interval:
    """``interval`` with its log distances from ``estimate`` multiplied by ``factor``
    (unbounded when it was, or when the factor is infinite), as the interval a verdict reads."""
    if factor == 1.0:
        low, high = interval.low, interval.high
    elif not interval.bounded or interval.low <= 0 or estimate <= 0 or not math.isfinite(factor):
        low, high = -math.inf, math.inf
    else:
        low = estimate * (interval.low / estimate) ** factor
        high = estimate * (interval.high / estimate) ** factor
    return Interval(interval.method, interval.level, low, high, {**interval.params, "role": "verdict"})


def explain(alpha: float, factor: float) -> str:
    """The rule in words, for a report's reason."""
    scaled = f"its intervals widened ×{factor:.3g} to the scatter the control shows, and " if factor > 1 else ""
    return (
        f"the A/A control's noise floor is above the band: {scaled}a change also needs the "
        f"{100 * (1 - alpha):g} % interval to exclude 1 (α/{STRICTER})"
    )


@dataclass(frozen=True)
class Widening:
    """The intervals the verdict read under the control rule, and why."""

    alpha: float  # the level a change must also hold at (α / STRICTER)
    scale: float  # the log half-widths multiplied by this (``scale``: ≥ 1)
    ci95: Interval  # the CI95, CI90 and the 1 - alpha interval, each widened by ``scale``
    ci90: Interval
    strict: Interval
    model_verdict: str = ""  # what the model alone said (reported where the rule changed it)
    model_gate: str = ""

    @property
    def why(self) -> str:
        return explain(self.alpha, self.scale)

    def to_json(self) -> dict[str, object]:
        return {
            "rule": "control",
            "alpha": self.alpha,
            "scale": self.scale,
            "intervals": [self.ci95.to_json(), self.ci90.to_json(), self.strict.to_json()],
            "model_verdict": self.model_verdict,
            "model_gate": self.model_gate,
            "why": self.why,
        }
