"""wb compare: comparability first, then the delta, phases, guardrails and observations.

Exit codes: 0 compared (or refused, without --fail-on); with --fail-on, 3 when the pair
was refused (refused|any) and 4 when a regression was found (regression|any): the
primary verdict is REGRESSION or a guardrail broke.
"""

from __future__ import annotations

import os
import sys

import click

from store.errors import StoreError
from workbench.cli import remote, remote_results
from workbench.cli.commands._sweep_compare import run_sweep_compare, sweep_sides
from workbench.cli.context import LENS, emit_json, open_store_from
from workbench.cli.run_sets import RunSetCommand, run_set_arguments
from workbench.compare import compare, lens_with_metric, parse_accepts, parse_change
from workbench.compare.render import render_comparison
from workbench.compare.run_sets import SHAPE, Selection, check_run_sets
from workbench.compare.way_out import render_way_out, rerun_words, way_out
from workbench.errors import EXIT_OK, EXIT_REFUSED, EXIT_REGRESSION, NotFound, UsageError

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


def load_selection(
    ctx: click.Context, baseline, candidate, changes, accepts, whys, extensions, control=()
) -> Selection:
    """Runs from the store and the parsed declarations, as keyword arguments for
    ``workbench.compare.compare``/``inspect``."""
    if not candidate:
        raise UsageError(f"name the candidate runs: wb {ctx.info_name} {SHAPE}")
    parsed_changes = dict(parse_change(c) for c in changes)
    parsed_accepts = parse_accepts(accepts, whys)
    env_ext = [p for p in os.environ.get("WB_LENS_EXTENSIONS", "").split(os.pathsep) if p]
    store = open_store_from(ctx)
    try:
        sides = check_run_sets(*(store.resolve_runs(list(refs)) for refs in (baseline, candidate, control)))
        base, cand, aprime = (store.load_runs(list(ids)) for ids in (sides.baseline, sides.candidate, sides.control))
    except StoreError as exc:
        raise NotFound(str(exc)) from None
    selection = Selection(
        baseline=base,
        candidate=cand,
        changes=parsed_changes,
        accepts=parsed_accepts,
        extensions=[*env_ext, *extensions],
    )
    if control:
        selection["control"] = aprime
    return selection


def print_way_out(
    result,
    name: str,
    selection: Selection,
    lens: str | None,
    changes,
    extensions,
    as_json: bool,
    metric: str | None = None,
) -> dict | None:
    """The commands that resolve a refusal (stderr with --json, else stdout); returned for the JSON."""
    base = [r.id for r in selection["baseline"]]
    cand = [r.id for r in selection["candidate"]]
    control = [r.id for r in selection.get("control", [])]
    words = rerun_words(name, base, cand, lens, changes, selection["accepts"], extensions, control, metric=metric)
    ways = way_out(result, base, cand, words, [*selection["baseline"], *selection["candidate"]])
    if ways is not None and not as_json:
        click.echo("\n".join(render_way_out(ways)))
    return None if ways is None else ways.to_json()


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
    help="Sweeps: draw the latency-throughput curve as a line plot (plotext), a curve per sweep.",
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
    if plot and remote.wanted(ctx):
        raise UsageError("--plot draws from the local store: leave out --server")
    if remote.wanted(ctx):  # wb --server URL compare: the served document, drawn here
        return remote_results.compare(
            ctx,
            baseline=baseline,
            candidate=candidate,
            control=control,
            lens=lens,
            changes=changes,
            accepts=accepts,
            whys=whys,
            extensions=extensions,
            metric=metric,
            as_json=as_json,
            fail_on=fail_on,
            exit_code=exit_code,
        )
    sides = sweep_sides(ctx, baseline, candidate) if not control else None
    if sides is not None:  # SWEEP --vs SWEEP: levels matched by load
        return run_sweep_compare(
            ctx,
            sides,
            metric=metric,
            slo=slo,
            rate_tolerance=rate_tolerance,
            changes=changes,
            accepts=accepts,
            whys=whys,
            as_json=as_json,
            fail_on=fail_on,
            plot=plot,
        )
    if plot:
        raise UsageError("--plot draws a load sweep's curve: name one sweep on each side (its id sw-... or label)")
    selection = load_selection(ctx, baseline, candidate, changes, accepts, whys, extensions, control)
    # The name given, or with --metric the lens made from it (the way out says the words given).
    engine_lens = lens_with_metric(
        [*selection["baseline"], *selection["candidate"]], lens, selection["extensions"], metric
    )
    result = compare(lens=engine_lens, **selection)
    if as_json:
        doc = result.to_json()
        ways = print_way_out(result, "compare", selection, lens, changes, extensions, as_json, metric)
        if ways is not None:
            doc["way_out"] = ways
        emit_json(doc)
    else:
        click.echo(render_comparison(result))
        print_way_out(result, "compare", selection, lens, changes, extensions, as_json, metric)
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
