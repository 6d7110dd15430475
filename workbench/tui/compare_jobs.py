"""The Compare pane's jobs (worker threads): compare and store in the investigation, the stored
comparison's report with its way out of a refusal, and the store's load sweeps compared."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.compare.model import Comparison
from workbench.compare.parameters import Value
from workbench.compare.plots import TUI_H, TUI_W, sweep_curve
from workbench.compare.render import render_comparison
from workbench.compare.sweep import compare_sweeps, sweep_of
from workbench.compare.sweep_render import render_sweep_comparison
from workbench.compare.way_out import render_way_out, rerun_words, way_out
from workbench.investigations import workflow as wf
from workbench.investigations.views import ComparisonView

if TYPE_CHECKING:
    from store.api import Store
    from store.records import RunRecord
from workbench.tui.shell_text import shell_lines


Changes = dict[str, list[Value]]  # the intended change, {dimension: [from, to]}


@dataclass(frozen=True)
class CompareOutcome:
    comparison: ComparisonView  # the stored comparison
    text: str  # the rendered report (plain text, strings from captures cleaned)


def compare_and_store(
    store: "Store",
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
    view = wf.store_comparison(
        store, inv_id, baseline, candidate, accepts=accepts, changes=changes, control=control or ()
    )
    return CompareOutcome(view, comparison_report(store, view))


def comparison_report(store: "Store", comparison: ComparisonView) -> str:
    """A stored comparison's report: the same renderer as ``wb compare``, on the same typed
    object, with the same way out of a refusal."""
    result = comparison.comparison()
    records = [] if result.comparable else store.load_runs([*comparison.baseline_runs, *comparison.candidate_runs])
    return render_comparison(result) + way_out_text(result, comparison, records)


WAY_OUT_KEYS = (
    "In the workbench: m makes the 'wb declare' lines here (a field a value) and compares again; "
    "d declares the change under test; a accepts dimensions (comma separated) with one reason."
)


def way_out_text(result: Comparison, comparison: ComparisonView, records: Sequence["RunRecord"]) -> str:
    """What ``wb compare`` prints after a refusal (the ``wb declare`` lines, ``--change``,
    ``--accept a,b --why``), its sentences wrapped to 80 columns (commands stay whole, to
    be copied), then the keys that do the same here. Empty when the runs were compared."""
    params = comparison.parameters
    base, cand = list(comparison.baseline_runs), list(comparison.candidate_runs)
    changes = []
    for name, values in params.changes.items():
        old, new = ("" if v is None else str(v) for v in (list(values) + [None, None])[:2])
        changes.append(
            f"{name}={old}->{new}" if ":" in old + new else f"{name}={old}:{new}" if old or new else str(name)
        )
    words = rerun_words("compare", base, cand, None, changes, dict(params.accepts), (), params.control)
    ways = way_out(result, base, cand, words, records)
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


@dataclass(frozen=True)
class Sweep:
    """A load sweep in the store: one inference run a load level, sharing a sweep id."""

    id: str
    label: str
    tool: str
    runs: tuple[int, ...]  # in level order

    @property
    def name(self) -> str:
        return self.label or self.id


def sweeps(store: "Store") -> list[Sweep]:
    """Every load sweep in the store: id, label, tool and its run ids in level order."""
    found: dict[str, tuple[str, str, list[int]]] = {}
    for run in store.load_runs([r.id for r in store.list_runs("inference")], tables=[]):  # metadata only
        sweep = sweep_of(run)
        if sweep is not None:
            entry = found.setdefault(sweep.id, (sweep.label or "", sweep.tool or str(run.meta.get("tool") or ""), []))
            entry[2].append(int(run.id))
    return [Sweep(sweep_id, label, tool, tuple(ids)) for sweep_id, (label, tool, ids) in found.items()]


def sweep_report(
    store: "Store",
    baseline: Sequence[int],
    candidate: Sequence[int],
    changes: Changes | None = None,
    accepts: dict[str, str] | None = None,
) -> str:
    """What ``wb compare SWEEP --vs SWEEP --plot`` prints: levels matched by load,
    saturation, the curve as a line plot fitted to the report region, each matched
    level's metrics (one level's rows in memory at a time)."""
    meta_only = [store.load_runs(list(ids), tables=[]) for ids in (baseline, candidate)]
    doc = compare_sweeps(
        meta_only[0],
        meta_only[1],
        changes={k: tuple(v) for k, v in (changes or {}).items()},
        accepts=dict(accepts or {}),
        load=lambda runs: store.load_runs([r.id for r in runs]),
    )
    return render_sweep_comparison(doc, sweep_curve(doc, width=TUI_W, height=TUI_H))
