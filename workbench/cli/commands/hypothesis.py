"""wb hypothesis: decide a hypothesis (supported / refuted / undetermined / open) with evidence."""

from __future__ import annotations

import click

from workbench.cli.context import emit_json, workbench_from
from workbench.investigations.common import current_user
from workbench.usecases.investigations import DecideHypothesis
from workbench.textsafe import clean


@click.group("hypothesis")
def command() -> None:
    """Work with one hypothesis."""


@command.command("status")
@click.argument("hypothesis")
@click.argument("status", type=click.Choice(["open", "supported", "refuted", "undetermined"]))
@click.option(
    "--evidence",
    multiple=True,
    metavar="KIND=VALUE",
    help="What decided it (repeatable): plan=ID|NAME (a rerun plan), comparison=N, rerun_comparison=N.",
)
@click.option("--note", default="", help="A note on the decision.")
@click.option("--by", default=None, help="Who decides (default: your login name).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def status(ctx, hypothesis, status, evidence, note, by, as_json) -> None:
    """Set HYPOTHESIS's STATUS; supported and refuted need --evidence. History is kept."""
    with workbench_from(ctx) as wb:
        hyp = wb.call(
            DecideHypothesis(
                hypothesis=hypothesis, status=status, evidence=list(evidence), note=note, by=by or current_user()
            )
        ).to_json()
    if as_json:
        emit_json(hyp)
    else:
        click.echo(f"hypothesis {hyp['id']} is now {hyp['status']}: {clean(hyp['statement'])}")
