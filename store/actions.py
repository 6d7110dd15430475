"""Action tables: proposed changes, the decisions on them, and the plans that verify them.

An action is a change an engineer may make to a system (configuration, version, restart,
escalation, retry), proposed inside an investigation and citing the hypotheses that
motivate it. ``wb`` never applies it: it records who approved or rejected it and which
executed rerun plan verifies it. Decisions and verification links are append-only (no
row is updated or deleted: ``ActionHistoryImmutable`` in the ORM, triggers in the database,
``store.append_only``); the action's status is
derived from them and from the plan's stored rerun comparison, never stored.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Optional

from sqlalchemy import JSON, Column, ForeignKey, Integer, Text, event
from sqlmodel import Field, SQLModel, col, select

from store.append_only import attach
from store.errors import StoreError
from store.investigations import Hypothesis, Investigation, InvestigationComparison
from store.rerun import (
    RerunComparison,
    RerunExecution,
    RerunPlan,
    RerunRun,
    executions_of,
    find_plan,
    runs_of,
)
from store.tables import utcnow_iso

if TYPE_CHECKING:
    from sqlmodel import Session

    from store.api import Store


class ActionHistoryImmutable(StoreError):
    """An action, its decisions and its verification links are never changed nor removed."""


class Action(SQLModel, table=True):
    """A proposed change with its scope, motivation and expected effect."""

    __tablename__ = "action"
    id: Optional[int] = Field(default=None, primary_key=True)
    investigation_id: int = Field(
        sa_column=Column(Integer, ForeignKey("investigation.id", ondelete="CASCADE"), index=True, nullable=False)
    )
    kind: str  # a workbench.actions.records.ActionKind (checked when the door reads it)
    # {dimension: [from, to]}
    changes: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    scope: str = Field(sa_column=Column(Text, nullable=False))
    # hypothesis ids of the same investigation
    because: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    # [{"kind": ..., ...}]: the evidence cited beside the hypotheses
    evidence: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    # {"metric", "direction": "decrease" | "increase" | "recovery"} or {} (none stated)
    expect: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    # A retry: {"conditions": {name: value}, "failure_class", "inputs": [files]}; {} otherwise
    retry: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_by: str = ""
    created_at: str = Field(default_factory=utcnow_iso)


class ActionDecision(SQLModel, table=True):
    """One approval or rejection: who, when, why. The latest decides."""

    __tablename__ = "action_decision"
    id: Optional[int] = Field(default=None, primary_key=True)
    action_id: int = Field(
        sa_column=Column(Integer, ForeignKey("action.id", ondelete="CASCADE"), index=True, nullable=False)
    )
    decision: str  # a workbench.actions.records.DecisionWord (checked when the door reads it)
    by: str
    why: str = Field(sa_column=Column(Text, nullable=False))
    at: str = Field(default_factory=utcnow_iso)


class ActionVerification(SQLModel, table=True):
    """A rerun plan (its candidate arm embodying the change) or a new job's conditions,
    tied to an approved action. The latest is the one the status is derived from."""

    __tablename__ = "action_verification"
    id: Optional[int] = Field(default=None, primary_key=True)
    action_id: int = Field(
        sa_column=Column(Integer, ForeignKey("action.id", ondelete="CASCADE"), index=True, nullable=False)
    )
    plan_id: Optional[int] = Field(
        default=None, sa_column=Column(Integer, ForeignKey("rerun_plan.id", ondelete="RESTRICT"), nullable=True)
    )
    # A retry verified from a new job's files: {"conditions": {name: value}, "inputs": [files]}
    observed: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    by: str = ""
    at: str = Field(default_factory=utcnow_iso)


def _immutable(_mapper: Any, _connection: Any, target: Any) -> None:
    raise ActionHistoryImmutable(f"{target.__tablename__} {target.id} is history: it is never changed nor removed")


for _table in (Action, ActionDecision, ActionVerification):
    event.listen(_table, "before_update", _immutable)
    event.listen(_table, "before_delete", _immutable)
    attach(_table.__table__)  # type: ignore[union-attr]  # and the database refuses it too (store.append_only)


# -- the store's doors: each opens its own session (nothing outside store/ does) ---------------


class ActionRecords:
    """An action's records and what it cites, read and appended in one transaction
    (:func:`action_records`): the door's checks run between the reads and the write."""

    def __init__(self, session: "Session") -> None:
        self._s = session

    def add(self, row: Any) -> Any:
        """Append an action, a decision or a verification; the row with its id."""
        self._s.add(row)
        self._s.flush()
        return row

    def action(self, action_id: int) -> Action | None:
        return self._s.get(Action, action_id)

    def actions(self, investigation_id: int | None = None) -> list[Action]:
        """Every action (of the investigation), oldest first."""
        stmt = select(Action).order_by(col(Action.id))
        if investigation_id is not None:
            stmt = stmt.where(Action.investigation_id == investigation_id)
        return list(self._s.exec(stmt).all())

    def decisions(self, action_id: int) -> list[ActionDecision]:
        stmt = select(ActionDecision).where(ActionDecision.action_id == action_id).order_by(col(ActionDecision.id))
        return list(self._s.exec(stmt).all())

    def verifications(self, action_id: int) -> list[ActionVerification]:
        stmt = (
            select(ActionVerification)
            .where(ActionVerification.action_id == action_id)
            .order_by(col(ActionVerification.id))
        )
        return list(self._s.exec(stmt).all())

    def investigation(self, investigation_id: int) -> Investigation | None:
        return self._s.get(Investigation, investigation_id)

    def hypothesis(self, hypothesis_id: int) -> Hypothesis | None:
        return self._s.get(Hypothesis, hypothesis_id)

    def comparison(self, comparison_id: Any) -> InvestigationComparison | None:
        return self._s.get(InvestigationComparison, comparison_id)

    def plan(self, plan_id: int) -> RerunPlan | None:
        return self._s.get(RerunPlan, plan_id)

    def find_plan(self, ref: str | int) -> RerunPlan:
        """A plan by id or name (``PlanNotFound``)."""
        return find_plan(self._s, ref)

    def executions(self, plan_id: int) -> list[RerunExecution]:
        return executions_of(self._s, plan_id)

    def execution(self, execution_id: int) -> RerunExecution | None:
        return self._s.get(RerunExecution, execution_id)

    def runs(self, execution_id: int) -> list[RerunRun]:
        return runs_of(self._s, execution_id)

    def latest_comparison(self, plan_id: int) -> RerunComparison | None:
        """The plan's newest rerun comparison."""
        stmt = select(RerunComparison).where(RerunComparison.plan_id == plan_id)
        return self._s.exec(stmt.order_by(col(RerunComparison.id).desc())).first()


@contextmanager
def action_records(store: "Store") -> Iterator[ActionRecords]:
    """:class:`ActionRecords` over one transaction of ``store`` (committed when the block ends)."""
    with store.session() as s:
        yield ActionRecords(s)
