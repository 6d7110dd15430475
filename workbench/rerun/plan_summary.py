"""What ``wb rerun plan`` shows: the saved plan (``--json``) and the list of plans (``--list --json``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from workbench.rerun.plan import Plan


class PlanSaved(msgspec.Struct, frozen=True, kw_only=True):
    """A plan as saved: its store id, digest, what saving did, the plan and its warnings."""

    id: int
    name: str
    digest: str
    status: str  # added | unchanged | replaced
    plan: Plan
    warnings: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "digest": self.digest, "status": self.status,
                "plan": self.plan.to_json(), "warnings": list(self.warnings)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "PlanSaved":
        return msgspec.convert(dict(doc), cls)


class PlanRow(msgspec.Struct, frozen=True, kw_only=True):
    """One plan in ``wb rerun plan --list``."""

    id: int
    name: str
    lens: str
    digest: str
    origin: str  # "user" or "bundle:<sha256>"
    created_at: str


class PlanList(msgspec.Struct, frozen=True, kw_only=True):
    plans: tuple[PlanRow, ...]

    def to_json(self) -> dict[str, Any]:
        return {"plans": [msgspec.to_builtins(p) for p in self.plans]}
