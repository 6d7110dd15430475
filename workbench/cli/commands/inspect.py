"""wb inspect: follow a comparable pair's delta into phase distributions, equal windows
over time and the operations that moved most, with ASCII charts (80 columns)."""

from __future__ import annotations

import sys

import click

from workbench.cli import remote, remote_results
from workbench.cli.commands.compare import load_selection, print_way_out, run_selection_options
from workbench.cli.context import emit_json
from workbench.cli.run_sets import RunSetCommand
from workbench.compare import inspect
from workbench.compare.host_activity import between, render_host
from workbench.compare.render import render_inspect
from workbench.errors import EXIT_REFUSED


@click.command("inspect", cls=RunSetCommand)
@run_selection_options
@click.option("--windows", default=8, show_default=True, type=click.IntRange(2, 50), help="Equal windows per run for the change over time.")
@click.option("--top", default=10, show_default=True, type=click.IntRange(1, 200), help="Operations to list.")
@click.option("--ranks", "top_ranks", default=8, show_default=True, type=click.IntRange(1, 200),
              help="Multi-rank training runs: ranks to list, those that moved most against their run's median rank.")
@click.option("--steps", "steps", type=click.Choice(["all", "steady"]), default="all", show_default=True,
              help="steady: restrict both sides to their steady steps (training), listing the startup and checkpoint steps left out.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.pass_context
def command(ctx, baseline, candidate, lens, changes, accepts, whys, extensions, windows, top, top_ranks, steps, as_json, control=()) -> None:
    """Inspect BASELINE runs against candidate runs (--vs CAND...), by id or label.

    A refused pair shows its comparability table and reason, and exits 3.
    """
    if remote.wanted(ctx):  # wb --server URL inspect: the served document, drawn here
        return remote_results.inspect(ctx, baseline=baseline, candidate=candidate, control=control, lens=lens, changes=changes,
                                      accepts=accepts, whys=whys, extensions=extensions, windows=windows, top=top,
                                      as_json=as_json, refused_exit=EXIT_REFUSED)
    selection = load_selection(ctx, baseline, candidate, changes, accepts, whys, extensions, control)
    result = inspect(lens=lens, windows=windows, top=top, steps=steps, top_ranks=top_ranks, **selection)
    ways = print_way_out(result.comparison, "inspect", selection, lens, changes, extensions, True)
    # A flight recorder's host side (stacks, CPU, GC), for a comparable pair like the rest.
    host = between(selection["baseline"], selection["candidate"]) if result.comparison.comparable else None
    if as_json:
        emit_json({**result.to_json(), **({"host_activity": host.to_json()} if host else {}), **({"way_out": ways} if ways else {})})
    else:
        click.echo(render_inspect(result) + ("\n\n" + "\n".join(render_host(host)) if host else ""))
        print_way_out(result.comparison, "inspect", selection, lens, changes, extensions, as_json)
    if not result.comparison.comparable:
        sys.exit(EXIT_REFUSED)
