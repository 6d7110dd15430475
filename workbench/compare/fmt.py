"""Numbers as people read them: "110 ms → 230 ms, +120 ms (+109 %)"."""

from __future__ import annotations

import math
from typing import Any

import msgspec

from workbench.textsafe import clean


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


# Beside a key whose value was not finite: ``"x": null, "x_null_reason": "..."``. In a list,
# the reason sits beside the list's key, by index (``{"3": "..."}``).
NULL_REASON = "_null_reason"
_NONFINITE = {"nan": "not a number (NaN): unknown", "inf": "+infinity: not a finite number",
              "-inf": "-infinity: not a finite number"}


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
    allowed = (f"between {signed(lo, unit)} and {signed(hi, unit)}" if lo is not None and hi is not None
               else f"of at least {signed(lo, unit)}" if lo is not None else f"of at most {signed(hi, unit)}")
    return f"{head}: a change {allowed}"


def jsonable(value: Any) -> Any:
    """Strict JSON values (the one encoder of every ``--json``): nan and ±inf become
    ``None`` (unknown, never zero) with the reason beside them (``NULL_REASON``); numpy
    scalars and arrays become the numbers and lists they hold; keys become strings."""
    return _strict(value)[0]


def _strict(value: Any) -> tuple[Any, Any]:
    """(the JSON value, why it or what it holds became null: a text, a dict by index, or None)."""
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value, None
    if isinstance(value, float):
        return (value, None) if math.isfinite(value) else (None, _NONFINITE[repr(value)])
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out[str(k)], why = _strict(v)
            if why is not None and f"{k}{NULL_REASON}" not in value:
                out[f"{k}{NULL_REASON}"] = why
        return out, None
    if isinstance(value, list | tuple):
        items, reasons = [], {}
        for i, v in enumerate(value):
            item, why = _strict(v)
            items.append(item)
            if why is not None:
                reasons[str(i)] = why
        return items, reasons or None
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy scalars and arrays, known without importing numpy
        return _strict(value.tolist())
    return value, None


_FROM_REASON = {text: float(key) for key, text in _NONFINITE.items()}


def from_jsonable(value: Any, why: Any = None) -> Any:
    """``jsonable`` undone: a null with its ``NULL_REASON`` beside it is the nan or ±inf it
    was (so a decoded document encodes back to itself); the reason keys go. ``why``: the
    reason ``jsonable`` gave this value (a text, or a dict by index for a list)."""
    if value is None and isinstance(why, str):
        return _FROM_REASON.get(why)
    if isinstance(value, dict):
        return {k: from_jsonable(v, value.get(f"{k}{NULL_REASON}")) for k, v in value.items()
                if not (k.endswith(NULL_REASON) and k[: -len(NULL_REASON)] in value)}
    if isinstance(value, list):
        by_index = why if isinstance(why, dict) else {}
        return [from_jsonable(v, by_index.get(str(i))) for i, v in enumerate(value)]
    return value


def record_json(record: Any) -> Any:
    """A msgspec record as its JSON document: field order, tuples as arrays, numpy scalars
    as the numbers they hold, nan and ±inf as ``None``."""
    return jsonable(msgspec.to_builtins(record, enc_hook=_numpy_scalar))


def _numpy_scalar(value: Any) -> Any:
    # known without importing numpy
    if hasattr(value, "tolist") and callable(value.tolist):
        return value.tolist()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")
