"""Numbers as people read them, every format wb prints in one place: a figure with about three
significant digits (``num``), a quantity with its unit (``qty``), a change between two sides
("110 ms → 230 ms, +120 ms (+109 %)"), percentages, fixed decimals and byte sizes.

A missing figure is "unknown" unless the caller's report has its own word for it (``missing``):
never 0. A unit may come from a capture, so it goes through ``clean``.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

from workbench.textsafe import clean

MINUS = "\u2212"  # the typographic minus of num/qty/signed, which a few tables use for percentages too


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


def signed(value: float | None, unit: str = "") -> str:
    """A change with its sign, "+120 ms", "−3 %", "±0 ms"; "unknown" when it is."""
    if value is None or not math.isfinite(value):
        return "unknown"
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


def fixed(value: float | None, digits: int, *, missing: str = "unknown") -> str:
    """``value`` with ``digits`` decimals (statistics whose precision is the point: "0.123457")."""
    return missing if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def significant(value: object, digits: int = 4, *, sign: bool = False, grouped: bool = False) -> str:
    """A number with ``digits`` significant digits ("1.235e+04" past them), "unknown" for
    anything that is not one; ``grouped``: thousands separated, and a million or more whole."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return "unknown"
    if grouped:
        return f"{value:,.{digits}g}" if abs(value) < 1e6 else f"{value:,.0f}"
    return f"{value:+.{digits}g}" if sign else f"{value:.{digits}g}"


def figure(value: object) -> str:
    """Any stored value as a table shows it: a float with four significant digits, thousands
    grouped; "unknown" for none; anything else as its text."""
    if value is None:
        return "unknown"
    return significant(value, grouped=True) if isinstance(value, float) else str(value)


def signed_percent(value: float | None, digits: int, *, missing: str = "unknown", minus: str = "-") -> str:
    """A percentage already in percent, always signed: "+1.23 %" (``minus``: "-" or ``MINUS``)."""
    if value is None or not math.isfinite(value):
        return missing
    return f"{value:+.{digits}f} %".replace("-", minus)


def percent_change(baseline: float, candidate: float) -> str:
    """Candidate against baseline in whole percent, "+12 %" / "−8 %"; "n/a" from a zero baseline."""
    return signed_percent(100.0 * (candidate - baseline) / abs(baseline), 0, minus=MINUS) if baseline else "n/a"


def percent(fraction: float, digits: int, *, sign: bool = False) -> str:
    """A fraction as a percentage in a sentence: "12.5 %", with ``sign`` "+1.2 %"."""
    return f"{100 * fraction:{'+' if sign else ''}.{digits}f} %"


def share(fraction: float | None, *, digits: int = 0) -> str:
    """A fraction as a compact whole percentage, "45%" (host activity's shares)."""
    return "unknown" if fraction is None else f"{100 * fraction:.{digits}f}%"


def size(n: int | None) -> str:
    """Bytes as people read them: "1.5 MiB", "12.0 KiB", "512 bytes"."""
    if n is None:
        return "unknown"
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def mib(n: float | None) -> str:
    """Bytes in MiB with one decimal and thousands grouped: "1,024.0 MiB"."""
    return "unknown" if n is None else f"{n / 2**20:,.1f} MiB"


def count(n: float | None) -> str:
    """A count, thousands grouped: "12,345"."""
    return "unknown" if n is None else f"{n:,.0f}"


def utc_time(t: float, *, year: bool = True, ms: bool = True, zone: bool = True) -> str:
    """Epoch seconds as a UTC stamp, "2026-12-03 22:16:39.123 UTC"; a narrow column leaves out
    the year, the milliseconds or the zone."""
    pattern = ("%Y-" if year else "") + "%m-%d %H:%M:%S" + (".%f" if ms else "")
    text = datetime.fromtimestamp(t, timezone.utc).strftime(pattern)
    return (text[:-3] if ms else text) + (" UTC" if zone else "")
