"""What a bisection keeps, and where: its own record (spec and state, rewritten after each step),
each step's rerun plan, execution and comparison, and its result pinned to an investigation.

The search (``bisection.py``) builds and benchmarks where it runs, on the machine with the
code and the GPU; every record goes through :class:`BisectRecords`. :class:`StoreRecords` keeps
them in a store; the use cases expose each (``usecases/reruns.py``), and
``usecases.reruns.WorkbenchBisectRecords`` keeps them through any transport, so a bisection
typed on a GPU node records on the team's server, and resumes from the server's record.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from workbench.bisect.result import BisectionState, Spec
from workbench.errors import UsageError
from workbench.investigations.common import investigation_row
from workbench.investigations.workflow import new_observation
from workbench.rerun import workflow as plans
from workbench.rerun.comparison import RerunReport
from workbench.rerun.execute import Executor, Observer
from workbench.rerun.ledger import Ledger, StoreLedger
from workbench.rerun.plan import Plan
from workbench.vocabulary import Record

if TYPE_CHECKING:
    from store.api import Store


class Stored(Record, frozen=True, kw_only=True):
    """A bisection as stored: its id, spec, state and status."""

    id: int
    spec: Spec
    state: BisectionState
    status: str


class BisectRecords(Protocol):
    """Where a bisection's records are kept (a store, or a server's store)."""

    def begin(self, spec: Spec, state: BisectionState) -> int: ...

    def load(self, ref: str | int | None) -> Stored: ...

    def save(self, bisection_id: int, state: BisectionState, status: str) -> None: ...

    def save_plan(self, plan: Plan, investigation: int | None) -> None: ...

    def ledger(self) -> Ledger: ...

    def finish(self, plan: str, execution_id: int) -> tuple[RerunReport, int]: ...

    def pin(self, investigation: int, text: str, evidence: list[dict[str, Any]]) -> None: ...


def execute(records: BisectRecords, plan_name: str, root: Path, observer: Observer | None) -> tuple[RerunReport, int]:
    """Run (or resume) a step plan's execution here, then build and store its comparison."""
    from store.rerun import COMPLETE, INTERRUPTED, RUNNING  # the execution states (SQLModel, heavy)

    ledger = records.ledger()
    executor = Executor(ledger, plan_name, observer=observer, workdir=root / "runs", confirmed=True)
    executions = ledger.executions(executor.plan_id)
    latest = executions[-1] if executions else None
    if latest is None or latest.status not in (RUNNING, INTERRUPTED, COMPLETE):
        execution_id = executor.start()
        executor.run(execution_id)
    elif latest.status in (RUNNING, INTERRUPTED):
        execution_id = executor.reopen()
        executor.run(execution_id)
    else:
        execution_id = latest.id
    return records.finish(plan_name, execution_id)


class StoreRecords:
    """A bisection's records in a store (``store.bisect``, the rerun door, the investigation door)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def begin(self, spec: Spec, state: BisectionState) -> int:
        """Record a new bisection; its id (a name already taken is refused)."""
        from sqlmodel import select  # SQLModel/SQLAlchemy: heavy, loaded when a bisection is recorded

        from store.bisect import Bisection  # the store's tables: SQLModel, heavy

        if spec.investigation is not None:
            with self.store.session() as s:
                investigation_row(s, spec.investigation, writable=True)
        with self.store.session() as s:
            if s.exec(select(Bisection).where(Bisection.name == spec.name)).first() is not None:
                raise UsageError(
                    f"a bisection named {spec.name!r} exists; resume it with 'wb bisect resume {spec.name}' "
                    "or start a new one with another --name"
                )
            row = Bisection(
                name=spec.name, spec=spec.to_json(), state=state.to_json(), investigation_id=spec.investigation
            )
            s.add(row)
            s.flush()
            return int(row.id)  # type: ignore[arg-type]

    def load(self, ref: str | int | None) -> Stored:
        from store.bisect import find_bisection  # the store's tables: SQLModel, heavy

        with self.store.session() as s:
            row = find_bisection(s, ref)
            return Stored(
                id=int(row.id),  # type: ignore[arg-type]
                spec=Spec.from_json(row.spec),
                state=BisectionState.from_json(row.state),
                status=row.status,
            )

    def save(self, bisection_id: int, state: BisectionState, status: str) -> None:
        from store.bisect import Bisection  # the store's tables: SQLModel, heavy
        from store.tables import utcnow_iso

        with self.store.session() as s:
            row = s.get(Bisection, bisection_id)
            if row is None:
                raise UsageError(f"no bisection {bisection_id}")
            row.state, row.status, row.updated_at = state.to_json(), status, utcnow_iso()
            s.add(row)

    def save_plan(self, plan: Plan, investigation: int | None) -> None:
        plans.save(self.store, plan, investigation)  # its steps are its investigation's

    def ledger(self) -> Ledger:
        return StoreLedger(self.store)

    def finish(self, plan: str, execution_id: int) -> tuple[RerunReport, int]:
        done = plans.finish(self.store, plan, execution_id)
        return done.report, done.comparison_id

    def pin(self, investigation: int, text: str, evidence: list[dict[str, Any]]) -> None:
        new_observation(self.store, investigation, text, evidence, source="bisect")
