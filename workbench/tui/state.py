"""What the workbench remembers for each open investigation, so that switching between
investigations never carries one's selections, filter, declarations or banner into another."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from store.records import decimal_id

from workbench.compare.parameters import Value
from workbench.investigations.views import ComparisonView, InvestigationView
from workbench.vocabulary import RunRef


@dataclass
class InvestigationState:
    inv_id: int
    lens: str
    baseline: set[int] = field(default_factory=set)
    candidate: set[int] = field(default_factory=set)
    control: set[int] = field(default_factory=set)  # A′: baseline-again runs, the A/A control
    filter: str = ""
    changes: dict[str, list[Value]] = field(default_factory=dict)  # the intended change, {dim: [from, to]}
    accepts: dict[str, str] = field(default_factory=dict)  # {dimension: why}
    comparison: ComparisonView | None = None  # the comparison shown (stored)
    report: str | None = None  # its report, as `wb compare` prints it
    sweep: tuple[str, str] | None = None  # the load sweeps shown level by level (baseline, candidate labels)
    banner: str = "select"  # select | comparing | shown | failed | sweep
    error: str = ""

    @classmethod
    def of(cls, inv: InvestigationView) -> "InvestigationState":
        """A fresh state: the investigation's run sets preselected, its latest comparison's
        declarations and acceptances (or the frame's intended change)."""
        latest = inv.comparisons[-1] if inv.comparisons else None
        params = latest.parameters if latest else None
        baseline = inv.baseline_runs or (latest.baseline_runs if latest else [])
        candidate = inv.candidate_runs or (latest.candidate_runs if latest else [])
        return cls(
            inv_id=inv.id,
            lens=inv.lens,
            baseline=_store_ids(baseline),
            candidate=_store_ids(candidate),
            control=_store_ids(params.control) if params else set(),
            changes={k: list(v) for k, v in ((params.changes if params else None) or inv.intended_change).items()},
            accepts=dict(params.accepts) if params else {},
            comparison=latest,
            banner="shown" if latest else "select",
        )

    def runs_to_compare(self, lens_runs: set[int]) -> tuple[list[int], list[int], list[int]]:
        """The selected baseline, candidate and A′ control runs that belong to this
        investigation's lens (nothing else is sent)."""
        return sorted(self.baseline & lens_runs), sorted(self.candidate & lens_runs), sorted(self.control & lens_runs)


def _store_ids(refs: Iterable[RunRef]) -> set[int]:
    """The refs that are runs of this store. An imported investigation names its runs by
    the bundle's refs (``run/1``): they are in the bundle, not among the store's runs, so
    nothing is preselected for them (the imported comparison is shown as it was sealed)."""
    out = set()
    for ref in refs:
        if isinstance(ref, int) and not isinstance(ref, bool):
            out.add(ref)
        elif isinstance(ref, str) and (as_id := decimal_id(ref)) is not None:
            out.add(as_id)
    return out
