"""Actions as they cross layers: frozen, typed records with a lossless JSON round trip
(``wb action show --json`` prints :class:`ActionView` encoded)."""

from __future__ import annotations

from typing import Any, Literal

from workbench.bundle.decisions import DecisionWord
from workbench.vocabulary import Record

ActionKind = Literal["configuration", "version", "restart", "escalation", "retry"]
KINDS: tuple[ActionKind, ...] = ("configuration", "version", "restart", "escalation", "retry")
# What an approval says (the latest decides; ``workbench.bundle.decisions`` checks every record) and
# what an action's evidence derives (``bundle.action_status``).
ActionState = Literal["proposed", "rejected", "pending", "verified", "not verified"]


class Decision(Record, frozen=True):
    """One approval or rejection (append-only history)."""

    decision: DecisionWord
    by: str
    why: str
    at: str


class Verification(Record, frozen=True):
    """A verification tied to the action: a rerun plan, or a retry's observed conditions."""

    plan_id: int | None
    plan: str | None  # the plan's name
    observed: dict[str, Any]
    by: str
    at: str


class Status(Record, frozen=True):
    """Derived, never stored (``workbench.bundle.action_status``)."""

    status: ActionState
    reason: str | None  # for not verified: refused, underpowered, guardrail broken, wrong direction, ...
    why: str


class ActionView(Record, frozen=True):
    id: int
    ref: str
    investigation_id: int
    kind: ActionKind
    changes: dict[str, list[Any]]
    scope: str
    because: list[int]
    evidence: list[dict[str, Any]]
    expect: dict[str, Any]
    retry: dict[str, Any]
    created_by: str
    created_at: str
    decisions: list[Decision]
    verifications: list[Verification]
    status: Status


class WatchRun(Record, frozen=True):
    run_id: int
    label: str


class WatchResult(Record, frozen=True):
    """Later runs against a verified candidate: drift beyond the noise floor, or none."""

    action_id: int
    plan: str
    candidate_runs: list[int]
    against: list[WatchRun]
    comparable: bool
    verdict: str | None
    drift: bool
    flags: list[str]
    why: str
