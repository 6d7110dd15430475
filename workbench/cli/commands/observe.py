"""wb observe: pin an observation (a fact with evidence, not a cause) to an investigation."""

from __future__ import annotations

import click

from workbench.cli.context import emit_json, open_store_from
from workbench.errors import UsageError
from workbench.investigations import workflow as wf
from workbench.textsafe import clean


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
    modes = sum(x is not None for x in (from_compare, retract)) + (text is not None and retract is None)
    if modes != 1:
        raise UsageError("give one of --from-compare N, --text TEXT --evidence ..., or --retract OBS --text REASON")
    store = open_store_from(ctx)
    if from_compare is not None:
        pinned = wf.observations_from_comparison(store, investigation, from_compare, by=by)
    elif retract is not None:
        if not text:
            raise UsageError("--retract needs --text REASON")
        pinned = [wf.new_retraction(store, retract, text, by=by).to_json()]
    else:
        pinned = [wf.new_observation(store, investigation, text, wf.parse_evidence(evidence, store), by=by).to_json()]
    if as_json:
        emit_json(pinned)
        return
    for o in pinned:
        click.echo(f"pinned observation {o['id']} (observation, not cause): {clean(o['text'])}")
