"""wb inspect: follow a comparable pair's delta into phase distributions, equal windows
over time and the operations that moved most, with ASCII charts (80 columns)."""

from __future__ import annotations

import sys

import click

from workbench.cli.commands.compare import run_selection_options
from workbench.cli.context import emit_json, workbench_from
from workbench.cli.run_sets import RunSetCommand
from workbench.compare.host_activity import render_host
from workbench.compare.render import render_inspect
from workbench.compare.way_out import render_way_out
from workbench.errors import EXIT_REFUSED, UsageError
from workbench.usecases.comparisons import Inspect


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
    with workbench_from(ctx) as wb:
        answer = wb.call(
            Inspect(
                baseline=list(baseline),
                candidate=list(candidate),
                control=list(control),
                lens=lens,
                change=list(changes),
                accept=list(accepts),
                why=list(whys),
                metric=metric,
                extensions=list(extensions),
                windows=windows,
                top=top,
                top_ranks=top_ranks,
                steps=steps,
                plot=plot,
                phase=phase,
            )
        )
    result, host = answer.result, answer.host
    if as_json:
        emit_json(answer.document())
    else:
        click.echo(render_inspect(result) + ("\n\n" + "\n".join(render_host(host)) if host else ""))
        if answer.plots is not None:  # a refused pair gets no detail, so no plot
            click.echo("\n" + answer.plots)
        if answer.way_out is not None:
            click.echo("\n".join(render_way_out(answer.way_out)))
    if not result.comparison.comparable:
        sys.exit(EXIT_REFUSED)
