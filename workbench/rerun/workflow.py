"""The door to stored rerun plans and executions for Verify (through ``store.rerun``'s
functions): it returns the package's typed records. ``wb rerun`` and the TUI's Verify pane call it
(neither imports the ORM); the store's refusals come out as the CLI's errors (an unknown plan is a
usage error, a change to an executed plan is refused).

Finishing an execution (its comparison built from the stored runs, then stored once per distinct
result) is :func:`finish`, for the command line and the TUI alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from store.errors import StoreError
from workbench.errors import EXIT_REFUSED, UsageError, WbError
from workbench.rerun.comparison import RerunReport
from workbench.rerun.execute import Executor, Observer
from workbench.rerun.plan import Plan
from workbench.rerun.plan_summary import PlanList, PlanRow, PlanSaved
from workbench.rerun.preflight import PreflightReport
from workbench.rerun.report import build_comparison, save_comparison
from workbench.vocabulary import Record

if TYPE_CHECKING:
    from store.api import Store


class StoredPlan(Record, frozen=True, kw_only=True):
    """A plan as the store holds it: its id and digest beside the decoded plan."""

    id: int
    digest: str
    plan: Plan


class ExecutionState(Record, frozen=True, kw_only=True):
    """One execution of a plan: its id and status (``running``, ``interrupted``, ``done``, ...)."""

    id: int
    status: str


class PlanHistory(PlanRow, frozen=True, kw_only=True):
    """A plan in the Verify list: the plan's row (``wb rerun plan --list``) and its executions, oldest first."""

    executions: tuple[ExecutionState, ...]

    @property
    def last_status(self) -> str:
        return self.executions[-1].status if self.executions else "not run"


class PlanDetail(Record, frozen=True, kw_only=True):
    """What the Verify pane shows of a plan: the plan, its latest execution, that execution's last
    preflight and its latest stored comparison (decoded once, here)."""

    stored: StoredPlan
    last: ExecutionState | None
    preflight: PreflightReport | None
    comparison: RerunReport | None


class Finished(Record, frozen=True, kw_only=True):
    """An execution's comparison, as built from its stored runs, and the id it is stored under."""

    report: RerunReport
    comparison_id: int


@contextmanager
def plan_errors() -> Iterator[None]:
    """The store's refusals as the CLI's errors (the door's functions raise them so; ``wb rerun``
    holds it around a whole command, the executor's own store work included)."""
    from store.rerun import PlanImmutable, PlanNotFound  # SQLAlchemy tables: not for --help nor the TUI's first frame

    try:
        yield
    except PlanNotFound as exc:
        raise UsageError(str(exc)) from None
    except PlanImmutable as exc:
        raise WbError(str(exc), exit_code=EXIT_REFUSED) from None
    except StoreError as exc:
        raise WbError(str(exc)) from None


def stored_id(value: int | None) -> int:
    """A stored row's id (the ORM types it optional: it is None only before the row is added)."""
    assert value is not None, "a stored row has an id"
    return value


def _row(p: Any, row: type[PlanRow] = PlanRow, **more: Any) -> Any:
    """The stored plan's row (``PlanRow``, or a record that extends it with ``more``)."""
    return row(
        id=stored_id(p.id), name=p.name, lens=p.lens, digest=p.digest, origin=p.origin, created_at=p.created_at, **more
    )


def plan_list(store: Store) -> PlanList:
    """Every plan (``wb rerun plan --list``), oldest first."""
    from store.rerun import plans  # SQLAlchemy tables: not for --help nor the TUI's first frame

    with plan_errors():
        return PlanList(plans=tuple(_row(p) for p in plans(store)))


def plan_histories(store: Store) -> list[PlanHistory]:
    """Every plan with its executions, for the Verify list."""
    from store.rerun import plans_with_executions  # SQLAlchemy tables: not for --help nor the TUI's first frame

    with plan_errors():
        stored = plans_with_executions(store)
    return [
        _row(p, PlanHistory, executions=tuple(ExecutionState(id=stored_id(e.id), status=e.status) for e in executions))
        for p, executions in stored
    ]


def save(store: Store, plan: Plan, investigation_id: int | None = None) -> PlanSaved:
    """Save ``plan`` (added, unchanged when identical, replaced while it has not run)."""
    from store.rerun import keep_plan  # SQLAlchemy tables: not for --help nor the TUI's first frame

    with plan_errors():
        row, how = keep_plan(store, plan.name, plan.lens, plan.digest(), plan.to_json(), plan.origin, investigation_id)
    return PlanSaved(
        id=stored_id(row.id),
        name=plan.name,
        digest=row.digest,
        status=how,
        plan=plan,
        warnings=tuple(plan.warnings()),
    )


def load(store: Store, ref: str | int) -> StoredPlan:
    """A plan by id or name."""
    from store.rerun import load_plan  # SQLAlchemy tables: not for --help nor the TUI's first frame

    with plan_errors():
        row = load_plan(store, ref)
    return StoredPlan(id=stored_id(row.id), digest=row.digest, plan=Plan.from_json(row.body))


def detail(store: Store, ref: str | int) -> PlanDetail:
    """The plan, its latest execution with that execution's last preflight and latest comparison."""
    from store.rerun import execution_comparisons, plan_executions  # SQLAlchemy tables: not for the first frame

    with plan_errors():
        row, executions = plan_executions(store, ref)
        last = executions[-1] if executions else None
        comparisons = execution_comparisons(store, stored_id(last.id)) if last is not None else []
    stored = StoredPlan(id=stored_id(row.id), digest=row.digest, plan=Plan.from_json(row.body))
    preflights = list(last.preflights or []) if last is not None else []
    return PlanDetail(
        stored=stored,
        last=ExecutionState(id=stored_id(last.id), status=last.status) if last is not None else None,
        preflight=PreflightReport.from_json(preflights[-1]) if preflights else None,
        comparison=RerunReport.from_json(comparisons[-1].body) if comparisons else None,
    )


def latest_execution(store: Store, ref: str | int) -> int:
    """The id of the plan's latest execution; a usage error when it has not run."""
    from store.rerun import plan_executions  # SQLAlchemy tables: not for --help nor the TUI's first frame

    with plan_errors():
        row, executions = plan_executions(store, ref)
    if not executions:
        raise UsageError(f"plan {row.name!r} has not run yet (wb rerun run {row.name})")
    return stored_id(executions[-1].id)


def has_unfinished(store: Store, plan_id: int) -> bool:
    """Whether an execution of the plan is running or was interrupted (a run resumes it)."""
    from store.rerun import INTERRUPTED, RUNNING, executions  # SQLAlchemy tables: not for the first frame

    with plan_errors():
        return any(e.status in (RUNNING, INTERRUPTED) for e in executions(store, plan_id))


def finish(store: Store, ref: str | int, execution_id: int) -> Finished:
    """The comparison of one execution of the plan, built from its stored runs and stored (once
    per distinct result)."""
    from store.rerun import execution_of_plan  # SQLAlchemy tables: not for the first frame

    with plan_errors():
        plan_row, execution, runs = execution_of_plan(store, ref, execution_id)
        if execution is None:
            raise UsageError(f"plan {plan_row.name!r} has no execution {execution_id}")
        report = build_comparison(store, plan_row, execution, runs)
        return Finished(
            report=report, comparison_id=save_comparison(store, stored_id(plan_row.id), execution_id, report)
        )


def run(store: Store, plan_id: int, observer: Observer) -> tuple[str, Finished]:
    """Preflight, run (or resume the unfinished) execution of the plan, and store its comparison:
    the execution's status and the finished comparison."""
    executor = Executor(store, plan_id, observer=observer)
    with plan_errors():
        execution_id = executor.reopen() if has_unfinished(store, plan_id) else executor.start()
        status = executor.run(execution_id)
    return status, finish(store, plan_id, execution_id)
