"""wb remove: delete stored runs that no investigation refers to."""

from __future__ import annotations

import click

from workbench.cli.context import emit_json, open_store_from
from workbench.errors import UsageError
from workbench.textsafe import clean


@click.command("remove")
@click.argument("runs", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print what was removed as JSON.")
@click.pass_context
def command(ctx: click.Context, runs: tuple[str, ...], as_json: bool) -> None:
    """Remove RUNS (ids or labels) with their columns and declaration history.

    A run that an investigation, a stored comparison, an observation or a rerun refers
    to is refused with the reason (there is no --force: evidence keeps its runs).
    Capture records no remaining run uses are removed too, so the file can be imported
    again; the files themselves are never touched. All or nothing.
    """
    from store.tidy import RunInUse, remove_runs  # loads SQLAlchemy: not for --help

    store = open_store_from(ctx, create=False)
    run_ids = list(dict.fromkeys(store.resolve_runs(list(runs))))
    # Said before the removal, by id and label: the user sees which run a reference meant.
    labels = {run_id: store.get_run(run_id).label for run_id in run_ids}
    try:
        done = remove_runs(store, run_ids)
    except RunInUse as exc:
        raise UsageError(str(exc)) from None
    if as_json:
        emit_json(done)
        return
    click.echo("removed " + ", ".join(f"run {run_id} ({clean(labels[run_id])})" for run_id in done["runs"]))
    if done["captures"]:
        click.echo(
            f"forgot capture {', '.join(clean(c) for c in done['captures'])} (import it again to get the run back)",
            err=True,
        )
