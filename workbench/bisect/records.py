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
from workbench.investigations.common import investigation_of
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
        from store.bisect import BisectionExists, add_bisection  # the store's tables: SQLModel, heavy

        if spec.investigation is not None:
            investigation_of(self.store, spec.investigation, writable=True)
        try:
            return add_bisection(self.store, spec.name, spec.to_json(), state.to_json(), spec.investigation)
        except BisectionExists:
            raise UsageError(
                f"a bisection named {spec.name!r} exists; resume it with 'wb bisect resume {spec.name}' "
                "or start a new one with another --name"
            ) from None

    def load(self, ref: str | int | None) -> Stored:
        from store.bisect import load_bisection  # the store's tables: SQLModel, heavy

        row = load_bisection(self.store, ref)
        return Stored(
            id=int(row.id),  # type: ignore[arg-type]
            spec=Spec.from_json(row.spec),
            state=BisectionState.from_json(row.state),
            status=row.status,
        )

    def save(self, bisection_id: int, state: BisectionState, status: str) -> None:
        from store.bisect import BisectionNotFound, save_bisection_state  # the store's tables: SQLModel, heavy

        try:
            save_bisection_state(self.store, bisection_id, state.to_json(), status)
        except BisectionNotFound:
            raise UsageError(f"no bisection {bisection_id}") from None

    def save_plan(self, plan: Plan, investigation: int | None) -> None:
        plans.save(self.store, plan, investigation)  # its steps are its investigation's

    def ledger(self) -> Ledger:
        return StoreLedger(self.store)

    def finish(self, plan: str, execution_id: int) -> tuple[RerunReport, int]:
        done = plans.finish(self.store, plan, execution_id)
        return done.report, done.comparison_id

    def pin(self, investigation: int, text: str, evidence: list[dict[str, Any]]) -> None:
        new_observation(self.store, investigation, text, evidence, source="bisect")
