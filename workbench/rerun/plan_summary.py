"""What ``wb rerun plan`` and ``wb rerun run --dry-run`` show: the saved plan (``--json``), the
list of plans (``--list --json``) and the dry run (what would run, and whether it may)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from workbench.rerun.plan import ARMS, Plan, schedule, warmup_slots
from workbench.rerun.preflight import Preflight, PreflightReport
from workbench.vocabulary import Record

# What the harness adds to each run's environment (docs/verify.md).
RUN_ENVIRONMENT = ("WB_CAPTURE_OUT", "WB_RERUN_PLAN", "WB_RERUN_ROUND", "WB_RERUN_ARM", "WB_RERUN_SLOT")


class PlanSaved(msgspec.Struct, frozen=True, kw_only=True):
    """A plan as saved: its store id, digest, what saving did, the plan and its warnings."""

    id: int
    name: str
    digest: str
    status: Literal["added", "unchanged", "replaced"]  # what saving did
    plan: Plan
    warnings: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "digest": self.digest,
            "status": self.status,
            "plan": self.plan.to_json(),
            "warnings": list(self.warnings),
        }

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

    def to_json(self) -> dict[str, object]:
        return {"plans": [msgspec.to_builtins(p) for p in self.plans]}


class Slot(Record, frozen=True, kw_only=True):
    round: int  # 0: an untimed warm-up run
    arm: str


class DryRun(msgspec.Struct, frozen=True, kw_only=True):
    """``wb rerun run --dry-run --json``: the plan, the preflight, the schedule and the commands; nothing runs."""

    plan: Plan
    digest: str
    preflight: PreflightReport
    schedule: tuple[Slot, ...]
    environment_added: tuple[str, ...] = RUN_ENVIRONMENT

    @classmethod
    def of(cls, plan: Plan, digest: str, preflight: Preflight) -> "DryRun":
        slots = warmup_slots(plan) + schedule(plan)
        return cls(
            plan=plan,
            digest=digest,
            preflight=preflight.report(),
            schedule=tuple(Slot(round=r, arm=a) for r, a in slots),
        )

    @property
    def would_run(self) -> bool:
        return not self.preflight.blockers

    def to_json(self) -> dict[str, object]:
        return {
            "plan": self.plan.to_json(),
            "digest": self.digest,
            "preflight": self.preflight.to_json(),
            "schedule": [s.to_json() for s in self.schedule],
            "commands": {arm: self.plan.command(arm).to_json() for arm in ARMS},
            "environment_added": list(self.environment_added),
            "would_run": self.would_run,
        }
