"""Line and scatter plots drawn by plotext, as plain text that reads at 80×24 with no
colour: a load sweep's latency–throughput curve, a phase over steps or requests in
Inspect, and each rank's step time at scale. Baseline and candidate differ by their
marks (``o`` against ``x``), never by colour alone.

plotext is imported inside the functions (CLI startup stays fast) and keeps one global
figure, so every plot is drawn under a lock, from a cleared figure, at an explicit size.
Its output is stripped of the few reset codes its colourless theme still writes, so
the text carries no SGR code at all (NO_COLOR or not, a tty or not). Where bars read
better (paired values, distributions, sparklines) the project's own ``charts`` stay.
"""

from __future__ import annotations

import math
import textwrap
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from workbench.numbers import num, qty
from workbench.errors import UsageError
from workbench.textsafe import clean

if TYPE_CHECKING:
    from lenses.base import Lens
    from store.records import RunRecord
    from workbench.compare.sweep_result import SweepComparison

CLI_W = 80  # the CLI's plots: the 80 columns of every report
TUI_W = 78  # the TUI's: a report region at 80×24 less its border and scrollbar
HEIGHT = 16  # rows of the plot itself, axes included; legend lines come below
TUI_H = 14  # the TUI's: a plot with its title and legend in the 18 rows a report region has at 80×24
LOG_SPAN = 20.0  # the y axis turns logarithmic when the values span more than this

BASE_MARK, CAND_MARK = "o", "x"
BASE_LINE, CAND_LINE = ".", "'"  # what joins a side's points on a curve

_SGR = re.compile(r"\x1b\[[0-9;]*m")
_LOCK = threading.Lock()  # plotext's figure is global; TUI workers are threads


@dataclass(frozen=True)
class Series:
    """One side on a plot: its name in the legend, its mark, its points in x order;
    ``line`` joins the points with that mark (a curve), empty for a scatter."""

    name: str
    mark: str
    points: tuple[tuple[float, float], ...]
    line: str = ""


def draw(
    series: Sequence[Series],
    *,
    x_label: str,
    y_label: str,
    width: int = CLI_W,
    height: int = HEIGHT,
    notes: Sequence[str] = (),
    whole_x: bool = False,
) -> str:
    """The series on shared axes, ``width`` columns wide, then a legend and ``notes``
    wrapped to the same width. The y axis is logarithmic when the values span more than
    ``LOG_SPAN``× (said in the legend); ``whole_x``: x ticks on whole numbers (steps,
    ranks). Non-finite points are left out, never drawn at zero. Where points of two
    sides share a cell it shows ``*`` (said in the legend)."""
    kept = [
        Series(s.name, s.mark, tuple((x, y) for x, y in s.points if math.isfinite(x) and math.isfinite(y)), s.line)
        for s in series
    ]
    ys = [y for s in kept for _, y in s.points]
    if not ys:
        return "(no point states both values: nothing to plot)"
    log = min(ys) > 0 and max(ys) / min(ys) > LOG_SPAN
    xs = [x for s in kept for x, _ in s.points]
    frame = _Frame(
        width,
        height,
        log,
        (min(xs), max(xs)),
        (min(ys), max(ys)),
        whole_ticks(min(xs), max(xs)) if whole_x else None,
        clean(x_label),
        clean(y_label) + (" (log)" if log else ""),
    )
    with _LOCK:
        lines = _build(frame, kept, lines=True)
        # Where the sides' points share a cell the later mark would hide the earlier: ``*``
        # there, found by drawing each side's points alone on the same axes.
        alone = [_marks(_build(frame, [s], lines=False), s.mark) for s in kept if s.points]
        both = set().union(*(a & b for i, a in enumerate(alone) for b in alone[i + 1 :]))
    for row, col in both:
        lines[row] = lines[row][:col] + "*" + lines[row][col + 1 :]
    marks = [f"{s.mark} {clean(s.name)}" + (f" ({s.line} joins its points)" if joined(s, width) else "") for s in kept]
    legend = "; ".join(marks + (["* both"] if both else []))
    return "\n".join([*lines, *_wrap(legend, width), *(w for n in notes for w in _wrap(n, width))])


@dataclass(frozen=True)
class _Frame:
    """Everything that places a cell: the same frame gives the same cell to the same point."""

    width: int
    height: int
    log: bool
    x_lim: tuple[float, float]
    y_lim: tuple[float, float]
    x_ticks: list[float] | None
    x_label: str
    y_label: str


def _build(frame: _Frame, series: Sequence[Series], *, lines: bool) -> list[str]:
    import plotext as plt  # lazy: ~0.3 s of import, only when a plot is asked for

    plt.clear_figure()
    plt.theme("clear")
    plt.plotsize(frame.width, frame.height)
    if frame.log:
        plt.yscale("log")
    (x0, x1), (y0, y1) = frame.x_lim, frame.y_lim
    plt.xlim(x0, x1 if x1 > x0 else x0 + 1)
    y1 = y1 if y1 > y0 else y0 + max(abs(y0), 1.0)
    plt.ylim(
        *((math.log10(y0), math.log10(y1)) if frame.log else (y0, y1))
    )  # plotext takes a log axis's limits as exponents
    if frame.x_ticks is not None:
        plt.xticks(frame.x_ticks, [str(int(t)) for t in frame.x_ticks])
    for s in series:
        if lines and joined(s, frame.width):
            plt.plot(*zip(*s.points), marker=s.line)
    for s in series:  # the points last, over every line
        if s.points:
            plt.scatter(*zip(*s.points), marker=s.mark)
    plt.xlabel(frame.x_label)
    plt.ylabel(frame.y_label)
    text = _SGR.sub("", plt.build())
    plt.clear_figure()
    return [line.rstrip() for line in text.split("\n")]


def _marks(lines: list[str], mark: str) -> set[tuple[int, int]]:
    """The (line, column) cells holding ``mark`` inside the frame."""
    top = next((i for i, line in enumerate(lines) if "┌" in line), 0)
    bottom = next((i for i, line in enumerate(lines) if "└" in line), len(lines))
    left = lines[top].find("┌") + 1
    return {(r, c) for r in range(top + 1, bottom) for c, ch in enumerate(lines[r]) if c >= left and ch == mark}


def joined(s: Series, width: int) -> bool:
    """A line only between sparse points (a sweep's levels): dense ones are a line already."""
    return bool(s.line) and 1 < len(s.points) <= width // 4


def whole_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Whole-number ticks from ``lo`` to ``hi`` a round step apart (1, 2, 5 × 10^k), at most ``most``."""
    lo, hi = math.floor(lo), math.ceil(hi)
    step = 1
    while (hi - lo) / step > most - 1:
        step = next(m * 10**e for e in range(12) for m in (1, 2, 5) if m * 10**e > step)
    first = math.ceil(lo / step) * step
    return [float(t) for t in range(first, hi + 1, step)]


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(clean(text), width, subsequent_indent="  ") or [""]


# ----------------------------------------------------------------------------- the sweep's curve


def sweep_curve(comparison: "SweepComparison", width: int = CLI_W, height: int = HEIGHT) -> str:
    """The primary metric against achieved throughput, a curve per sweep (its levels in
    load order, joined), both on one scale: where a side's latency turns up is its knee."""
    name = comparison.primary_metric
    unit = ""
    for m in comparison.matched:
        unit = next((row.unit for row in m.metrics or () if row.name == name), unit)
    series = []
    for side, mark, line in (("baseline", BASE_MARK, BASE_LINE), ("candidate", CAND_MARK, CAND_LINE)):
        s = getattr(comparison, side)
        points = [(lv.achieved_rate, lv.metrics.get(name)) for lv in s.levels]
        known = [
            (float(x), float(y)) for x, y in points if x is not None and y is not None
        ]  # load order: past the knee the rate may fall back
        series.append(Series(f"{side} {s.label or s.sweep or ''}".rstrip(), mark, tuple(known), line))
    head = f"{name} by achieved req/s, a curve per sweep, levels in load order"
    return (
        "\n".join(_wrap(head, width))
        + "\n"
        + draw(
            series, x_label="achieved req/s", y_label=f"{name} ({unit})" if unit else name, width=width, height=height
        )
    )


# ----------------------------------------------------------------------------- a phase over time


def _binned(rows: Sequence[np.ndarray], bins: int) -> tuple[tuple[float, float], ...]:
    """A side's runs' values in item order, each cut into at most ``bins`` equal slices
    (as ``np.array_split`` cuts), each slice's mean averaged over the runs, at the
    slice's middle item (x). Unknown values count in no mean."""
    rows = [np.asarray(r, dtype=np.float64) for r in rows if len(r)]
    if not rows:
        return ()
    n = min(r.size for r in rows)
    k = max(1, min(bins, n))
    means = []
    for r in rows:
        sizes = np.full(k, r.size // k)
        sizes[: r.size % k] += 1
        starts = np.r_[0, np.cumsum(sizes)[:-1]]
        ok = np.isfinite(r)
        sums, counts = np.add.reduceat(np.where(ok, r, 0.0), starts), np.add.reduceat(ok.astype(np.float64), starts)
        with np.errstate(all="ignore"):
            means.append(np.where(counts > 0, sums / np.maximum(counts, 1), np.nan))
    sizes = np.full(k, n // k)
    sizes[: n % k] += 1
    xs = np.r_[0, np.cumsum(sizes)[:-1]] + (sizes - 1) / 2.0  # the middle item of each slice of the shortest run
    stacked = np.array(means)
    known = np.isfinite(stacked)
    with np.errstate(all="ignore"):
        ys = np.where(
            known.any(axis=0), np.where(known, stacked, 0.0).sum(axis=0) / np.maximum(known.sum(axis=0), 1), np.nan
        )
    return tuple(zip(xs.tolist(), ys.tolist()))


def phase_over_time(
    lens: "Lens",
    baseline: Sequence["RunRecord"],
    candidate: Sequence["RunRecord"],
    name: str | None = None,
    width: int = CLI_W,
    height: int = HEIGHT,
) -> str:
    """``name`` (a phase, or the primary's per-item measure: the default) over the items in
    order (steps, requests, job starts), a line per side, the side's runs averaged slice
    by slice (as many slices as the plot has columns). Raises ``UsageError`` naming what
    can be drawn when ``name`` is not one of them."""
    sides = [[lens.item_series(run) for run in runs] for runs in (baseline, candidate)]  # once a run
    names = list(dict.fromkeys(k for side in sides for s in side for k in s))
    if not names:
        return "(these runs carry no per-item values: nothing to plot over time)"
    chosen = names[0] if name is None else name
    if chosen not in names:
        raise UsageError(f"--phase {name!r}: these runs have {', '.join(names)}")
    units = {p.name: p.unit for p in lens.phases}
    if lens.item_measure:
        units[lens.item_measure.name] = lens.item_measure.unit
    unit = units.get(chosen, "")
    bins = max(width - 12, 8)  # about one slice per column of the plot area
    series = [
        Series(
            f"{side} ({len(runs)} run{'s' if len(runs) != 1 else ''})",
            mark,
            _binned([s[chosen] for s in found if chosen in s], bins),
            line,
        )
        for side, mark, line, runs, found in (
            ("baseline", BASE_MARK, BASE_LINE, baseline, sides[0]),
            ("candidate", CAND_MARK, CAND_LINE, candidate, sides[1]),
        )
        if runs
    ]
    head = f"{chosen} over {lens.item_order}, slice means"
    return (
        "\n".join(_wrap(head, width))
        + "\n"
        + draw(
            series,
            x_label=f"{lens.item_order}, in order from 0",
            y_label=f"{chosen} ({unit})" if unit else chosen,
            width=width,
            height=height,
            whole_x=True,
        )
    )


# ----------------------------------------------------------------------------- ranks at scale


def multi_rank(run: "RunRecord") -> bool:
    rank = run.samples.get("rank") if run.samples else None
    if rank is None:
        return False
    r = np.asarray(rank, dtype=np.float64)
    return len(np.unique(r[np.isfinite(r)])) > 1


def rank_medians(runs: Sequence["RunRecord"]) -> tuple[np.ndarray, np.ndarray]:
    """Per rank, the median step time over every step of the side's runs (ranks, medians)."""
    rank = np.concatenate([np.asarray(r.samples.get("rank", ()), dtype=np.float64) for r in runs] or [np.empty(0)])
    ms = np.concatenate(
        [
            np.asarray(r.samples.get("step_ms", np.full(len(r.samples.get("rank", ())), np.nan)), dtype=np.float64)
            for r in runs
        ]
        or [np.empty(0)]
    )
    ok = np.isfinite(rank) & np.isfinite(ms)
    rank, ms = rank[ok], ms[ok]
    if not rank.size:
        return np.empty(0), np.empty(0)
    order = np.lexsort((ms, rank))  # by rank, then value: each rank's values sorted in its own slice
    rank, ms = rank[order], ms[order]
    starts = np.flatnonzero(np.r_[True, rank[1:] != rank[:-1]])
    sizes = np.diff(np.r_[starts, rank.size])
    # The median of a sorted slice: its middle value, or the mean of its two middle ones.
    return rank[starts], (ms[starts + (sizes - 1) // 2] + ms[starts + sizes // 2]) / 2.0


def rank_step_times(
    baseline: Sequence["RunRecord"], candidate: Sequence["RunRecord"], width: int = CLI_W, height: int = HEIGHT
) -> str:
    """Each rank's median step time, a point per rank and side: a straggler stands above
    the others. Below, each side's slowest rank against its median rank (an observation,
    not a cause: the others wait for a straggler in their communication)."""
    series, notes = [], []
    for side, mark, runs in (("baseline", BASE_MARK, baseline), ("candidate", CAND_MARK, candidate)):
        runs = [r for r in runs if multi_rank(r)]
        if not runs:
            continue
        ranks, medians = rank_medians(runs)
        series.append(Series(f"{side} ({len(ranks)} ranks)", mark, tuple(zip(ranks.tolist(), medians.tolist()))))
        if medians.size >= 2:
            top = int(np.argmax(medians))  # ties: the lowest rank
            typical = float(np.median(medians))
            notes.append(
                f"{side}: slowest rank {int(ranks[top])} at {qty(float(medians[top]), 'ms')} against the median "
                f"rank's {qty(typical, 'ms')} (+{num(float(medians[top]) - typical)} ms)"
            )
    if not series:
        return "(no run here has two or more ranks: no rank plot)"
    return "Step time per rank (median over steps)\n" + draw(
        series, x_label="rank", y_label="step ms", width=width, height=height, notes=notes, whole_x=True
    )


# ----------------------------------------------------------------------------- Inspect's plots


def inspect_plots(
    lens: "Lens",
    baseline: Sequence["RunRecord"],
    candidate: Sequence["RunRecord"],
    phase: str | None = None,
    width: int = CLI_W,
    height: int = HEIGHT,
) -> str:
    """What ``wb inspect --plot`` adds: ``phase`` over time for both sides and, when every
    run has two or more ranks, the step time of each rank."""
    parts = [phase_over_time(lens, baseline, candidate, phase, width=width, height=height)]
    if baseline and candidate and all(multi_rank(r) for r in (*baseline, *candidate)):
        parts.append(rank_step_times(baseline, candidate, width=width, height=height))
    return "\n\n".join(parts)
