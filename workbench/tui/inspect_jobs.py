"""The Inspect pane's jobs (worker threads): the inspect report of the latest comparison, each run's
measure over time reduced once to a sparkline, and pinning a derived observation."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lenses import builtin_lens
from workbench.compare import inspect
from workbench.compare.charts import sparkline
from workbench.compare.fmt import qty
from workbench.compare.host_activity import between, render_host
from workbench.compare.inspect_data import series
from workbench.compare.plots import TUI_H, TUI_W, inspect_plots
from workbench.compare.render import render_inspect
from workbench.investigations import workflow as wf
from workbench.investigations.views import ComparisonView, InvestigationView, ObservationView
from workbench.textsafe import clean

if TYPE_CHECKING:
    from store.api import Store


SPARK_W = 50  # the sparkline's cells: 80 columns less the side, id, mean and label


@dataclass(frozen=True)
class RunSpark:
    """A run's primary per-item measure over time, reduced to what its sparkline needs:
    the mean of each of at most ``SPARK_W`` slices, the extremes, the run's mean."""

    label: str
    slices: tuple[float, ...]
    low: float
    high: float
    mean: float


def run_sparks(store: "Store", lens_name: str, run_ids: list[int]) -> dict[int, RunSpark]:
    """Each run's measure over time (requests, steps or job starts in order), reduced once:
    the pane keeps them, so selecting a run again never reads it again."""
    lens = builtin_lens(lens_name)
    out = {}
    for run in store.load_runs(run_ids):
        values = [float(v) for v in next(iter(series(lens, run).values()), [])]
        n, cells = len(values), min(SPARK_W, len(values))
        slices = []
        for i in range(cells):
            chunk = [v for v in values[i * n // cells : (i + 1) * n // cells] if math.isfinite(v)]
            slices.append(sum(chunk) / len(chunk) if chunk else math.nan)
        finite = [v for v in values if math.isfinite(v)]
        out[int(run.id)] = RunSpark(
            run.label,
            tuple(slices),
            min(finite, default=math.nan),
            max(finite, default=math.nan),
            sum(finite) / len(finite) if finite else math.nan,
        )
    return out


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


def inspect_text(store: "Store", inv: InvestigationView) -> str:
    """The Inspect report for the investigation's latest comparison: the engine again on
    the stored parameters, with the per-phase detail (as before, without the A/A control
    runs: the detail is descriptive, and the Compare stage shows the control), then the
    plots of ``wb inspect --plot`` fitted to the report region."""
    comp = latest_comparison(inv)
    if comp is None:
        return "No comparison yet: pick runs in Compare (2) and press c."
    arguments = {**comp.parameters.engine_arguments(), "lens": comp.parameters.lens or inv.lens}
    baseline, candidate = store.load_runs(list(comp.baseline_runs)), store.load_runs(list(comp.candidate_runs))
    result = inspect(baseline, candidate, **arguments)
    host = between(baseline, candidate) if result.comparison.comparable else None  # a flight recorder's stacks, CPU, GC
    text = render_inspect(result) + ("\n\n" + "\n".join(render_host(host)) if host else "")
    if result.comparison.comparable:  # a refused pair gets no detail, so no plot
        text += "\n\nPlots\n" + inspect_plots(result.comparison.lens, baseline, candidate, width=TUI_W, height=TUI_H)
    return text


def derived_texts(comparison: ComparisonView) -> list[str]:
    """The texts of the observations the compare engine derived, in its order (``p`` pins one by index)."""
    return [str(o.get("text", "")) for o in wf.derived_observations(comparison)]


def pin_from_comparison(store: "Store", inv_id: int, comparison: ComparisonView, index: int) -> ObservationView:
    """Pin one of the observations the compare engine derived, citing the comparison."""
    return wf.pin_derived(store, inv_id, comparison, wf.derived_observations(comparison)[index])
