"""Proposed actions: propose, approve or reject, verify with a rerun plan, list, show, watch
(``wb action``). Each is the action door's function (``actions/workflow.py``).

A retry's files (``--retry PATH``, ``--job PATH``) are diagnosed where they are read, on a local
store: a server reads none of a client's files, so through a server those options are refused
in one line.
"""

from __future__ import annotations

from typing import Literal

from workbench.actions.records import ActionView, WatchResult
from workbench.actions.watch import watch_action
from workbench.actions.workflow import action_view, decide_action, list_actions, propose_action, verify_action
from workbench.errors import UsageError
from workbench.investigations.workflow import parse_evidence
from workbench.usecases.core import Answer, Context, Request, operation
from workbench.usecases.investigations import parse_changes


def _local_files(ctx: Context, paths: list[str], option: str) -> list[str]:
    if paths and ctx.served:
        raise UsageError(
            f"{option} names files to diagnose here; a server reads none of a client's files: run it on a local store"
        )
    return paths


class ProposeAction(Request[ActionView], frozen=True, kw_only=True, forbid_unknown_fields=True):
    investigation: str
    scope: str
    change: list[str] = []  # DIM=FROM:TO
    because: list[str] = []
    evidence: list[str] = []  # KIND=VALUE, as for wb observe
    kind: Literal["configuration", "version", "restart", "escalation"] | None = None
    expect: tuple[str, str] | None = None
    retry_of: list[str] = []
    by: str | None = None


@operation("actions.propose", "upload")
def propose(ctx: Context, req: ProposeAction) -> ActionView:
    """Record a proposed change in an investigation (nothing is applied)."""
    retry_of = _local_files(ctx, req.retry_of, "--retry")
    return propose_action(
        ctx.store,
        req.investigation,
        scope=req.scope,
        changes=parse_changes(req.change, "max_num_seqs=128:256"),
        because=req.because,
        evidence=parse_evidence(req.evidence, ctx.store),
        kind=req.kind or ("retry" if retry_of else None),
        expect=req.expect,
        retry_of=retry_of,
        by=ctx.by(req.by),
    )


class ShowAction(Request[ActionView], frozen=True, kw_only=True, forbid_unknown_fields=True):
    action: str


@operation("actions.show", "read")
def show(ctx: Context, req: ShowAction) -> ActionView:
    """An action: change, scope, motivation, decisions, verifications, derived status."""
    return action_view(ctx.store, req.action)


class Actions(Answer, frozen=True, kw_only=True):
    """``wb action list --json`` (``items``)."""

    items: list[ActionView]


class ListActions(Request[Actions], frozen=True, kw_only=True, forbid_unknown_fields=True):
    investigation: str | None = None


@operation("actions.list", "read")
def list_(ctx: Context, req: ListActions) -> Actions:
    """The actions (of one investigation) with their derived status."""
    return Actions(items=list_actions(ctx.store, req.investigation))


class DecideAction(Request[ActionView], frozen=True, kw_only=True, forbid_unknown_fields=True):
    action: str
    decision: Literal["approved", "rejected"]
    why: str
    by: str


@operation("actions.decide", "upload")
def decide(ctx: Context, req: DecideAction) -> ActionView:
    """Record that an action is approved or rejected (who, when, why; history is kept)."""
    return decide_action(ctx.store, req.action, req.decision, why=req.why, by=req.by)


class VerifyAction(Request[ActionView], frozen=True, kw_only=True, forbid_unknown_fields=True):
    action: str
    plan: str | None = None
    job: list[str] = []
    by: str | None = None


@operation("actions.verify", "upload")
def verify(ctx: Context, req: VerifyAction) -> ActionView:
    """Tie a verification (an executed rerun plan, or a retry's new job) to an approved action."""
    job = _local_files(ctx, req.job, "--job")
    return verify_action(ctx.store, req.action, plan=req.plan, job=job, by=ctx.by(req.by))


class WatchAction(Request[WatchResult], frozen=True, kw_only=True, forbid_unknown_fields=True):
    action: str
    against: list[str]


@operation("actions.watch", "read")
def watch(ctx: Context, req: WatchAction) -> WatchResult:
    """Later runs against an action's verified candidate: drift beyond the noise floor, or none."""
    return watch_action(ctx.store, req.action, req.against)
