"""ASCII charts that read at 80 columns with no colour: baseline ``#`` against candidate
``=``, on one shared scale per chart so bar lengths compare."""

from __future__ import annotations

import math
from typing import Sequence

from workbench.numbers import qty
from workbench.textsafe import clean

BASE_MARK, CAND_MARK = "#", "="


def _bar(value: float | None, scale: float, width: int, mark: str) -> str:
    if value is None or not math.isfinite(value) or scale <= 0:  # (None: how JSON carries an unknown)
        return "?"
    n = int(round(max(value, 0.0) / scale * width))
    return mark * n if n else ("." if value > 0 else "")


LABEL_W = 18  # the label column of paired_bars


def paired_bars(rows: Sequence[tuple[str, float | None, float | None]], unit: str, width: int = 80) -> str:
    """Two bars per row (baseline ``#``, candidate ``=``), labels on the left, values on
    the right; an unknown value shows ``?`` and "unknown", never an empty bar. A label
    longer than the label column gets a line of its own above its bars, never cut."""
    if not rows:
        return ""
    if any(len(clean(r[0])) > LABEL_W for r in rows):
        bars = paired_bars([(" ", b, c) for _label, b, c in rows], unit, width).split("\n")  # one scale for all
        lines = []
        for i, (label, _b, _c) in enumerate(rows):
            lines += [clean(label), bars[2 * i], bars[2 * i + 1]]
        return "\n".join([*lines, bars[-1]])
    label_w = max(len(clean(r[0])) for r in rows)
    value_w = max(len(qty(v, unit)) for r in rows for v in r[1:]) + 1
    bar_w = max(width - label_w - value_w - 6, 10)
    finite = [v for r in rows for v in r[1:] if v is not None and math.isfinite(v)]
    if not finite:  # nothing to draw: no bars, and no "scale 0 to 0"
        return "\n".join(f"{clean(label)}: not recorded on either side" for label, _b, _c in rows)
    scale = max(finite)
    lines = []
    for label, b, c in rows:
        name = clean(label)[:label_w].ljust(label_w)
        for tag, v, mark in (("B", b, BASE_MARK), ("C", c, CAND_MARK)):
            bar = _bar(v, scale, bar_w, mark)
            lines.append(f"{name} {tag} |{bar.ljust(bar_w)} {qty(v, unit).rjust(value_w - 1)}")
            name = " " * label_w
    lines.append(f"{' ' * label_w}   B baseline {BASE_MARK}, C candidate {CAND_MARK}; scale 0 to {qty(scale, unit)}")
    return "\n".join(lines)


BOX = ("p5", "p25", "p50", "p75", "p95")
# Where a side's figures are a file's stated statistics (no items): only the marks it states.
MARKS = (("p5", "|"), ("p25", "["), ("p75", "]"), ("p95", "|"), ("p99", ">"), ("mean", "+"), ("p50", "M"))


def box_line(stats: dict[str, float], lo: float, hi: float, width: int) -> str:
    """A one-line box plot: ``|`` at p5 and p95, ``[`` ``]`` at p25/p75, ``M`` at the median;
    with only some figures (a file's stated statistics), a mark at each (``>`` p99, ``+`` mean)."""
    cells = [" "] * width
    if hi <= lo:
        return "?".ljust(width)

    def pos(v: float) -> int:
        return min(width - 1, max(0, int(round((v - lo) / (hi - lo) * (width - 1)))))

    if not all(math.isfinite(stats.get(k, math.nan)) for k in BOX):
        known = [(k, mark) for k, mark in MARKS if math.isfinite(stats.get(k, math.nan))]
        if not known:
            return "?".ljust(width)
        for k, mark in known:
            cells[pos(stats[k])] = mark
        return "".join(cells)

    a, q1, m, q3, b = (pos(stats[k]) for k in ("p5", "p25", "p50", "p75", "p95"))
    for i in range(a, b + 1):
        cells[i] = "-"
    for i in range(q1, q3 + 1):
        cells[i] = "="
    cells[a], cells[b] = "|", "|"
    cells[q1], cells[q3] = "[", "]"
    cells[m] = "M"
    return "".join(cells)


def distribution_chart(rows: Sequence[tuple[str, dict, dict]], unit: str, width: int = 80) -> str:
    """Per measure, baseline and candidate box lines on that measure's own axis (shared
    by its two lines, so they compare; measures of different size stay readable)."""
    if not rows:
        return ""
    label_w = min(max(len(clean(r[0])) for r in rows), 14)
    lines = []
    stated = False
    for label, b, c in rows:
        values = [s[k] for s in (b, c) for k in ("p5", "p95") if math.isfinite(s.get(k, math.nan))]
        if not values:  # a file's stated statistics: its axis from what it states
            values = [s[k] for s in (b, c) for k, _ in MARKS if math.isfinite(s.get(k, math.nan))]
            stated = stated or bool(values)
        if not values:  # no value on either side: no axis at all
            lines.append(f"{clean(label)[:label_w].ljust(label_w)}   not recorded on either side: nothing to draw")
            continue
        lo, hi = min(values), max(values)
        if hi == lo:
            pad = abs(lo) * 0.05 or 1.0
            lo, hi = max(lo - pad, 0.0) if lo >= 0 else lo - pad, hi + pad
        axis = f"{qty(lo, unit)} .. {qty(hi, unit)}"
        box_w = max(width - label_w - 4 - len(axis), 10)
        name = clean(label)[:label_w].ljust(label_w)
        lines.append(f"{name} B {box_line(b, lo, hi, box_w)}")
        lines.append(f"{' ' * label_w} C {box_line(c, lo, hi, box_w)} {axis}")
    lines.append(f"{' ' * (label_w + 3)}|-- p5..p95, [==] p25..p75, M median; own axis per measure")
    if stated:
        lines.append(f"{' ' * (label_w + 3)}a file's stated figures (no items): only those it states; > p99, + mean")
    return "\n".join(lines)


SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int, low: float, high: float) -> str:
    """``values`` in time order as ``width`` block characters (the mean of each slice), on
    the shared scale ``low``..``high`` so that lines of several runs compare; a slice with
    no finite value is ``?``."""
    n = len(values)
    if n == 0 or width <= 0:
        return ""
    cells = []
    for i in range(min(width, n)):
        chunk = [v for v in values[i * n // min(width, n) : (i + 1) * n // min(width, n)] if math.isfinite(v)]
        if not chunk:
            cells.append("?")
            continue
        mean = sum(chunk) / len(chunk)
        level = 0 if high <= low else int((mean - low) / (high - low) * (len(SPARKS) - 1) + 0.5)
        cells.append(SPARKS[max(0, min(level, len(SPARKS) - 1))])
    return "".join(cells)
