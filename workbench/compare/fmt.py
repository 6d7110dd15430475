"""Numbers as people read them: "110 ms → 230 ms, +120 ms (+109 %)"."""

from __future__ import annotations

import math
from typing import Any

from workbench.textsafe import clean

# The strict-JSON helpers live in the vocabulary; these names stay for the callers that read them here.
from workbench.vocabulary import NULL_REASON as NULL_REASON, from_jsonable as from_jsonable, jsonable as jsonable
from workbench.vocabulary import record_json as record_json


def num(value: float | None) -> str:
    """A number with about three significant digits, no exponent; "unknown" for nan/None."""
    if value is None or not math.isfinite(value):
        return "unknown"
    a = abs(value)
    if a >= 100 or a == 0:
        text = f"{value:.0f}"
    elif a >= 10:
        text = f"{value:.1f}"
    elif a >= 1:
        text = f"{value:.2f}"
    else:
        text = f"{value:.3g}"
    if "." in text and "e" not in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def qty(value: float | None, unit: str) -> str:
    if value is None or not math.isfinite(value):
        return "unknown"
    if unit == "%":
        return f"{num(value)} %"
    if unit == "fraction":
        return f"{num(100.0 * value)} %"
    return f"{num(value)} {clean(unit)}".rstrip()  # a unit may come from a capture


def signed(value: float, unit: str = "") -> str:
    text = qty(abs(value), unit)
    return ("+" if value > 0 else "−" if value < 0 else "±") + text


def change(baseline: float | None, candidate: float | None, unit: str) -> str:
    """``"110 ms → 230 ms, +120 ms (+109 %)"``; the percentage is left out when the
    baseline is zero and the delta when either side is unknown ("not recorded on either
    side" when both are: never "unknown → unknown")."""
    known = [v is not None and math.isfinite(v) for v in (baseline, candidate)]
    if not any(known):
        return "not recorded on either side"
    head = f"{qty(baseline, unit)} → {qty(candidate, unit)}"
    if baseline is None or candidate is None or not (math.isfinite(baseline) and math.isfinite(candidate)):
        return head
    delta = candidate - baseline
    text = f"{head}, {signed(delta, unit)}"
    if baseline != 0:
        text += f" ({signed(100.0 * delta / abs(baseline), '%')})"
    return text


def censored_change(baseline: float | None, candidate: float | None, unit: str, censored: Any) -> str:
    """A mean wait whose side has no finished wait (no job started) given as its lower bound,
    with the jobs still waiting: ``"11.8 s → ≥ 5,400 s (6 jobs still waiting, none started)"``,
    and the change as a bound when the other side is known; never "→ unknown"."""
    bounds: list[tuple[str, float | None, bool]] = []
    for value, side in ((baseline, censored.baseline), (candidate, censored.candidate)):
        low = side.mean_at_least_s if isinstance(side.mean_at_least_s, float) else None
        if value is not None and math.isfinite(value):
            bounds.append((qty(value, unit), value, False))
        elif low is not None:
            jobs = f"{side.jobs} job{'s' if side.jobs != 1 else ''} still waiting, none started"
            bounds.append((f"≥ {qty(low, unit)} ({jobs})", low, True))
        else:
            bounds.append((qty(value, unit), None, False))
    (b_text, b, b_low), (c_text, c, c_low) = bounds
    head = f"{b_text} → {c_text}"
    if b is None or c is None or b_low == c_low:
        return head  # both bounds, or one unknown: no bound on the change
    if c_low:  # candidate at least c: the change at least c − b
        return f"{head}, at least {signed(c - b, unit)}"
    return f"{head}, at most {signed(c - b, unit)}"


def bucket(low: float | None, high: float | None, unit: str) -> str:
    """Where histogram buckets place a figure: "[60, 80] ms", or "at least 80 ms" (+Inf bucket)."""
    if high is None or not math.isfinite(high):
        return f"at least {qty(low, unit)}"
    return f"[{num(low)}, {num(high)}] {clean(unit)}".rstrip()


def bucketed_change(baseline: float | None, candidate: float | None, unit: str, bucketed: Any) -> str:
    """A histogram percentile's change with its bucket bounds: never "±0 ms" when the
    buckets only place both figures in one interval. ``bucketed``: a ``results.Bucketed``."""
    b = bucket(bucketed.baseline_low, bucketed.baseline_high, unit)
    c = bucket(bucketed.candidate_low, bucketed.candidate_high, unit)
    where = f"both in the histogram bucket {b}" if b == c else f"histogram buckets {b} → {c}"
    head = f"{qty(baseline, unit)} → {qty(candidate, unit)} (interpolated; {where})"
    if bucketed.within_resolution:
        return f"{head}: within the histogram's resolution"
    lo, hi = bucketed.delta_low, bucketed.delta_high
    if lo is None and hi is None:
        return f"{head}: the buckets do not bound the change"
    allowed = (
        f"between {signed(lo, unit)} and {signed(hi, unit)}"
        if lo is not None and hi is not None
        else f"of at least {signed(lo, unit)}"
        if lo is not None
        else f"of at most {signed(hi, unit)}"
    )
    return f"{head}: a change {allowed}"
