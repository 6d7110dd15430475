"""wb action: propose a change, approve or reject it, verify it with a rerun plan, watch it.

No command applies a change to a system: wb records, plans and verifies; people act.
Exit codes: 2 usage or bad input; 3 verifying an action that is not approved (or with
``watch --fail-on any``, later runs the contract refuses); 4 drift with ``watch --fail-on``.
"""

from __future__ import annotations

import sys

import click

from workbench.actions.text import action_lines, change_text
from workbench.cli.context import emit_json, workbench_from
from workbench.investigations.common import current_user
from workbench.textsafe import clean
from workbench.usecases.actions import (
    DecideAction,
    ListActions,
    ProposeAction,
    ShowAction,
    VerifyAction,
    WatchAction,
)


def _show(a, as_json: bool) -> None:
    if as_json:
        emit_json(a.to_json())
    else:
        click.echo("\n".join(action_lines(a)))


@click.group("action")
def command() -> None:
    """Proposed actions: a change, who approved it and why, and whether it worked."""


@command.command("propose")
@click.argument("investigation")
@click.option("--change", "changes", multiple=True, metavar="DIM=FROM:TO", help="The change proposed (repeatable).")
@click.option("--scope", required=True, help="Where it applies (hosts, pool, service, ...).")
@click.option("--because", multiple=True, metavar="HYPOTHESIS", help="The hypothesis that motivates it (repeatable).")
@click.option(
    "--evidence",
    multiple=True,
    metavar="KIND=VALUE",
    help="Evidence beside the hypotheses, as for wb observe (run=ID, comparison=N, metric=..., ...).",
)
@click.option(
    "--kind",
    type=click.Choice(["configuration", "version", "restart", "escalation"]),
    default=None,
    help="What kind of change (default configuration; a retry with --retry).",
)
@click.option(
    "--expect",
    nargs=2,
    metavar="METRIC DIRECTION",
    default=None,
    help="The expected effect: METRIC decrease|increase|recovery (recovery: back within the band of the baseline).",
)
@click.option(
    "--retry",
    "retry_of",
    multiple=True,
    metavar="PATH",
    type=click.Path(exists=True),
    help="A retry of the failed job whose files these are: records the conditions wb diagnose blames.",
)
@click.option("--by", default=None, help="Who proposes it (default: your login name).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def propose(ctx, investigation, changes, scope, because, evidence, kind, expect, retry_of, by, as_json) -> None:
    """Record a proposed change in INVESTIGATION (nothing is applied)."""
    with workbench_from(ctx) as wb:
        a = wb.call(
            ProposeAction(
                investigation=investigation,
                scope=scope,
                change=list(changes),
                because=list(because),
                evidence=list(evidence),
                kind=kind,
                expect=tuple(expect) if expect else None,
                retry_of=[str(p) for p in retry_of],
                by=by or current_user(),
            )
        )
    _show(a, as_json)


@command.command("show")
@click.argument("action")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def show(ctx, action, as_json) -> None:
    """Show ACTION: change, scope, motivation, decisions, verifications, derived status."""
    with workbench_from(ctx) as wb:
        _show(wb.call(ShowAction(action=action)), as_json)


@command.command("list")
@click.option("--investigation", default=None, help="Only the actions of this investigation.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array.")
@click.pass_context
def list_(ctx, investigation, as_json) -> None:
    """List actions with their derived status."""
    with workbench_from(ctx) as wb:
        rows = wb.call(ListActions(investigation=investigation)).items
    if as_json:
        emit_json([a.to_json() for a in rows])
        return
    if not rows:
        click.echo("no actions (wb action propose INVESTIGATION ...)")
    for a in rows:
        click.echo(f"{a.id:>4}  inv {a.investigation_id:<3} {a.status.status:<13} {a.kind:<13} {clean(change_text(a))}")


def _decide(decision: str):
    @click.argument("action")
    @click.option("--by", required=True, help="Who decides.")
    @click.option("--why", required=True, help="Why (kept in the append-only history).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.pass_context
    def decide(ctx, action, by, why, as_json) -> None:
        with workbench_from(ctx) as wb:
            _show(wb.call(DecideAction(action=action, decision=decision, why=why, by=by)), as_json)  # type: ignore[arg-type]

    decide.__doc__ = f"Record that ACTION is {decision} (who, when, why; history is kept)."
    return decide


command.command("approve")(_decide("approved"))
command.command("reject")(_decide("rejected"))


@command.command("verify")
@click.argument("action")
@click.option("--plan", default=None, help="The executed rerun plan whose candidate arm embodies the change.")
@click.option(
    "--job", multiple=True, metavar="PATH", type=click.Path(exists=True), help="A retry: the new job's files."
)
@click.option("--by", default=None, help="Who ties it (default: your login name).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def verify(ctx, action, plan, job, by, as_json) -> None:
    """Tie a verification to an approved ACTION; its status follows from the data."""
    with workbench_from(ctx) as wb:
        _show(
            wb.call(VerifyAction(action=action, plan=plan, job=[str(p) for p in job], by=by or current_user())),
            as_json,
        )


@command.command("watch")
@click.argument("action")
@click.option(
    "--against", multiple=True, required=True, metavar="RUN", help="A later run, by id or label (repeatable)."
)
@click.option(
    "--fail-on",
    type=click.Choice(["drift", "any"]),
    default=None,
    help="Exit 4 on drift; with any, also 3 when the later runs cannot be compared.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def watch(ctx, action, against, fail_on, as_json) -> None:
    """Compare later runs with ACTION's verified candidate; report drift."""
    with workbench_from(ctx) as wb:
        w = wb.call(WatchAction(action=action, against=list(against)))
    if as_json:
        emit_json(w.to_json())
    else:
        runs = ", ".join(f"{r.run_id}" for r in w.against)
        click.echo(
            f"action {w.action_id}: runs {runs} against the verified candidate of plan {clean(w.plan)} "
            f"(runs {', '.join(map(str, w.candidate_runs))})"
        )
        click.echo(f"  {clean(w.why)}" + (f" [flags: {', '.join(w.flags)}]" if w.flags else ""))
    if fail_on and w.drift:
        sys.exit(4)
    if fail_on == "any" and not w.comparable:
        sys.exit(3)
