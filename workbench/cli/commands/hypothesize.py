"""wb hypothesize: write a hypothesis (a claim to test) with the test that would decide it."""

from __future__ import annotations

import click

from workbench.cli.context import emit_json, workbench_from
from workbench.investigations.common import current_user
from workbench.usecases.investigations import Hypothesize
from workbench.textsafe import clean


@click.command("hypothesize")
@click.argument("investigation")
@click.argument("statement")
@click.option(
    "--test", "test", required=True, help="The test that would decide it (e.g. a controlled interleaved rerun)."
)
@click.option(
    "--test-kind",
    type=click.Choice(["rerun", "comparison", "bisection", "diagnosis"]),
    default="rerun",
    show_default=True,
    help="The kind of evidence the test is: only that kind, recorded after the hypothesis, can decide it.",
)
@click.option("--by", default=None, help="Who writes it (default: your login name).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def command(ctx, investigation, statement, test, test_kind, by, as_json) -> None:
    """Add a hypothesis to INVESTIGATION; it starts 'open'. It is a claim, not a finding."""
    with workbench_from(ctx) as wb:
        hyp = wb.call(
            Hypothesize(
                investigation=investigation,
                statement=statement,
                test=test,
                test_kind=test_kind,
                by=by or current_user(),
            )
        ).to_json()
    if as_json:
        emit_json(hyp)
    else:
        click.echo(f"hypothesis {hyp['id']} [open]: {clean(hyp['statement'])}")
        click.echo(f"  decided by: {clean(hyp['test'])}")
