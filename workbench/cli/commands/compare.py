"""wb compare: comparability first, then the delta, phases, guardrails and observations.

Exit codes: 0 compared (or refused, without --fail-on); with --fail-on, 3 when the pair
was refused (refused|any) and 4 when a regression was found (regression|any): the
primary verdict is REGRESSION or a guardrail broke.
"""

from __future__ import annotations

import sys

import click

from workbench.cli.commands._sweep_compare import print_sweep_comparison
from workbench.cli.context import LENS, emit_json, workbench_from
from workbench.cli.run_sets import RunSetCommand, run_set_arguments
from workbench.compare.render import render_comparison
from workbench.compare.way_out import render_way_out
from workbench.errors import EXIT_OK, EXIT_REFUSED, EXIT_REGRESSION, UsageError
from workbench.usecases.comparisons import Compare

FAIL_ON = ("regression", "refused", "any")


def run_selection_options(f):
    """Options shared by ``wb compare`` and ``wb inspect``."""
    options = [
        run_set_arguments,
        click.option("--lens", type=LENS, help="Lens (default: the runs' own)."),
        click.option(
            "--change",
            "changes",
            multiple=True,
            metavar="DIM=FROM:TO",
            help="The intended change (repeatable); DIM alone, or DIM=FROM:TO (FROM->TO when a value has ':').",
        ),
        click.option(
            "--accept",
            "accepts",
            multiple=True,
            metavar="DIM[,DIM...]",
            help="Accept refusing dimensions (needs a --why; each is recorded).",
        ),
        click.option(
            "--why",
            "whys",
            multiple=True,
            metavar="TEXT",
            help="The reason for the --accept before it (one --why per --accept, in order, or one for all).",
        ),
        click.option(
            "--extension",
            "extensions",
            multiple=True,
            type=click.Path(dir_okay=False),
            help="Lens extension file (TOML; repeatable). Also $WB_LENS_EXTENSIONS (path list).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def exit_code(result, fail_on: str | None) -> int:
    if fail_on in ("refused", "any") and not result.comparable:
        return EXIT_REFUSED
    if fail_on in ("regression", "any") and result.comparable and result.regression:
        return EXIT_REGRESSION
    return EXIT_OK


@click.command("compare", cls=RunSetCommand)
@run_selection_options
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document (the compare contract, docs/compare.md)."
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    help="Exit 3 when refused, 4 on a regression (REGRESSION verdict or a broken guardrail), or both (any).",
)
@click.option(
    "--metric",
    metavar="NAME",
    help="Inference: the primary metric instead of ttft_p95 (tpot_p95, itl_p95, e2e_p95, ...).",
)
@click.option(
    "--slo", metavar="M=V,...", help="Sweeps: SLO for saturation and goodput, e.g. ttft_p95=500ms,tpot_p95=50ms."
)
@click.option(
    "--rate-tolerance",
    type=click.FloatRange(0, 1),
    default=0.05,
    show_default=True,
    help="Sweeps: requested rates within this share match.",
)
@click.option(
    "--plot",
    is_flag=True,
    help="Sweeps: the latency-throughput curve (plotext, a curve per sweep); every sweep report draws it now.",
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
    as_json,
    fail_on,
    metric,
    slo,
    rate_tolerance,
    plot=False,
    control=(),
) -> None:
    """Compare BASELINE runs with candidate runs (--vs CAND...), by id or label.

    Comparability comes first: a pair whose must-match dimensions differ or are unknown
    is refused with the reason, and no delta is computed. Example:

      wb compare 1 2 3 --vs 4 5 6 --change engine_revision=v0.8.2:v0.8.3

    With --control 7 8 9 (baseline-again runs) every effect gets the A/A noise floor
    and the rerun guards: UNSTABLE withholds the verdict, UNDERPOWERED flags it.

    Two load sweeps (by sweep id sw-... or label) are compared level by level at
    matched load, with each side's saturation and the latency-throughput curve:

      wb compare vllm --vs vllm+v0_engine --slo ttft_p95=500ms

    \b
    Exit codes: 0 compared (also a refusal, unless --fail-on asks about it);
    2 usage error or bad input; 3 refused, with --fail-on refused|any;
    4 regression found, with --fail-on regression|any.
    """
    if plot and as_json:
        raise UsageError("--plot draws text: leave out --json (the JSON has the curve's points in each side's levels)")
    with workbench_from(ctx) as wb:
        answer = wb.call(
            Compare(
                baseline=list(baseline),
                candidate=list(candidate),
                control=list(control),
                lens=lens,
                change=list(changes),
                accept=list(accepts),
                why=list(whys),
                metric=metric,
                extensions=list(extensions),
                slo=slo,
                rate_tolerance=rate_tolerance,
                plot=plot,
            )
        )
    if answer.sweep is not None:  # SWEEP --vs SWEEP: levels matched by load
        return print_sweep_comparison(answer.sweep, as_json=as_json, fail_on=fail_on)
    result = answer.comparison
    assert result is not None
    if as_json:
        emit_json(answer.document())
    else:
        click.echo(render_comparison(result))
        if answer.way_out is not None:
            click.echo("\n".join(render_way_out(answer.way_out)))
    if fail_on in ("regression", "any") and result.comparable and result.verdict is None:
        click.echo(
            "wb: note: no verdict on the primary metric (needs two or more runs a side): --fail-on regression cannot "
            "fire on it",
            err=True,
        )
    code = exit_code(result, fail_on)
    if code:
        # sys.exit, not ctx.exit: wb runs Click in non-standalone mode, where ctx.exit's
        # code would be returned and lost.
        sys.exit(code)
