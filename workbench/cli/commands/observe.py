"""wb observe: pin an observation (a fact with evidence, not a cause) to an investigation."""

from __future__ import annotations

import click

from workbench.cli.context import emit_json, workbench_from
from workbench.investigations.common import current_user
from workbench.textsafe import clean
from workbench.usecases.investigations import Observe


@click.command("observe")
@click.argument("investigation")
@click.option(
    "--from-compare", "from_compare", default=None, metavar="N", help="Pin the observations of stored comparison N."
)
@click.option("--text", default=None, help="The observation: what was seen, not why.")
@click.option(
    "--evidence",
    multiple=True,
    metavar="KIND=VALUE",
    help="Evidence (repeatable): run=ID|LABEL, comparison=N, metric=NAME, window=KIND, value=TEXT, or another "
    "KIND=TEXT.",
)
@click.option(
    "--retract",
    default=None,
    metavar="OBS",
    help="Retract observation OBS (pins a retraction; --text gives the reason).",
)
@click.option("--by", default=None, help="Who pins it (default: your login name).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.pass_context
def command(ctx, investigation, from_compare, text, evidence, retract, by, as_json) -> None:
    """Pin an observation to INVESTIGATION. Observations are never edited: retract and pin anew."""
    with workbench_from(ctx) as wb:
        pinned = wb.call(
            Observe(
                investigation=investigation,
                from_compare=from_compare,
                text=text,
                evidence=list(evidence),
                retract=retract,
                by=by or current_user(),
            )
        ).items
    if as_json:
        emit_json(pinned)
        return
    for o in pinned:
        click.echo(f"pinned observation {o['id']} (observation, not cause): {clean(o['text'])}")
