"""What the workbench remembers for each open investigation, so that switching between
investigations never carries one's selections, filter, declarations or banner into another."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class InvestigationState:
    inv_id: int
    lens: str
    baseline: set[int] = field(default_factory=set)
    candidate: set[int] = field(default_factory=set)
    control: set[int] = field(default_factory=set)  # A′: baseline-again runs, the A/A control
    filter: str = ""
    changes: dict[str, list[Any]] = field(default_factory=dict)  # the intended change, {dim: [from, to]}
    accepts: dict[str, str] = field(default_factory=dict)  # {dimension: why}
    comparison: dict[str, Any] | None = None  # the comparison shown (a stored view)
    report: str | None = None  # its report, as `wb compare` prints it
    sweep: tuple[str, str] | None = None  # the load sweeps shown level by level (baseline, candidate labels)
    banner: str = "select"  # select | comparing | shown | failed | sweep
    error: str = ""

    @classmethod
    def of(cls, inv: dict[str, Any]) -> "InvestigationState":
        """A fresh state: the investigation's run sets preselected, its latest comparison's
        declarations and acceptances (or the frame's intended change)."""
        comps = inv.get("comparisons") or []
        latest = comps[-1] if comps else None
        params = (latest or {}).get("parameters") or {}
        baseline = inv.get("baseline_runs") or (latest or {}).get("baseline_runs") or []
        candidate = inv.get("candidate_runs") or (latest or {}).get("candidate_runs") or []
        return cls(
            inv_id=int(inv["id"]),
            lens=str(inv["lens"]),
            baseline={int(r) for r in baseline},
            candidate={int(r) for r in candidate},
            control={int(r) for r in params.get("control") or []},
            changes={k: list(v) for k, v in (params.get("changes") or inv.get("intended_change") or {}).items()},
            accepts=dict(params.get("accepts") or {}),
            comparison=latest,
            banner="shown" if latest else "select",
        )

    def runs_to_compare(self, lens_runs: set[int]) -> tuple[list[int], list[int], list[int]]:
        """The selected baseline, candidate and A′ control runs that belong to this
        investigation's lens (nothing else is sent)."""
        return sorted(self.baseline & lens_runs), sorted(self.candidate & lens_runs), sorted(self.control & lens_runs)
