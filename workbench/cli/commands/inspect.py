"""wb inspect: follow a comparable pair's delta into phase distributions, equal windows
over time and the operations that moved most, with ASCII charts (80 columns)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from workbench.cli import remote, remote_results
from workbench.cli.commands.compare import load_selection, print_way_out, run_selection_options
from workbench.cli.context import emit_json
from workbench.cli.run_sets import RunSetCommand
from workbench.compare import inspect, lens_with_metric
from workbench.compare.host_activity import between, render_host
from workbench.compare.render import render_inspect
from workbench.errors import EXIT_REFUSED, UsageError
from workbench.training.window_kind import steady_steps

if TYPE_CHECKING:
    from lenses.base import Lens
    from workbench.compare.run_sets import Selection


@click.command("inspect", cls=RunSetCommand)
@run_selection_options
@click.option(
    "--windows",
    default=8,
    show_default=True,
    type=click.IntRange(2, 50),
    help="Equal windows per run for the change over time.",
)
@click.option("--top", default=10, show_default=True, type=click.IntRange(1, 200), help="Operations to list.")
@click.option(
    "--ranks",
    "top_ranks",
    default=8,
    show_default=True,
    type=click.IntRange(1, 200),
    help="Multi-rank training runs: ranks to list, those that moved most against their run's median rank.",
)
@click.option(
    "--steps",
    "steps",
    type=click.Choice(["all", "steady"]),
    default="all",
    show_default=True,
    help="steady: restrict both sides to their steady steps (training), listing the startup and checkpoint steps left "
    "out.",
)
@click.option(
    "--metric",
    metavar="NAME",
    help="Inference: the primary metric instead of ttft_p95 (tpot_p95, itl_p95, e2e_p95, ttft_p99, ...).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option(
    "--plot",
    is_flag=True,
    help="Add line plots (plotext): a phase over the steps or requests, both sides; "
    "multi-rank runs: each rank's step time.",
)
@click.option(
    "--phase",
    metavar="NAME",
    help="With --plot: the phase to draw over time (default: the primary's per-item measure).",
)
@click.pass_context
def command(
    ctx,
    baseline,
    candidate,
    lens,
    changes,
    accepts,
    whys,
    extensions,
    windows,
    top,
    top_ranks,
    steps,
    metric,
    as_json,
    plot=False,
    phase=None,
    control=(),
) -> None:
    """Inspect BASELINE runs against candidate runs (--vs CAND...), by id or label.

    A refused pair shows its comparability table and reason, and exits 3.
    """
    if phase is not None and not plot:
        raise UsageError("--phase names what --plot draws: add --plot")
    if plot and as_json:
        raise UsageError("--plot draws text: leave out --json (the JSON has the windows over time and the ranks)")
    if plot and remote.wanted(ctx):
        raise UsageError("--plot draws from the local store: leave out --server")
    if remote.wanted(ctx):  # wb --server URL inspect: the served document, drawn here
        return remote_results.inspect(
            ctx,
            baseline=baseline,
            candidate=candidate,
            control=control,
            lens=lens,
            changes=changes,
            accepts=accepts,
            whys=whys,
            extensions=extensions,
            windows=windows,
            top=top,
            metric=metric,
            as_json=as_json,
            refused_exit=EXIT_REFUSED,
        )
    selection = load_selection(ctx, baseline, candidate, changes, accepts, whys, extensions, control)
    engine_lens = lens_with_metric(
        [*selection["baseline"], *selection["candidate"]], lens, selection["extensions"], metric
    )
    result = inspect(lens=engine_lens, windows=windows, top=top, steps=steps, top_ranks=top_ranks, **selection)
    ways = print_way_out(result.comparison, "inspect", selection, lens, changes, extensions, True, metric)
    # A flight recorder's host side (stacks, CPU, GC), for a comparable pair like the rest.
    host = between(selection["baseline"], selection["candidate"]) if result.comparison.comparable else None
    if as_json:
        emit_json(
            {
                **result.to_json(),
                **({"host_activity": host.to_json()} if host else {}),
                **({"way_out": ways} if ways else {}),
            }
        )
    else:
        # Drawn first: a --phase these runs lack is refused before anything is printed.
        drawn = (
            plots_text(result.comparison.lens, selection, steps, phase)
            if plot and result.comparison.comparable
            else None
        )
        click.echo(render_inspect(result) + ("\n\n" + "\n".join(render_host(host)) if host else ""))
        if drawn is not None:  # a refused pair gets no detail, so no plot
            click.echo("\n" + drawn)
        print_way_out(result.comparison, "inspect", selection, lens, changes, extensions, as_json, metric)
    if not result.comparison.comparable:
        sys.exit(EXIT_REFUSED)


def plots_text(lens: "Lens", selection: "Selection", steps: str, phase: str | None) -> str:
    """The plots of ``--plot`` on the runs the report read (their steady steps with ``--steps steady``)."""
    from workbench.compare.plots import inspect_plots  # numpy and, when drawn, plotext: only with --plot

    sides = [selection["baseline"], selection["candidate"]]
    if steps == "steady":
        sides = [[steady_steps(run)[0] for run in runs] for runs in sides]
    return "Plots\n" + inspect_plots(lens, sides[0], sides[1], phase)
