"""Rerun plans and their reports, bisections' reports (``wb rerun plan``, ``wb rerun report``,
``wb bisect status|report``, the TUI's Verify pane). Each is the door's function
(``rerun/workflow.py``, ``bisect/``).

A plan is made where it will run (the machine's environment is part of it, from its preflight),
then saved here; the investigation it verifies adds its frame guardrails where it is saved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

import msgspec

from workbench.bisect.bisection import report as bisection_report
from workbench.bisect.records import Stored, StoreRecords
from workbench.bisect.result import BisectionReport, BisectionState, Spec
from workbench.bisect.workflow import BisectionRow, bisect_errors, bisection_rows
from workbench.investigations.common import writable_investigation
from workbench.investigations.frame import frame_guardrails, investigation_view
from workbench.limits import MAX_UPLOAD_BYTES
from workbench.rerun import workflow as plans
from workbench.rerun.ledger import ExecutionState, KeptCapture, KeptRun, StoreLedger
from workbench.rerun.plan import Plan, with_frame_guardrails
from workbench.rerun.plan_summary import PlanList, PlanSaved
from workbench.usecases.core import Answer, Context, Request, operation
from workbench.usecases.transport import Workbench


class Plans(msgspec.Struct, frozen=True, kw_only=True):
    """``wb rerun plan --list --json``."""

    listing: PlanList

    def to_json(self) -> dict[str, object]:
        return self.listing.to_json()

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "Plans":
        return cls(listing=msgspec.convert(doc, PlanList))


class ListPlans(Request[Plans], frozen=True, kw_only=True, forbid_unknown_fields=True):
    investigation: str | None = None  # checked as the plan command checks it (a writable investigation)


@operation("plans.list", "read")
def list_plans(ctx: Context, req: ListPlans) -> Plans:
    """The rerun plans in the store."""
    with plans.plan_errors():
        if req.investigation is not None:
            writable_investigation(ctx.store, req.investigation)
        return Plans(listing=plans.plan_list(ctx.store))


class Saved(msgspec.Struct, frozen=True, kw_only=True):
    """``wb rerun plan --json``: the plan as saved."""

    saved: PlanSaved

    def to_json(self) -> dict[str, object]:
        return self.saved.to_json()

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "Saved":
        return cls(saved=PlanSaved.from_json(doc))


class SavePlan(Request[Saved], frozen=True, kw_only=True, forbid_unknown_fields=True):
    plan: Plan
    investigation: str | None = None
    frame: bool = True  # the investigation's frame guardrails join the plan's (a bisection's steps: not)


@operation("plans.save", "upload")
def save_plan(ctx: Context, req: SavePlan) -> Saved:
    """Save a rerun plan (added, unchanged when identical, replaced while it has not run)."""
    with plans.plan_errors():
        plan = req.plan
        investigation_id = None if req.investigation is None else writable_investigation(ctx.store, req.investigation)
        if investigation_id is not None and req.frame:  # the frame guardrails are judged at Verify too
            frame = investigation_view(ctx.store, investigation_id)
            plan = with_frame_guardrails(plan, investigation_id, frame_guardrails(frame.lens, frame.guardrails))
        return Saved(saved=plans.save(ctx.store, plan, investigation_id))


class LoadPlan(Request[plans.StoredPlan], frozen=True, kw_only=True, forbid_unknown_fields=True):
    plan: str  # an id or a name


@operation("plans.load", "read")
def load_plan(ctx: Context, req: LoadPlan) -> plans.StoredPlan:
    """A plan by id or name, with its id and digest."""
    with plans.plan_errors():
        return plans.load(ctx.store, req.plan)


class PlanReport(Request[plans.Finished], frozen=True, kw_only=True, forbid_unknown_fields=True):
    plan: str
    execution: int | None = None  # None: the latest


@operation("plans.report", "upload", idempotent=True)
def plan_report(ctx: Context, req: PlanReport) -> plans.Finished:
    """The comparison of a plan's execution (the latest by default), built from its stored runs
    and stored once per distinct result (hence role upload; asking twice stores nothing more)."""
    with plans.plan_errors():
        execution = plans.latest_execution(ctx.store, req.plan) if req.execution is None else req.execution
        return plans.finish(ctx.store, req.plan, execution)


class PlanHistories(Answer, frozen=True, kw_only=True):
    """The Verify list: every plan with its executions."""

    items: list[plans.PlanHistory]


class ListPlanHistories(Request[PlanHistories], frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


@operation("plans.histories", "read")
def plan_histories(ctx: Context, req: ListPlanHistories) -> PlanHistories:
    """Every plan with its executions, oldest first."""
    return PlanHistories(items=plans.plan_histories(ctx.store))


class ShowPlanDetail(Request[plans.PlanDetail], frozen=True, kw_only=True, forbid_unknown_fields=True):
    plan: str


@operation("plans.detail", "read")
def plan_detail(ctx: Context, req: ShowPlanDetail) -> plans.PlanDetail:
    """A plan with its latest execution, that execution's last preflight and latest comparison."""
    return plans.detail(ctx.store, req.plan)


class ShowBisection(Request[BisectionReport], frozen=True, kw_only=True, forbid_unknown_fields=True):
    bisection: str | None = None  # a name or id; None: the latest


@operation("bisections.report", "read")
def show_bisection(ctx: Context, req: ShowBisection) -> BisectionReport:
    """A bisection as stored: the open range and steps, or its result."""
    with bisect_errors():
        return bisection_report(ctx.store, req.bisection)


class Bisections(Answer, frozen=True, kw_only=True):
    items: list[BisectionRow]


class ListBisections(Request[Bisections], frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


@operation("bisections.list", "read")
def list_bisections(ctx: Context, req: ListBisections) -> Bisections:
    """Every bisection: name, status, steps done, the open range."""
    return Bisections(items=bisection_rows(ctx.store))


# -- an execution's records, for an executor anywhere (rerun/ledger.py) ----------------------------


class Done(Answer, frozen=True, kw_only=True):
    """A record kept; nothing to say."""

    ok: bool = True


class Executions(Answer, frozen=True, kw_only=True):
    items: list[ExecutionState]


class ListExecutions(Request[Executions], frozen=True, kw_only=True, forbid_unknown_fields=True):
    plan_id: int


@operation("executions.list", "read")
def list_executions(ctx: Context, req: ListExecutions) -> Executions:
    """A plan's executions, oldest first (who runs each, its status)."""
    return Executions(items=StoreLedger(ctx.store).executions(req.plan_id))


class Begun(Answer, frozen=True, kw_only=True):
    execution: int


class BeginExecution(Request[Begun], frozen=True, kw_only=True, forbid_unknown_fields=True):
    plan_id: int
    abandon: list[int] = []
    preflight: dict[str, Any]
    schedule: list[tuple[int, str]]
    host: str
    pid: int


@operation("executions.begin", "upload")
def begin_execution(ctx: Context, req: BeginExecution) -> Begun:
    """A new execution of a plan, run by ``host`` (the unfinished ones named are abandoned)."""
    with plans.plan_errors():
        execution = StoreLedger(ctx.store).begin(
            req.plan_id, abandon=req.abandon, preflight=req.preflight, schedule=req.schedule, host=req.host, pid=req.pid
        )
    return Begun(execution=execution)


class SetWorkdir(Request[Done], frozen=True, kw_only=True, forbid_unknown_fields=True):
    execution: int
    workdir: str  # where the runs' files are, on the machine that runs them


@operation("executions.workdir", "upload", idempotent=True)
def set_workdir(ctx: Context, req: SetWorkdir) -> Done:
    """Where an execution's files are."""
    StoreLedger(ctx.store).set_workdir(req.execution, req.workdir)
    return Done()


class TakeOver(Request[Done], frozen=True, kw_only=True, forbid_unknown_fields=True):
    execution: int
    preflight: dict[str, Any]
    host: str
    pid: int


@operation("executions.take_over", "upload")
def take_over(ctx: Context, req: TakeOver) -> Done:
    """An unfinished execution continues on ``host``."""
    StoreLedger(ctx.store).take_over(req.execution, preflight=req.preflight, host=req.host, pid=req.pid)
    return Done()


class ExecutionRuns(Answer, frozen=True, kw_only=True):
    state: ExecutionState
    runs: list[KeptRun]


class ShowExecution(Request[ExecutionRuns], frozen=True, kw_only=True, forbid_unknown_fields=True):
    execution: int


@operation("executions.show", "read")
def show_execution(ctx: Context, req: ShowExecution) -> ExecutionRuns:
    """An execution and the runs it kept (what a resume continues from)."""
    state, runs = StoreLedger(ctx.store).execution(req.execution)
    return ExecutionRuns(state=state, runs=runs)


class EndExecution(Request[Done], frozen=True, kw_only=True, forbid_unknown_fields=True):
    execution: int
    status: Literal["complete", "interrupted"]


@operation("executions.end", "upload", idempotent=True)
def end_execution(ctx: Context, req: EndExecution) -> Done:
    """An execution ended: complete, or interrupted (a resume continues it)."""
    StoreLedger(ctx.store).end(req.execution, req.status)
    return Done()


class KeepRun(Request[Done], frozen=True, kw_only=True, forbid_unknown_fields=True):
    execution: int
    run: KeptRun


@operation("executions.keep_run", "upload")
def keep_run(ctx: Context, req: KeepRun) -> Done:
    """One run's outcome, kept as soon as it ends."""
    StoreLedger(ctx.store).keep_run(req.execution, req.run)
    return Done()


class KeepCapture(Request[KeptCapture], frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A run's capture; through a server the file travels as the body (``file_field``)."""

    file_field: ClassVar[str] = "capture"
    max_file_bytes: ClassVar[int] = MAX_UPLOAD_BYTES

    execution: int
    slot: int
    capture: str
    source: str  # the file where the run wrote it


@operation("executions.keep_capture", "upload", idempotent=True)
def keep_capture(ctx: Context, req: KeepCapture) -> KeptCapture:
    """A run's capture kept as the run of its slot (idempotent: a capture kept twice is one run)."""
    return StoreLedger(ctx.store).keep_capture(req.execution, req.slot, Path(req.capture), req.source)


class WorkbenchLedger:
    """An execution's records kept through a transport (``Ledger``): the executor runs here, and
    each record goes to the store the workbench holds, a local one or a server's."""

    def __init__(self, wb: Workbench) -> None:
        self.wb = wb
        self.url = wb.url

    def plan(self, ref: str | int) -> tuple[int, str, Plan]:
        stored = self.wb.call(LoadPlan(plan=str(ref)))
        return stored.id, stored.digest, stored.plan

    def executions(self, plan_id: int) -> list[ExecutionState]:
        return self.wb.call(ListExecutions(plan_id=plan_id)).items

    def begin(
        self,
        plan_id: int,
        *,
        abandon: list[int],
        preflight: dict[str, Any],
        schedule: list[tuple[int, str]],
        host: str,
        pid: int,
    ) -> int:
        req = BeginExecution(
            plan_id=plan_id, abandon=abandon, preflight=preflight, schedule=schedule, host=host, pid=pid
        )
        return self.wb.call(req).execution

    def set_workdir(self, execution_id: int, workdir: str) -> None:
        self.wb.call(SetWorkdir(execution=execution_id, workdir=workdir))

    def take_over(self, execution_id: int, *, preflight: dict[str, Any], host: str, pid: int) -> None:
        self.wb.call(TakeOver(execution=execution_id, preflight=preflight, host=host, pid=pid))

    def execution(self, execution_id: int) -> tuple[ExecutionState, list[KeptRun]]:
        shown = self.wb.call(ShowExecution(execution=execution_id))
        return shown.state, shown.runs

    def end(self, execution_id: int, status: str) -> None:
        self.wb.call(EndExecution(execution=execution_id, status=status))  # type: ignore[arg-type]

    def keep_run(self, execution_id: int, run: KeptRun) -> None:
        self.wb.call(KeepRun(execution=execution_id, run=run))

    def keep_capture(self, execution_id: int, slot: int, capture: Path, source: str) -> KeptCapture:
        return self.wb.call(KeepCapture(execution=execution_id, slot=slot, capture=str(capture), source=source))


# -- a bisection's records, for a search anywhere (bisect/records.py) ------------------------------


class BisectionBegun(Answer, frozen=True, kw_only=True):
    bisection: int


class BeginBisection(Request[BisectionBegun], frozen=True, kw_only=True, forbid_unknown_fields=True):
    spec: Spec
    state: BisectionState


@operation("bisections.begin", "upload")
def begin_bisection(ctx: Context, req: BeginBisection) -> BisectionBegun:
    """Record a new bisection (its candidates read where it runs)."""
    with bisect_errors():
        return BisectionBegun(bisection=StoreRecords(ctx.store).begin(req.spec, req.state))


class LoadBisection(Request[Stored], frozen=True, kw_only=True, forbid_unknown_fields=True):
    bisection: str | None = None  # a name or id; None: the latest


@operation("bisections.load", "read")
def load_bisection(ctx: Context, req: LoadBisection) -> Stored:
    """A bisection's spec, state and status (what a resume continues from)."""
    with bisect_errors():
        return StoreRecords(ctx.store).load(req.bisection)


class SaveBisection(Request[Done], frozen=True, kw_only=True, forbid_unknown_fields=True):
    bisection: int
    state: BisectionState
    status: str


@operation("bisections.save", "upload", idempotent=True)
def save_bisection(ctx: Context, req: SaveBisection) -> Done:
    """A bisection's state after a step."""
    with bisect_errors():
        StoreRecords(ctx.store).save(req.bisection, req.state, req.status)
    return Done()


class PinBisection(Request[Done], frozen=True, kw_only=True, forbid_unknown_fields=True):
    investigation: int
    text: str
    evidence: list[dict[str, Any]]


@operation("bisections.pin", "upload")
def pin_bisection(ctx: Context, req: PinBisection) -> Done:
    """A bisection's result pinned to its investigation (an observation, not a cause)."""
    StoreRecords(ctx.store).pin(req.investigation, req.text, req.evidence)
    return Done()


class WorkbenchBisectRecords:
    """A bisection's records kept through a transport (``BisectRecords``): the builds and the
    benchmarks run here, each record goes to the store the workbench holds."""

    def __init__(self, wb: Workbench) -> None:
        self.wb = wb

    def begin(self, spec: Spec, state: BisectionState) -> int:
        return self.wb.call(BeginBisection(spec=spec, state=state)).bisection

    def load(self, ref: str | int | None) -> Stored:
        return self.wb.call(LoadBisection(bisection=None if ref is None else str(ref)))

    def save(self, bisection_id: int, state: BisectionState, status: str) -> None:
        self.wb.call(SaveBisection(bisection=bisection_id, state=state, status=status))

    def save_plan(self, plan: Plan, investigation: int | None) -> None:
        self.wb.call(
            SavePlan(plan=plan, investigation=None if investigation is None else str(investigation), frame=False)
        )

    def ledger(self) -> WorkbenchLedger:
        return WorkbenchLedger(self.wb)

    def finish(self, plan: str, execution_id: int) -> tuple[Any, int]:
        done = self.wb.call(PlanReport(plan=plan, execution=execution_id))
        return done.report, done.comparison_id

    def pin(self, investigation: int, text: str, evidence: list[dict[str, Any]]) -> None:
        self.wb.call(PinBisection(investigation=investigation, text=text, evidence=evidence))
