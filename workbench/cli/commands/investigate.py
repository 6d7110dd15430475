"""wb investigate: frame a question, list and show investigations, store comparisons."""

from __future__ import annotations

import click

from workbench.numbers import significant
from workbench.cli.context import LENS, emit_json, workbench_from
from workbench.cli.run_sets import RunSetCommand, run_set_arguments
from workbench.compare.run_sets import SHAPE
from workbench.errors import UsageError
from workbench.investigations.common import current_user
from workbench.investigations.text import print_investigation
from workbench.textsafe import clean
from workbench.usecases.investigations import (
    CompareInInvestigation,
    ListInvestigations,
    NewInvestigation,
    ShowInvestigation,
)


@click.group("investigate")
def command() -> None:
    """Investigations: a lens, a decision question, guardrails, runs, comparisons."""


@command.command("new")
@click.option("--lens", required=True, type=LENS)
@click.option("--question", required=True, help="The decision question (what will you decide?).")
@click.option("--title", default="", help="A short title.")
@click.option(
    "--guardrail",
    "guardrails",
    multiple=True,
    help="A guardrail (repeatable): METRIC RULE LIMIT, the lens extension grammar, e.g. 'eval_loss within 0.02', "
    "'error_rate max 0.01'.",
)
@click.option("--change", "changes", multiple=True, metavar="DIM=FROM:TO", help="The intended change (repeatable).")
@click.option("--baseline", "baseline", multiple=True, metavar="RUN", help="A baseline run (repeatable).")
@click.option("--candidate", "candidate", multiple=True, metavar="RUN", help="A candidate run (repeatable).")
@click.option("--by", default=None, help="Who frames it (default: your login name).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def new(ctx, lens, question, title, guardrails, changes, baseline, candidate, by, as_json) -> None:
    """Frame a new investigation."""
    with workbench_from(ctx) as wb:
        inv = wb.call(
            NewInvestigation(
                lens=lens,
                question=question,
                title=title,
                guardrails=list(guardrails),
                change=list(changes),
                baseline=list(baseline),
                candidate=list(candidate),
                by=by or current_user(),
            )
        )
    if as_json:
        emit_json(inv.to_json())
    else:
        click.echo(f"investigation {inv.id} framed")
        print_investigation(inv)


@command.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array.")
@click.pass_context
def list_(ctx, as_json) -> None:
    """List investigations."""
    with workbench_from(ctx) as wb:
        rows = [i.to_json() for i in wb.call(ListInvestigations()).items]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("no investigations yet (wb investigate new --lens L --question TEXT)", err=True)
    for r in rows:
        mark = " [imported]" if r["imported"] else ""
        click.echo(
            f"{r['id']:>4}  {clean(r['lens']):<9}  {r['comparisons']} cmp  {r['observations']} obs  {r['hypotheses']} "
            f"hyp  "
            f"{clean(r['title'] or r['question'])[:60]}{mark}"
        )


@command.command("show")
@click.argument("investigation")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def show(ctx, investigation, as_json) -> None:
    """Show an investigation: frame, comparisons, observations, hypotheses."""
    with workbench_from(ctx) as wb:
        inv = wb.call(ShowInvestigation(investigation=investigation))
    if as_json:
        emit_json(inv.to_json())
    else:
        print_investigation(inv)


@command.command("compare", cls=RunSetCommand)
@click.argument("investigation")
@run_set_arguments
@click.option("--lens", default=None, type=LENS, help="Default: the investigation's lens.")
@click.option(
    "--change", "changes", multiple=True, metavar="DIM=FROM:TO", help="Declared change (default: the investigation's)."
)
@click.option("--no-change", is_flag=True, help="Declare no change (an A/A control of baseline against baseline).")
@click.option(
    "--accept",
    "accepts",
    multiple=True,
    metavar="DIM[,DIM...]",
    help="Accept mismatched dimensions (needs a --why; each is recorded).",
)
@click.option("--why", "whys", multiple=True, metavar="TEXT", help="The justification for the matching --accept.")
@click.option("--by", default=None)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def compare(
    ctx, investigation, baseline, candidate, control, lens, changes, no_change, accepts, whys, by, as_json
) -> None:
    """Compare BASELINE runs with --vs candidate runs and store the result in INVESTIGATION.

    The run sets are named as for wb compare: INVESTIGATION BASE... --vs CAND...
    [--control APRIME...]; a run named on two sides is refused.
    """
    if not candidate:
        raise UsageError(f"name the candidate runs: wb investigate compare INVESTIGATION {SHAPE}")
    with workbench_from(ctx) as wb:
        comp = wb.call(
            CompareInInvestigation(
                investigation=investigation,
                baseline=list(baseline),
                candidate=list(candidate),
                control=list(control),
                lens=lens,
                change=list(changes) if changes else None,
                no_change=no_change,
                accept=list(accepts),
                why=list(whys),
                by=by or current_user(),
            )
        ).to_json()
    if as_json:
        emit_json(comp)
        return
    result = comp["result"]
    click.echo(f"comparison {comp['id']} stored in investigation {investigation}")
    if not comp["comparable"]:
        refusal = result.get("refusal") or {}
        click.echo(f"refused: {clean(refusal.get('reason') or refusal)}")
    else:
        primary = result.get("primary") or {}
        click.echo(
            f"{clean(primary.get('metric'))}: {significant(primary.get('baseline'))} -> "
            f"{significant(primary.get('candidate'))} "
            f"{clean(primary.get('unit') or '')} ({significant(primary.get('delta_pct'), sign=True)} %), "
            f"verdict {comp['verdict'] or 'none (one run a side gives no uncertainty)'}"
        )
        flags = ((primary.get("effect") or {}).get("flags")) or []
        if flags:
            click.echo(f"  flags: {', '.join(clean(f) for f in flags)}")
        for obs in result.get("observations") or []:
            click.echo(f"  observation, not cause: {clean(obs.get('text'))}")
        click.echo(f"pin them with: wb observe {investigation} --from-compare {comp['id']}")
