"""The Compare pane's jobs (worker threads): compare and store in the investigation, the stored
comparison's report with its way out of a refusal, and the store's load sweeps compared; each
through the use cases (``workbench.usecases``), on the store the workbench holds or a server's."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.compare.parameters import Value
from workbench.compare.plots import TUI_H, TUI_W, sweep_curve
from workbench.compare.render import render_comparison
from workbench.compare.sweep_render import render_sweep_comparison
from workbench.compare.way_out import WayOut, render_way_out
from workbench.investigations.common import current_user
from workbench.investigations.views import ComparisonView
from workbench.tui.shell_text import shell_lines
from workbench.usecases.comparisons import CompareSweeps, ListSweeps, Sweep, WayOutOfStored
from workbench.usecases.investigations import CompareInInvestigation
from workbench.usecases.transport import Workbench

__all__ = ["Sweep"]


Changes = dict[str, list[Value]]  # the intended change, {dimension: [from, to]}


@dataclass(frozen=True)
class CompareOutcome:
    comparison: ComparisonView  # the stored comparison
    text: str  # the rendered report (plain text, strings from captures cleaned)


def compare_and_store(
    wb: Workbench,
    inv_id: int,
    baseline: list[int],
    candidate: list[int],
    accepts: dict[str, str],
    changes: Changes | None = None,
    control: list[int] | None = None,
) -> CompareOutcome:
    """Run the compare engine, store the comparison in the investigation, render it (the
    stored result, decoded: what is shown is what was stored). ``control``: A/A control
    runs (baseline again), stored with the comparison."""
    view = wb.call(
        CompareInInvestigation(
            investigation=str(inv_id),
            baseline=[str(r) for r in baseline],
            candidate=[str(r) for r in candidate],
            control=[str(r) for r in control or ()],
            changes=None if changes is None else {k: list(v) for k, v in changes.items()},
            accepts=dict(accepts),
            by=current_user(),
        )
    )
    return CompareOutcome(view, comparison_report(wb, view))


def comparison_report(wb: Workbench, comparison: ComparisonView) -> str:
    """A stored comparison's report: the same renderer as ``wb compare``, on the same typed
    object, with the same way out of a refusal."""
    result = comparison.comparison()
    ways = None if result.comparable else wb.call(WayOutOfStored(comparison=comparison.id)).way_out
    return render_comparison(result) + way_out_text(ways)


WAY_OUT_KEYS = (
    "In the workbench: m makes the 'wb declare' lines here (a field a value) and compares again; "
    "d declares the change under test; a accepts dimensions (comma separated) with one reason."
)


def way_out_text(ways: WayOut | None) -> str:
    """What ``wb compare`` prints after a refusal (the ``wb declare`` lines, ``--change``,
    ``--accept a,b --why``), its sentences wrapped to 80 columns (commands stay whole, to
    be copied), then the keys that do the same here. Empty when the runs were compared."""
    if ways is None:
        return ""
    lines = [""]
    for line in render_way_out(ways):
        indent = len(line) - len(line.lstrip())
        if indent >= 4:  # a command
            lines += shell_lines(line.strip(), indent)
        else:
            lines += textwrap.wrap(
                line, 78, initial_indent=" " * indent, subsequent_indent=" " * (indent + 1)
            )  # commands sit at 4
    lines += ["", *textwrap.wrap(WAY_OUT_KEYS, 78, subsequent_indent="  ")]
    return "\n".join(lines)


def sweeps(wb: Workbench) -> list[Sweep]:
    """Every load sweep in the store: id, label, tool and its run ids in level order."""
    return wb.call(ListSweeps()).items


def sweep_report(
    wb: Workbench,
    baseline: Sequence[int],
    candidate: Sequence[int],
    changes: Changes | None = None,
    accepts: dict[str, str] | None = None,
) -> str:
    """What ``wb compare SWEEP --vs SWEEP --plot`` prints: levels matched by load,
    saturation, the curve as a line plot fitted to the report region, each matched
    level's metrics (one level's rows in memory at a time)."""
    doc = wb.call(
        CompareSweeps(
            baseline=list(baseline),
            candidate=list(candidate),
            changes={k: [None if v is None else str(v) for v in vs] for k, vs in (changes or {}).items()},
            accepts=dict(accepts or {}),
        )
    ).sweep
    assert doc is not None
    return render_sweep_comparison(doc, sweep_curve(doc, width=TUI_W, height=TUI_H))
