"""wb compare: comparability first, then the delta, phases, guardrails and observations.

Exit codes: 0 compared (or refused, without --fail-on); with --fail-on, 3 when the pair
was refused (refused|any) and 4 when a regression was found (regression|any): the
primary verdict is REGRESSION or a guardrail broke.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from store.errors import StoreError
from workbench.cli import remote, remote_results
from workbench.cli.commands._sweep_compare import run_sweep_compare, sweep_sides
from workbench.cli.context import LENS, emit_json, open_store_from
from workbench.compare import compare, parse_accepts, parse_change, resolve_lens
from workbench.compare.render import render_comparison
from workbench.compare.way_out import render_way_out, rerun_words, way_out
from workbench.errors import EXIT_OK, EXIT_REFUSED, EXIT_REGRESSION, NotFound, UsageError

FAIL_ON = ("regression", "refused", "any")


class VsCommand(click.Command):
    """Reads ``BASE... --vs CAND... [--control APRIME...]``: the values after ``--vs``
    (and ``--control``), up to the next option, are the candidate (control) runs."""

    LISTS = {"--vs": "candidate", "--control": "control"}

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                out.extend(args[i:])
                break
            if arg in self.LISTS:
                i += 1
                taken = 0
                while i < len(args) and not (args[i].startswith("-") and args[i] != "-"):
                    out += [arg, args[i]]
                    i += 1
                    taken += 1
                if not taken:
                    raise click.UsageError(f"{arg} needs at least one {self.LISTS[arg]} run", ctx=ctx)
                continue
            out.append(arg)
            i += 1
        return super().parse_args(ctx, out)


def run_selection_options(f):
    """Options shared by ``wb compare`` and ``wb inspect``."""
    options = [
        click.argument("baseline", nargs=-1, required=True),
        click.option("--vs", "candidate", multiple=True, metavar="CAND...", help="Candidate runs (ids or labels), after the baseline runs."),
        click.option("--control", "control", multiple=True, metavar="APRIME...", help="A/A control: baseline-again runs (ids or labels), the noise floor of every effect."),
        click.option("--lens", type=LENS, help="Lens (default: the runs' own)."),
        click.option("--change", "changes", multiple=True, metavar="DIM=FROM:TO", help="The intended change (repeatable); DIM alone, or DIM=FROM:TO (FROM->TO when a value has ':')."),
        click.option("--accept", "accepts", multiple=True, metavar="DIM[,DIM...]", help="Accept refusing dimensions (needs a --why; each is recorded)."),
        click.option("--why", "whys", multiple=True, metavar="TEXT", help="The reason for the --accept before it (one --why per --accept, in order, or one for all)."),
        click.option("--extension", "extensions", multiple=True, type=click.Path(dir_okay=False), help="Lens extension file (TOML; repeatable). Also $WB_LENS_EXTENSIONS (path list)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def load_selection(ctx: click.Context, baseline, candidate, changes, accepts, whys, extensions, control=()) -> dict[str, Any]:
    """Runs from the store and the parsed declarations, as keyword arguments for
    ``workbench.compare.compare``/``inspect``."""
    if not candidate:
        raise UsageError("name the candidate runs: wb compare BASE... --vs CAND...")
    parsed_changes = dict(parse_change(c) for c in changes)
    parsed_accepts = parse_accepts(accepts, whys)
    env_ext = [p for p in os.environ.get("WB_LENS_EXTENSIONS", "").split(os.pathsep) if p]
    store = open_store_from(ctx)
    try:
        base_ids = store.resolve_runs(list(baseline))
        cand_ids = store.resolve_runs(list(candidate))
        overlap = sorted(set(base_ids) & set(cand_ids))
        if overlap:
            raise UsageError(f"run {overlap[0]} is on both sides: a run cannot be its own baseline")
        base = store.load_runs(base_ids)
        cand = store.load_runs(cand_ids)
        aprime = store.load_runs(store.resolve_runs(list(control))) if control else []
    except StoreError as exc:
        raise NotFound(str(exc)) from None
    return {
        **({"control": aprime} if control else {}),
        "baseline": base,
        "candidate": cand,
        "changes": parsed_changes,
        "accepts": parsed_accepts,
        "extensions": [*env_ext, *extensions],
    }


def print_way_out(result, name: str, selection: dict[str, Any], lens: str | None, changes, extensions, as_json: bool) -> dict | None:
    """The commands that resolve a refusal (stderr with --json, else stdout); returned for the JSON."""
    base = [r.id for r in selection["baseline"]]
    cand = [r.id for r in selection["candidate"]]
    words = rerun_words(name, base, cand, lens, changes, selection["accepts"], extensions,
                        [r.id for r in selection.get("control", [])])
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


@click.command("compare", cls=VsCommand)
@run_selection_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (the compare contract, docs/compare.md).")
@click.option("--fail-on", type=click.Choice(FAIL_ON), help="Exit 3 when refused, 4 on a regression (REGRESSION verdict or a broken guardrail), or both (any).")
@click.option("--metric", metavar="NAME", help="Inference: the primary metric instead of ttft_p95 (tpot_p95, itl_p95, e2e_p95, ...).")
@click.option("--slo", metavar="M=V,...", help="Sweeps: SLO for saturation and goodput, e.g. ttft_p95=500ms,tpot_p95=50ms.")
@click.option("--rate-tolerance", type=click.FloatRange(0, 1), default=0.05, show_default=True, help="Sweeps: requested rates within this share match.")
@click.pass_context
def command(ctx, baseline, candidate, lens, changes, accepts, whys, extensions, as_json, fail_on, metric, slo, rate_tolerance,
            control=()) -> None:
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
    if remote.wanted(ctx):  # wb --server URL compare: the served document, drawn here
        return remote_results.compare(ctx, baseline=baseline, candidate=candidate, control=control, lens=lens, changes=changes,
                                      accepts=accepts, whys=whys, extensions=extensions, metric=metric, as_json=as_json,
                                      fail_on=fail_on, exit_code=exit_code)
    sides = sweep_sides(ctx, baseline, candidate) if not control else None
    if sides is not None:  # SWEEP --vs SWEEP: levels matched by load
        return run_sweep_compare(ctx, sides, metric=metric, slo=slo, rate_tolerance=rate_tolerance, changes=changes,
                                 accepts=accepts, whys=whys, as_json=as_json, fail_on=fail_on)
    selection = load_selection(ctx, baseline, candidate, changes, accepts, whys, extensions, control)
    if metric:
        the_lens = resolve_lens([*selection["baseline"], *selection["candidate"]], lens, selection["extensions"])
        if not hasattr(the_lens, "with_metric"):
            raise UsageError(f"--metric applies to the inference lens, not {the_lens.name}")
        try:
            lens = the_lens.with_metric(metric)
        except ValueError as exc:
            raise UsageError(f"--metric: {exc}") from None
    result = compare(lens=lens, **selection)
    if as_json:
        doc = result.to_json()
        ways = print_way_out(result, "compare", selection, lens, changes, extensions, as_json)
        if ways is not None:
            doc["way_out"] = ways
        emit_json(doc)
    else:
        click.echo(render_comparison(result))
        print_way_out(result, "compare", selection, lens, changes, extensions, as_json)
    if fail_on in ("regression", "any") and result.comparable and result.verdict is None:
        click.echo("wb: note: no verdict on the primary metric (needs two or more runs a side): --fail-on regression cannot fire on it", err=True)
    code = exit_code(result, fail_on)
    if code:
        # sys.exit, not ctx.exit: wb runs Click in non-standalone mode, where ctx.exit's
        # code would be returned and lost.
        sys.exit(code)
