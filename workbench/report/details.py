"""The views that need the runs' rows, not only the bundle's results: where each rank of a
multi-rank job sits against its run's median rank (the straggler view), and two load
sweeps compared at matched load.

The runs come from the store (a report of an investigation) or are rebuilt from a bundle's
embedded samples; a bundle without samples has no rows, and the page says so instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from lenses.base import column
from store.records import RunRecord
from workbench.compare.inspect_data import ranks_moved
from workbench.compare.sweep import compare_sweeps, sweep_of
from workbench.errors import WbError
from workbench.report.model import ComparisonSection, RankLine, Report, Stragglers
from workbench.training.ranks import rank_table
from workbench.vocabulary import RunRef

# Given the refs a comparison names (store ids, or bundle refs), the runs with their rows;
# None when the rows are not to be had (a bundle without samples).
RunLoader = Callable[[Sequence[RunRef]], list[RunRecord] | None]

TOP_RANKS = 8
# The measures a straggler trades between: its own compute is longer, the others wait in communication.
RANK_MEASURES = ("compute_ms", "communication_ms", "step_ms")


def _multi_rank(run: RunRecord) -> bool:
    ranks = column(run, "rank")
    return ranks is not None and len(np.unique(ranks[np.isfinite(ranks)])) > 1


def _side_offsets(runs: Sequence[RunRecord], measure: str) -> dict[int, float]:
    """Each rank's mean of ``measure`` minus its run's median rank's, averaged over the runs."""
    sums: dict[int, list[float]] = {}
    for run in runs:
        table = rank_table(run.samples)
        col = table.get(f"{measure}_mean")
        if col is None or len(col) < 2 or not np.isfinite(col).any():
            continue
        offsets = col - float(np.nanmedian(col))
        for rank, value in zip(table["rank"].tolist(), offsets.tolist()):
            sums.setdefault(int(rank), []).append(value)
    return {r: float(np.mean(v)) for r, v in sums.items()}


def stragglers(base: Sequence[RunRecord], cand: Sequence[RunRecord]) -> Stragglers | None:
    """The straggler view of a pair whose runs all have two or more ranks; ``None`` otherwise."""
    if not base or not cand or not all(_multi_rank(r) for r in (*base, *cand)):
        return None
    moved = ranks_moved(base, cand, TOP_RANKS)
    lines = []
    for measure in RANK_MEASURES:
        b, c = _side_offsets(base, measure), _side_offsets(cand, measure)
        ranks = sorted(set(b) | set(c))
        if not ranks:
            continue
        lines.append(
            RankLine(
                measure=measure,
                ranks=tuple(ranks),
                baseline=tuple(b.get(r, float("nan")) for r in ranks),
                candidate=tuple(c.get(r, float("nan")) for r in ranks),
            )
        )
    return Stragglers(shared=moved.shared if moved else 0, moved=moved.moved if moved else (), lines=tuple(lines))


def _section(section: ComparisonSection, load: RunLoader) -> ComparisonSection:
    c = section.comparison
    if not c.comparable:
        return section
    base, cand = load(c.runs.baseline), load(c.runs.candidate)
    if base is None or cand is None:
        return replace(
            section, detail_note="the runs' rows are not at hand (a bundle without samples): no per-rank view"
        )
    return replace(section, stragglers=stragglers(base, cand))


def _sweep(report: Report, load: RunLoader, refs: tuple[Sequence[RunRef], Sequence[RunRef]]) -> Report:
    """The investigation's baseline and candidate compared as load sweeps, when every run is a sweep level."""
    base, cand = load(refs[0]), load(refs[1])
    if not base or not cand or not all(sweep_of(r) is not None for r in (*base, *cand)):
        return report
    first = report.comparisons[0] if report.comparisons else None
    changes = {d: (b, c) for d, b, c in first.changes} if first else {}
    accepts = {a.dimension: a.why for a in first.comparison.accepted} if first else {}
    try:
        sweep = compare_sweeps(base, cand, changes=changes or None, accepts=accepts or None)
    except WbError as exc:
        return report.with_details(sweep_note=f"the sweeps could not be compared: {exc}")
    return report.with_details(sweep=sweep)


def add_details(report: Report, load: RunLoader, frame_runs: tuple[Sequence[RunRef], Sequence[RunRef]]) -> Report:
    """``report`` with the straggler view of each comparison and the load sweep comparison, where they apply."""
    sections = tuple(_section(s, load) for s in report.comparisons)
    return _sweep(report.with_details(comparisons=sections), load, frame_runs)
