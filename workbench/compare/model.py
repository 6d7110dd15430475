"""The result of a comparison, and its JSON contract ::

    {"lens", "comparable", "refusal", "dimensions", "primary", "phases",
     "observations", "guardrails", "work", + "runs", "metrics", "changes_not_made"}

When refused, ``primary`` and ``phases`` are null: no delta is computed at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lenses.base import Lens
from workbench.compare.comparability import Comparability
from workbench.compare.fmt import jsonable
from workbench.stats.verdicts import Verdict


def verdict_of(result: Mapping[str, Any]) -> str | None:
    """The verdict a comparison's JSON (fresh, stored or from a bundle) states for its
    primary metric; ``None`` when it gives none or the document has another shape."""
    primary = result.get("primary") if isinstance(result, Mapping) else None
    effect = primary.get("effect") if isinstance(primary, Mapping) else None
    verdict = effect.get("verdict") if isinstance(effect, Mapping) else None
    return verdict if isinstance(verdict, str) else None


@dataclass
class Comparison:
    lens: Lens
    runs: dict[str, list[Any]]  # {"baseline": [id or label, ...], "candidate": [...]}
    comparability: Comparability
    primary: dict[str, Any] | None = None
    phases: list[dict[str, Any]] | None = None
    observations: list[dict[str, Any]] = field(default_factory=list)
    guardrails: list[dict[str, Any]] = field(default_factory=list)
    work: dict[str, Any] = field(default_factory=dict)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    # Dimensions set by `wb declare` that the comparison relied on (with history ids).
    declarations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def comparable(self) -> bool:
        return self.comparability.comparable

    @property
    def refusal(self) -> dict[str, Any] | None:
        return self.comparability.refusal

    @property
    def verdict(self) -> str | None:
        """The statistics engine's verdict on the primary metric (``None``: none given)."""
        return verdict_of({"primary": self.primary})

    @property
    def regression(self) -> bool:
        """A regression for gating: the primary verdict is REGRESSION or a guardrail broke."""
        return self.verdict == Verdict.REGRESSION or any(g["state"] == "broken" for g in self.guardrails)

    @property
    def accepted(self) -> list[dict[str, str]]:
        return [{"dimension": r.name, "why": r.accepted_why} for r in self.comparability.rows if r.accepted_why is not None]

    def to_json(self) -> dict[str, Any]:
        return jsonable(
            {
                "lens": self.lens.name,
                "comparable": self.comparable,
                "refusal": self.refusal,
                "dimensions": [r.to_json() for r in self.comparability.rows],
                "primary": self.primary,
                "phases": self.phases,
                "observations": self.observations,
                "guardrails": self.guardrails,
                "work": self.work,
                "runs": self.runs,
                "metrics": self.metrics,
                "accepted": self.accepted,
                "changes_not_made": self.comparability.unrealized_changes,
                "phase_note": self.lens.phase_note,
                "extensions": list(self.lens.extensions),
                # absent when none: results recorded before `wb declare` existed still verify
                **({"declarations": self.declarations} if self.declarations else {}),
            }
        )
