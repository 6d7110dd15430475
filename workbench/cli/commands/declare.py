"""wb declare: state dimensions of stored runs that their files do not carry."""

from __future__ import annotations

import click

from lenses import get_lens
from workbench.cli.context import emit_json, open_store_from
from workbench.declare import declare_dimensions
from workbench.errors import UsageError
from workbench.ingest import parse_dim_options
from workbench.textsafe import clean


@click.command("declare")
@click.argument("items", nargs=-1, required=True, metavar="RUN... NAME=VALUE...")
@click.option("--unset", "unset", multiple=True, metavar="NAME", help="Remove a declared dimension (repeatable).")
@click.option("--why", default="", metavar="TEXT", help="Why the value is what it is (kept in the history).")
@click.option("--json", "as_json", is_flag=True, help="Print the recorded declarations as JSON.")
@click.pass_context
def command(ctx: click.Context, items: tuple[str, ...], unset: tuple[str, ...], why: str, as_json: bool) -> None:
    """Declare dimensions on stored runs (ids or labels), e.g.

      wb declare 1 2 model=llama-3-8b objective=pretrain --why "same job script"

    Each declaration is kept in an append-only history (who, when, why; see
    'wb show RUN'); the captured files never change. A value that contradicts what the
    data show (a measured dimension) is refused with both values.
    """
    refs, values = split_arguments(items)
    store = open_store_from(ctx, create=False)
    run_ids = store.resolve_runs(refs)
    done = declare_dimensions(store, run_ids, values, list(unset), why=why)
    _note_unchecked(store, run_ids, values)
    if as_json:
        emit_json(
            {
                "declarations": [d.to_json() for d in done if d.changed],
                "unchanged": [{"run": d.run_id, "name": d.name} for d in done if not d.changed],
            }
        )
        return
    for d in done:
        what = f"{d.name}={d.value}" if d.action == "set" else f"{d.name} unset"
        if d.changed:
            click.echo(f"run {d.run_id}: {clean(what)} (declaration {d.id})")
        else:
            click.echo(f"run {d.run_id}: {clean(what)} (already so; nothing recorded)", err=True)


def _note_unchecked(store, run_ids, values) -> None:
    """A name no lens of these runs compares (a typo such as 'modle') is recorded, but
    no comparison will ever require it: say so, with the names that are checked."""
    lenses = sorted({store.get_run(run_id).lens for run_id in run_ids})
    known: list[str] = []
    for name in lenses:
        try:
            known += [d.name for d in get_lens(name).dimensions if d.name not in known]
        except Exception:  # noqa: BLE001 - a lens this wb does not know: nothing to say
            return
    for name in values:
        if name not in known:
            click.echo(
                clean(
                    f"note: {name} is not a dimension the {'/'.join(lenses)} lens compares "
                    f"({', '.join(known)}): recorded, but no comparison checks it"
                ),
                err=True,
            )


def split_arguments(items: tuple[str, ...]) -> tuple[list[str], dict[str, str]]:
    """``RUN... NAME=VALUE...`` into run references and declarations (parsed as ``--dim``)."""
    refs = [i for i in items if "=" not in i]
    assignments = [i for i in items if "=" in i]
    if assignments:
        first = items.index(assignments[0])
        stray = [i for i in items[first:] if "=" not in i]
        if stray:
            raise UsageError(
                f"{stray[0]!r} follows {items[first]!r}: runs come first, and a value with spaces "
                f"needs quotes ({assignments[-1].partition('=')[0]}='a value with spaces')"
            )
    return refs, parse_dim_options(assignments)
