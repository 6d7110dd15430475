"""wb declare: state dimensions of stored runs that their files do not carry."""

from __future__ import annotations

import click

from workbench.cli.context import emit_json, workbench_from
from workbench.errors import UsageError
from workbench.ingest import parse_dim_options
from workbench.investigations.common import current_user
from workbench.textsafe import clean
from workbench.usecases.runs import Declare


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
    with workbench_from(ctx, create=False) as wb:
        answer = wb.call(Declare(runs=refs, values=values, unset=list(unset), why=why, by=current_user()))
    for note in answer.notes:
        click.echo(clean(note), err=True)
    if as_json:
        emit_json(answer.document())
        return
    for d in answer.done:
        what = f"{d.name}={d.value}" if d.action == "set" else f"{d.name} unset"
        if d.changed:
            click.echo(f"run {d.run}: {clean(what)} (declaration {d.id})")
        else:
            click.echo(f"run {d.run}: {clean(what)} (already so; nothing recorded)", err=True)


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
