"""wb rename: give a stored run a new label."""

from __future__ import annotations

import click

from workbench.bundle.canonical import nfc
from workbench.cli.context import emit_json, open_store_from
from workbench.errors import UsageError
from workbench.textsafe import clean, look_alike_form, meaningful


@click.command("rename")
@click.argument("run")
@click.argument("label")
@click.option("--json", "as_json", is_flag=True, help="Print the run id with its old and new label.")
@click.pass_context
def command(ctx: click.Context, run: str, label: str, as_json: bool) -> None:
    """Rename RUN (an id or a label) to LABEL. The capture files are not touched."""
    from store.tidy import rename_run  # loads SQLAlchemy: not for --help

    store = open_store_from(ctx, create=False)
    run_id = store.resolve_run(run)
    label = nfc(label).strip()
    if not meaningful(label):
        raise UsageError("the new label is empty (or only invisible characters)")
    old = rename_run(store, run_id, label, look_alike_form=look_alike_form)
    if as_json:
        emit_json({"id": run_id, "old_label": old, "label": label})
    else:
        click.echo(f"run {run_id}: {clean(old)} -> {clean(label)}")
