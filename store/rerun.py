"""Rerun records: plans, their executions, the runs of each execution, and comparisons.

Plan, execution and comparison are separate records: a plan says what to run, an
execution is one attempt to run it on one machine (with its preflight), a comparison
is one analysis of an execution's runs. A plan is immutable once it has executions
(enforced here, below the application): a changed plan is a new plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Optional

from sqlalchemy import JSON, Column, ForeignKey, Integer, UniqueConstraint, event, func
from sqlalchemy import select as sa_select
from sqlmodel import Field, SQLModel, col, select

from store.errors import StoreError
from store.investigations import Investigation  # noqa: F401 - the table rerun_plan.investigation_id refers to
from store.records import decimal_id
from store.tables import utcnow_iso

if TYPE_CHECKING:
    from sqlmodel import Session

    from store.api import Store

# Execution states. "running" with a process that is gone means it crashed.
RUNNING, INTERRUPTED, COMPLETE, ABANDONED = "running", "interrupted", "complete", "abandoned"
# Run states: a finished run is "ok" or "failed"; "interrupted" runs are run again on resume.
RUN_OK, RUN_FAILED, RUN_INTERRUPTED = "ok", "failed", "interrupted"


class PlanImmutable(StoreError):
    """A plan that has executions cannot change."""


class PlanNotFound(StoreError):
    """No plan by that id or name."""


class RerunPlan(SQLModel, table=True):
    __tablename__ = "rerun_plan"
    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)
    lens: str
    digest: str  # SHA-256 of the body's RFC 8785 form
    origin: str = "user"  # "user" or "bundle:<sha256>"
    body: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: str = Field(default_factory=utcnow_iso)
    # The investigation the plan verifies (its executions' comparisons are that investigation's
    # evidence); None for a plan made outside any (schema version 2).
    investigation_id: Optional[int] = Field(
        default=None, sa_column=Column(Integer, ForeignKey("investigation.id", ondelete="RESTRICT"), nullable=True)
    )


class RerunExecution(SQLModel, table=True):
    __tablename__ = "rerun_execution"
    id: Optional[int] = Field(default=None, primary_key=True)
    plan_id: int = Field(
        sa_column=Column(Integer, ForeignKey("rerun_plan.id", ondelete="RESTRICT"), index=True, nullable=False)
    )
    status: str = RUNNING
    host: str = ""
    pid: int = 0  # the wb process running it (to tell a live execution from a crashed one)
    workdir: str = ""  # where captures, stdout and stderr of each run are kept
    # The preflight of the start, then one per resume.
    preflights: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    schedule: list[list[Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    started_at: str = Field(default_factory=utcnow_iso)
    ended_at: Optional[str] = None


class RerunRun(SQLModel, table=True):
    """One launch of one arm's command: its outcome is kept whether it succeeded or not."""

    __tablename__ = "rerun_run"
    id: Optional[int] = Field(default=None, primary_key=True)
    execution_id: int = Field(
        sa_column=Column(Integer, ForeignKey("rerun_execution.id", ondelete="CASCADE"), index=True, nullable=False)
    )
    round: int  # 1..rounds; 0 is a warm-up run
    arm: str  # "A", "B", "A'"
    slot: int  # position in the execution's schedule
    status: str  # a workbench.rerun.comparison.RunStatus: ok, failed or interrupted
    reason: str = ""  # why it failed, in one line
    argv: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    started_at: str = ""
    ended_at: str = ""
    wall_s: Optional[float] = None
    exit_status: Optional[int] = None  # negative: killed by that signal
    stderr_tail: str = ""
    capture_path: str = ""
    capture_sha256: str = ""
    run_id: Optional[int] = Field(
        default=None, sa_column=Column(Integer, ForeignKey("run.id", ondelete="SET NULL"), nullable=True)
    )
    statistic: Optional[float] = None  # the plan's per-run statistic, when the capture gave one


class RerunComparison(SQLModel, table=True):
    __tablename__ = "rerun_comparison"
    __table_args__ = (UniqueConstraint("execution_id", "digest"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    plan_id: int = Field(
        sa_column=Column(Integer, ForeignKey("rerun_plan.id", ondelete="RESTRICT"), index=True, nullable=False)
    )
    execution_id: int = Field(
        sa_column=Column(Integer, ForeignKey("rerun_execution.id", ondelete="CASCADE"), index=True, nullable=False)
    )
    rounds_used: int = 0
    verdict: Optional[str] = None
    digest: str = ""  # SHA-256 of the body: the same analysis is stored once
    body: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: str = Field(default_factory=utcnow_iso)


@event.listens_for(RerunPlan, "before_update")
def _plan_is_immutable_once_executed(_mapper: Any, connection: Any, target: RerunPlan) -> None:
    n = connection.execute(
        sa_select(func.count()).select_from(RerunExecution).where(RerunExecution.plan_id == target.id)
    ).scalar_one()
    if n:
        raise PlanImmutable(
            f"plan {target.name!r} has {n} execution(s) and cannot change; save the changed plan under a new name"
        )


@event.listens_for(RerunPlan, "before_delete")
def _executed_plan_is_kept(_mapper: Any, connection: Any, target: RerunPlan) -> None:
    _plan_is_immutable_once_executed(_mapper, connection, target)


# -- queries ----------------------------------------------------------------------------


def find_plan(session: "Session", ref: str | int) -> RerunPlan:
    """A plan by id or name."""
    text = str(ref).strip()
    as_id = decimal_id(text)  # ASCII digits only; anything else is a name
    row = session.get(RerunPlan, as_id) if as_id is not None else None
    if row is None:
        row = session.exec(select(RerunPlan).where(RerunPlan.name == text)).first()
    if row is None:
        raise PlanNotFound(f"no rerun plan with id or name {text!r} (see 'wb rerun plan --list')")
    return row


def execution_count(session: "Session", plan_id: int) -> int:
    return int(
        session.exec(select(func.count()).select_from(RerunExecution).where(RerunExecution.plan_id == plan_id)).one()
    )


def save_plan(
    session: "Session",
    name: str,
    lens: str,
    digest: str,
    body: dict[str, object],
    origin: str = "user",
    investigation_id: int | None = None,
) -> tuple[RerunPlan, Literal["added", "unchanged", "replaced"]]:
    """Add a plan, or keep the identical one; returns (plan, "added" | "unchanged" | "replaced").

    A plan of the same name with a different body (or investigation) replaces it only
    while it has no executions; otherwise :class:`PlanImmutable`.
    """
    existing = session.exec(select(RerunPlan).where(RerunPlan.name == name)).first()
    if existing is None:
        row = RerunPlan(
            name=name, lens=lens, digest=digest, body=body, origin=origin, investigation_id=investigation_id
        )
        session.add(row)
        session.flush()
        return row, "added"
    if existing.digest == digest and existing.investigation_id == investigation_id:
        return existing, "unchanged"
    n = execution_count(session, int(existing.id))  # type: ignore[arg-type]
    if n:
        what = "cannot change" if existing.digest != digest else f"belongs to investigation {existing.investigation_id}"
        raise PlanImmutable(f"plan {name!r} has {n} execution(s) and {what}; save the changed plan under a new name")
    existing.investigation_id = investigation_id
    existing.lens, existing.digest, existing.body, existing.origin = lens, digest, body, origin
    existing.created_at = utcnow_iso()
    session.add(existing)
    session.flush()
    return existing, "replaced"


def list_plans(session: "Session") -> list[RerunPlan]:
    return list(session.exec(select(RerunPlan).order_by(RerunPlan.id)).all())


def executions_of(session: "Session", plan_id: int) -> list[RerunExecution]:
    stmt = select(RerunExecution).where(RerunExecution.plan_id == plan_id).order_by(RerunExecution.id)
    return list(session.exec(stmt).all())


def runs_of(session: "Session", execution_id: int) -> list[RerunRun]:
    stmt = select(RerunRun).where(RerunRun.execution_id == execution_id).order_by(RerunRun.id)
    return list(session.exec(stmt).all())


def comparisons_of(session: "Session", execution_id: int) -> list[RerunComparison]:
    stmt = select(RerunComparison).where(RerunComparison.execution_id == execution_id).order_by(RerunComparison.id)
    return list(session.exec(stmt).all())


def add_comparison(
    store: "Store",
    *,
    plan_id: int,
    execution_id: int,
    rounds_used: int,
    verdict: str | None,
    digest: str,
    body: dict[str, Any],
) -> int:
    """Store an execution's comparison once per distinct result (``digest``) and return its id."""
    with store.session() as s:
        existing = s.exec(
            select(RerunComparison).where(
                RerunComparison.execution_id == execution_id, RerunComparison.digest == digest
            )
        ).first()
        if existing is not None:
            return int(existing.id)  # type: ignore[arg-type]
        row = RerunComparison(
            plan_id=plan_id,
            execution_id=execution_id,
            rounds_used=rounds_used,
            verdict=verdict,
            digest=digest,
            body=body,
        )
        s.add(row)
        s.flush()
        return int(row.id)  # type: ignore[arg-type]


# -- the store's doors: each opens its own session (nothing outside store/ does) ---------------


class ExecutionNotFound(StoreError):
    """No rerun execution by that id."""


def plans(store: "Store") -> list[RerunPlan]:
    """Every plan, oldest first."""
    with store.session() as s:
        return list_plans(s)


def plans_with_executions(store: "Store") -> list[tuple[RerunPlan, list[RerunExecution]]]:
    """Every plan (oldest first) with its executions (oldest first)."""
    with store.session() as s:
        return [(p, executions_of(s, int(p.id))) for p in list_plans(s)]  # type: ignore[arg-type]


def keep_plan(
    store: "Store",
    name: str,
    lens: str,
    digest: str,
    body: dict[str, object],
    origin: str = "user",
    investigation_id: int | None = None,
) -> tuple[RerunPlan, Literal["added", "unchanged", "replaced"]]:
    """:func:`save_plan` in its own transaction."""
    with store.session() as s:
        return save_plan(s, name, lens, digest, body, origin, investigation_id)


def load_plan(store: "Store", ref: str | int) -> RerunPlan:
    """A plan by id or name (``PlanNotFound``)."""
    with store.session() as s:
        return find_plan(s, ref)


def plan_executions(store: "Store", ref: str | int) -> tuple[RerunPlan, list[RerunExecution]]:
    """A plan by id or name, with its executions, oldest first."""
    with store.session() as s:
        row = find_plan(s, ref)
        return row, executions_of(s, int(row.id))  # type: ignore[arg-type]


def executions(store: "Store", plan_id: int) -> list[RerunExecution]:
    """The plan's executions, oldest first."""
    with store.session() as s:
        return executions_of(s, plan_id)


def execution_comparisons(store: "Store", execution_id: int) -> list[RerunComparison]:
    """The comparisons of an execution, oldest first."""
    with store.session() as s:
        return comparisons_of(s, execution_id)


def execution_of_plan(
    store: "Store", ref: str | int, execution_id: int
) -> tuple[RerunPlan, RerunExecution | None, list[RerunRun]]:
    """The plan, its execution ``execution_id`` (``None`` when it is another plan's or none)
    and that execution's runs."""
    with store.session() as s:
        plan = find_plan(s, ref)
        execution = s.get(RerunExecution, execution_id)
        if execution is None or execution.plan_id != plan.id:
            return plan, None, []
        return plan, execution, runs_of(s, execution_id)


def begin_execution(
    store: "Store",
    plan_id: int,
    *,
    abandon: list[int],
    preflight: dict[str, Any],
    schedule: list[list[Any]],
    host: str,
    pid: int,
    now: str,
) -> int:
    """A new running execution of the plan (its unfinished executions in ``abandon`` are
    marked abandoned at ``now``); its id."""
    with store.session() as s:
        for old_id in abandon:
            old = s.get(RerunExecution, old_id)
            if old is not None and old.plan_id == plan_id:
                old.status, old.ended_at = ABANDONED, now
                s.add(old)
        row = RerunExecution(
            plan_id=plan_id, status=RUNNING, host=host, pid=pid, preflights=[preflight], schedule=schedule
        )
        s.add(row)
        s.flush()
        return int(row.id)  # type: ignore[arg-type]


def _execution(s: "Session", execution_id: int) -> RerunExecution:
    row = s.get(RerunExecution, execution_id)
    if row is None:
        raise ExecutionNotFound(f"no rerun execution {execution_id}")
    return row


def execution_runs(store: "Store", execution_id: int) -> tuple[RerunExecution, list[RerunRun]]:
    """An execution (``ExecutionNotFound``) and its runs, oldest first."""
    with store.session() as s:
        return _execution(s, execution_id), runs_of(s, execution_id)


def get_execution(store: "Store", execution_id: int) -> RerunExecution:
    """An execution by id (``ExecutionNotFound``)."""
    with store.session() as s:
        return _execution(s, execution_id)


def update_execution(
    store: "Store",
    execution_id: int,
    *,
    status: str | None = None,
    ended_at: str | None = None,
    workdir: str | None = None,
    host: str | None = None,
    pid: int | None = None,
    add_preflight: dict[str, Any] | None = None,
) -> None:
    """Change what is given of an execution: its status (and end), workdir, who runs it, a
    preflight kept after the others (``ExecutionNotFound``)."""
    with store.session() as s:
        row = _execution(s, execution_id)
        changes = {"status": status, "ended_at": ended_at, "workdir": workdir, "host": host, "pid": pid}
        for name, value in changes.items():
            if value is not None:
                setattr(row, name, value)
        if add_preflight is not None:
            row.preflights = [*row.preflights, add_preflight]
        s.add(row)


def add_run(store: "Store", execution_id: int, run: dict[str, Any]) -> None:
    """Keep one run of an execution (``run``: the ``rerun_run`` columns but its execution)."""
    with store.session() as s:
        _execution(s, execution_id)
        s.add(RerunRun(execution_id=execution_id, **run))


def comparison_ids_of_plans(store: "Store", plan_ids: list[int]) -> list[int]:
    """The ids of every rerun comparison made of these plans' executions."""
    with store.session() as s:
        stmt = select(RerunComparison.id).where(col(RerunComparison.plan_id).in_(plan_ids))
        return [int(i) for i in s.exec(stmt).all() if i is not None]


def plan_ids_of_comparisons(store: "Store", comparison_ids: list[int]) -> list[int]:
    """The ids of the plans these rerun comparisons analysed."""
    with store.session() as s:
        stmt = select(RerunComparison.plan_id).where(col(RerunComparison.id).in_(comparison_ids))
        return [int(i) for i in s.exec(stmt).all()]


def records_by_id(store: "Store", table: Literal["plan", "comparison"], ids: list[int]) -> list[dict[str, Any] | None]:
    """Each plan's or rerun comparison's row as a plain record, ``None`` where the store has none."""
    model: Any = RerunPlan if table == "plan" else RerunComparison
    with store.session() as s:
        return [row.model_dump() if (row := s.get(model, i)) is not None else None for i in ids]
