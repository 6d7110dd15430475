"""Rerun plans and their reports, bisections' reports (``wb rerun plan``, ``wb rerun report``,
``wb bisect status|report``, the TUI's Verify pane). Each is the door's function
(``rerun/workflow.py``, ``bisect/``).

A plan is made where it will run (the machine's environment is part of it, from its preflight),
then saved here; the investigation it verifies adds its frame guardrails where it is saved.
"""

from __future__ import annotations

from typing import Any

import msgspec

from workbench.bisect.bisection import report as bisection_report
from workbench.bisect.result import BisectionReport
from workbench.bisect.workflow import BisectionRow, bisect_errors, bisection_rows
from workbench.investigations.common import writable_investigation
from workbench.investigations.frame import frame_guardrails, investigation_view
from workbench.rerun import workflow as plans
from workbench.rerun.plan import Plan, with_frame_guardrails
from workbench.rerun.plan_summary import PlanList, PlanSaved
from workbench.usecases.core import Answer, Context, Request, operation


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


@operation("plans.save", "upload")
def save_plan(ctx: Context, req: SavePlan) -> Saved:
    """Save a rerun plan (added, unchanged when identical, replaced while it has not run)."""
    with plans.plan_errors():
        plan = req.plan
        investigation_id = None if req.investigation is None else writable_investigation(ctx.store, req.investigation)
        if investigation_id is not None:  # the investigation's frame guardrails are judged at Verify too
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
