"""The Inspect pane's jobs (worker threads): the inspect report of the latest comparison, each run's
measure over time reduced once to a sparkline, and pinning a derived observation; each through the
use cases (``workbench.usecases``), on the store the workbench holds or a server's."""

from __future__ import annotations

import math

from lenses import builtin_lens
from workbench.compare.charts import sparkline
from workbench.numbers import qty
from workbench.compare.host_activity import render_host
from workbench.compare.plots import TUI_H, TUI_W
from workbench.compare.render import render_inspect
from workbench.investigations import workflow as wf
from workbench.investigations.common import current_user
from workbench.investigations.views import ComparisonView, InvestigationView, ObservationView
from workbench.textsafe import clean
from workbench.usecases.comparisons import InspectStored, RunSpark, SparkRuns
from workbench.usecases.investigations import PinDerived
from workbench.usecases.transport import Workbench

__all__ = ["RunSpark"]

SPARK_W = 50  # the sparkline's cells: 80 columns less the side, id, mean and label


def run_sparks(wb: Workbench, lens_name: str, run_ids: list[int]) -> dict[int, RunSpark]:
    """Each run's measure over time (requests, steps or job starts in order), reduced once:
    the pane keeps them, so selecting a run again never reads it again."""
    return wb.call(SparkRuns(lens=lens_name, runs=list(run_ids), cells=SPARK_W)).sparks


def sparklines(lens_name: str, rows: list[tuple[str, int, RunSpark]]) -> str:
    """One line a run (``B`` baseline, ``C`` candidate, ``A`` A′ control), all on one scale,
    the run's mean at the end; fits 80 columns."""
    if not rows:
        return ""
    lows = [r.low for _s, _i, r in rows if math.isfinite(r.low)]
    highs = [r.high for _s, _i, r in rows if math.isfinite(r.high)]
    low, high = (min(lows), max(highs)) if lows else (0.0, 0.0)
    measure = builtin_lens(lens_name).item_measure
    unit, what = (measure.unit, measure.title) if measure else ("", "per-item values")
    lines = [
        f"Over time: {what}, one scale {qty(low, unit)} .. {qty(high, unit)}",
        "a line per selected run (B baseline, C candidate, A A′ control), then its mean",
    ]
    for side, run_id, r in rows:
        spark = sparkline(list(r.slices), SPARK_W, low, high) if r.slices else "no per-item values"
        mean = qty(r.mean, unit) if math.isfinite(r.mean) else "unknown"
        lines.append(f"{side} {run_id:>4} {spark:<{SPARK_W}} {mean:>9} {clean(r.label)[:12]}")
    return "\n".join(lines)


def latest_comparison(inv: InvestigationView) -> ComparisonView | None:
    return inv.comparisons[-1] if inv.comparisons else None


def inspect_text(wb: Workbench, inv: InvestigationView) -> str:
    """The Inspect report for the investigation's latest comparison: the engine again on
    the stored parameters, with the per-phase detail (as before, without the A/A control
    runs: the detail is descriptive, and the Compare stage shows the control), then the
    plots of ``wb inspect --plot`` fitted to the report region."""
    comp = latest_comparison(inv)
    if comp is None:
        return "No comparison yet: pick runs in Compare (2) and press c."
    answer = wb.call(InspectStored(comparison=comp.id, lens=inv.lens, plot_size=(TUI_W, TUI_H)))
    host = answer.host  # a flight recorder's stacks, CPU, GC
    text = render_inspect(answer.result) + ("\n\n" + "\n".join(render_host(host)) if host else "")
    if answer.plots is not None:  # a refused pair gets no detail, so no plot
        text += "\n\nPlots\n" + answer.plots
    return text


def derived_texts(comparison: ComparisonView) -> list[str]:
    """The texts of the observations the compare engine derived, in its order (``p`` pins one by index)."""
    return [str(o.get("text", "")) for o in wf.derived_observations(comparison)]


def pin_from_comparison(wb: Workbench, inv_id: int, comparison: ComparisonView, index: int) -> ObservationView:
    """Pin one of the observations the compare engine derived, citing the comparison."""
    return wb.call(PinDerived(investigation=inv_id, comparison=comparison.id, index=index, by=current_user()))
