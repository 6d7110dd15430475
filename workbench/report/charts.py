"""The report's charts: inline SVG drawn by matplotlib's SVG backend (no display, no files).

matplotlib is the ecosystem's standard and its SVG backend writes plain, deterministic
XML (fixed id salt, no date) that a page can hold inline: no image files, no fonts to
fetch (text stays text in the page's own fonts), nothing a browser loads. Its XML writer
escapes text; the labels are cleaned of control and invisible characters first, and
mathtext is off, so a capture's ``$...$`` is text too. The SVG prologue (XML declaration,
the DTD's URL, the namespace declarations an inline SVG does not need) is dropped, so the
page names no URL at all.

Colours are the Okabe-Ito pair (told apart with colour blindness), and each side has its
own marker too, so a grey printout still tells them apart.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from typing import Any

import matplotlib
from markupsafe import Markup
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workbench.compare.sweep_result import SweepComparison
from workbench.report.model import ComparisonSection, RerunSection, Stragglers
from workbench.textsafe import clean

BASELINE = ("#0072B2", "o")
CANDIDATE = ("#D55E00", "s")
CONTROL = ("#666666", "^")
WIDTH_IN = 7.0

_RC: Any = {  # matplotlib types its keys as a Literal of every setting
    "svg.fonttype": "none",  # text as <text>: smaller, selectable, drawn in the page's fonts
    "text.parse_math": False,  # a label's $...$ is text, never mathtext
    "svg.image_inline": True,
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.S)
# Linear on any text (a label can repeat any of these): a run of spaces is entered once, a reference is a run
# of name characters, and the metadata block is cut by str.find, not a lazy regex.
_NAMESPACES = re.compile(r'(?<!\s)\s+xmlns(?::xlink)?="[^"]*"')
_IDS = re.compile(r'(\bid="|\bxlink:href="#)([\w.:-]+)(")|(url\(#)([\w.:-]+)(\))')


def _svg(fig: Figure, salt: str) -> Markup:
    """The figure as inline SVG markup (ours: the text in it is escaped by matplotlib's XML writer)."""
    out = io.StringIO()
    name = "chart-" + re.sub(r"[^A-Za-z0-9_-]", "-", salt)  # the svg's id: never a section's
    with matplotlib.rc_context({**_RC, "svg.hashsalt": salt, "svg.id": name}):
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = _without_metadata(_NAMESPACES.sub("", _PROLOGUE.sub("", out.getvalue(), count=1), count=2))
    # Every id of the chart, and every reference to one, prefixed: ids stay unique on a page of many charts.
    text = _IDS.sub(lambda m: _prefixed(m, name), text)
    return Markup(text)  # matplotlib's own XML: its text escaped by its writer


def _without_metadata(svg: str) -> str:
    """The SVG without matplotlib's one <metadata> block (and the whitespace after it)."""
    start = svg.find("<metadata>")
    end = svg.find("</metadata>", start)
    if start < 0 or end < 0:
        return svg
    return svg[:start] + svg[end + len("</metadata>") :].lstrip()


def _prefixed(match: re.Match[str], name: str) -> str:
    head, ref, tail = match.group(1, 2, 3) if match.group(1) else match.group(4, 5, 6)
    return match.group(0) if ref == name else f"{head}{name}-{ref}{tail}"


def _figure(height: float, rows: int = 1) -> tuple[Figure, list[Axes]]:
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
        axes = fig.subplots(rows, 1, squeeze=False)
    return fig, [a for row in axes for a in row]


def _value(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def _finite(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def per_run_chart(section: ComparisonSection) -> Markup | None:
    """Each run's value of the primary metric, one point a run, a side a column: the values
    the interval is drawn from (runs are the unit; never items pooled over runs)."""
    p = section.comparison.primary
    if p is None:
        return None
    sides = [("baseline", p.per_run.baseline, BASELINE), ("candidate", p.per_run.candidate, CANDIDATE)]
    if p.per_run.control:
        sides.insert(1, ("A′ control", p.per_run.control, CONTROL))
    if not any(_finite(values) for _, values, _ in sides):
        return None
    fig, (ax,) = _figure(2.6)
    for x, (name, values, (colour, marker)) in enumerate(sides):
        known = _finite(values)
        offsets = [x + 0.18 * ((i % 5) - 2) / 2 for i in range(len(known))]  # a little spread, by order
        ax.scatter(offsets, known, color=colour, marker=marker, s=28, zorder=3, label=f"{name} ({len(known)} runs)")
        if known:
            mean = sum(known) / len(known)
            ax.hlines(mean, x - 0.3, x + 0.3, color=colour, linewidth=2)
    ax.set_xticks(range(len(sides)), [name for name, _, _ in sides])
    ax.set_xlim(-0.6, len(sides) - 0.4)
    ax.set_ylabel(clean(f"{p.title} ({p.unit})" if p.unit else p.title))
    ax.set_title(clean(f"{p.title}: one point per run, the bar is the side's mean"), loc="left")
    ax.grid(axis="y", alpha=0.3)
    return _svg(fig, f"{section.ref}-runs")


def phases_chart(section: ComparisonSection) -> Markup | None:
    """Each phase's statistic, baseline against candidate (each run's figure, averaged over runs)."""
    c = section.comparison
    phases = [ph for ph in c.phases or () if not c.lens.runs_are_windows]
    rows = [(ph, ph.side("baseline", ph.statistic), ph.side("candidate", ph.statistic)) for ph in phases]
    rows = [r for r in rows if _finite([r[1], r[2]])]
    if not rows:
        return None
    fig, (ax,) = _figure(0.5 + 0.45 * len(rows))
    y = range(len(rows))
    for shift, side, (colour, _m) in ((-0.2, "baseline", BASELINE), (0.2, "candidate", CANDIDATE)):
        # An unknown value draws no bar (nan), never a bar of zero.
        values = [_value(ph.side(side, ph.statistic)) for ph, _, _ in rows]
        ax.barh(
            [i + shift for i in y],
            values,
            height=0.38,
            color=colour,
            label=side,
            hatch="//" if side == "candidate" else None,
        )
    ax.set_yticks(list(y), [clean(f"{ph.title} ({ph.statistic})") for ph, _, _ in rows])
    ax.invert_yaxis()
    unit = clean(rows[0][0].unit)
    ax.set_xlabel(f"{unit}; phases overlap and are not additive" if unit else "phases are not additive")
    ax.legend(loc="lower right", frameon=False)
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig, f"{section.ref}-phases")


def ranks_chart(ref: str, view: Stragglers) -> Markup | None:
    """Each rank's offset from its run's median rank, a panel per measure: a straggler stands
    out in its own compute, and the ranks that wait for it in their communication."""
    lines = [line for line in view.lines if _finite(line.baseline) or _finite(line.candidate)]
    if not lines:
        return None
    fig, axes = _figure(1.6 * len(lines) + 0.4, rows=len(lines))
    for ax, line in zip(axes, lines):
        for name, values, (colour, marker) in (
            ("baseline", line.baseline, BASELINE),
            ("candidate", line.candidate, CANDIDATE),
        ):
            many = len(line.ranks) > 64
            ax.plot(
                line.ranks,
                values,
                color=colour,
                marker=None if many else marker,
                markersize=3,
                linewidth=0.8,
                label=name,
                linestyle="-" if name == "baseline" else "--",
            )
        ax.axhline(0, color="#999999", linewidth=0.6)
        ax.set_title(clean(f"{line.measure}: offset from the median rank"), loc="left", fontsize=9)
        ax.set_ylabel("ms")
        ax.grid(alpha=0.3)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside upper right", frameon=False, ncols=2)
    axes[-1].set_xlabel("rank")
    return _svg(fig, f"{ref}-ranks")


def sweep_chart(sweep: SweepComparison) -> Markup | None:
    """The primary metric against achieved throughput, a curve per sweep in load order: where
    a side's latency turns up is its knee."""
    name = sweep.primary_metric
    fig, (ax,) = _figure(3.0)
    drawn = False
    for side, (colour, marker) in (("baseline", BASELINE), ("candidate", CANDIDATE)):
        s = getattr(sweep, side)
        points = [(lv.achieved_rate, lv.metrics.get(name)) for lv in s.levels]
        known = [(float(x), float(y)) for x, y in points if x is not None and y is not None]
        known = [(x, y) for x, y in known if math.isfinite(x) and math.isfinite(y)]
        if known:
            drawn = True
            ax.plot(*zip(*known), color=colour, marker=marker, label=clean(f"{side} {s.label or s.sweep or ''}"))
    if not drawn:
        return None
    unit = next((row.unit for m in sweep.matched for row in m.metrics or () if row.name == name), "")
    ax.set_xlabel("achieved requests/s")
    ax.set_ylabel(clean(f"{name} ({unit})" if unit else name))
    ax.set_title(clean(f"{name} by achieved throughput, levels in load order"), loc="left")
    ax.legend(frameon=False)
    ax.grid(alpha=0.3)
    return _svg(fig, "sweep")


ARMS = (("A", "A (baseline)", BASELINE), ("A'", "A′ (control)", CONTROL), ("B", "B (candidate)", CANDIDATE))


def rerun_chart(section: RerunSection) -> Markup | None:
    """A rerun's per-run values by round, an arm a series: the values its paired analysis reads."""
    r = section.report
    if r is None:
        return None
    fig, (ax,) = _figure(2.6)
    drawn = False
    for arm, name, (colour, marker) in ARMS:
        pts = [(row.round, row.statistic) for row in r.runs if str(row.arm) == arm and row.statistic is not None]
        pts = [(x, y) for x, y in pts if math.isfinite(y)]
        if pts:
            drawn = True
            ax.plot(*zip(*sorted(pts)), color=colour, marker=marker, linestyle=":", label=name)
    if not drawn:
        return None
    ax.set_xlabel("round")
    ax.set_ylabel(clean(f"{r.plan.statistic} of {r.plan.metric}"))
    ax.set_title(clean(f"plan {r.plan.name}: each run's {r.plan.statistic} of {r.plan.metric}, by round"), loc="left")
    ax.legend(frameon=False, ncols=3)
    ax.grid(alpha=0.3)
    return _svg(fig, f"{section.ref}-runs")
