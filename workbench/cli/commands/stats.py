"""wb stats: the A/B(/A′) analysis of per-run values, with the A/A noise floor and a verdict."""

from __future__ import annotations

import math

import click

from workbench.numbers import fixed, signed_percent
from workbench.cli.context import emit_json
from workbench.cli.run_sets import RunSetCommand
from workbench.errors import EXIT_REGRESSION, UsageError, WbError
from workbench.stats import analyze
from workbench.formats.arm_values import read_arm_values
from workbench.stats.verdicts import Gate, Verdict


def _parse_values(option: str, texts: tuple[str, ...]) -> list[float] | None:
    """Numbers separated by commas or whitespace; the option may repeat."""
    if not texts:
        return None
    values = []
    for text in texts:
        for token in text.replace(",", " ").split():
            try:
                v = float(token)
            except ValueError:
                raise UsageError(f"{option}: not a number: {token!r}") from None
            if not math.isfinite(v):
                raise UsageError(f"{option}: not a finite number: {token!r} (leave a missing run out)")
            values.append(v)
    if not values:
        raise UsageError(f"{option}: no values given")
    return values


NA = "n/a"  # this command's word for a figure the analysis did not give


def _change(ratio_minus_one: float) -> str:
    """A ratio's change in percent, as the rest of this report prints it: "+1.234 %"."""
    return signed_percent(100 * ratio_minus_one, 3, missing=NA)


def _interval_line(i: dict) -> str:
    if not i["bounded"]:
        span = "unbounded (the denominator mean is not distinguishable from 0)"
    else:
        low, high = fixed(i["low"], 6, missing=NA), fixed(i["high"], 6, missing=NA)
        span = f"[{low}, {high}]  time {_change(i['low'] - 1)} .. {_change(i['high'] - 1)}"
        if i["low"] > 0:  # throughput: reciprocals, ends swapped
            span += f", throughput {_change(1 / i['high'] - 1)} .. {_change(1 / i['low'] - 1)}"
    extra = []
    if "df" in i:
        df = i["df"]
        extra.append(f"df {df:g}" if isinstance(df, int) or float(df).is_integer() else f"df {df:.3f}")
    if "seed" in i:
        extra.append(f"{i['resampling']}, seed {i['seed']}, {i['n_boot']} resamples, numpy {i['numpy_version']}")
    if "alpha_prime" in i:
        extra.append(f"α' {i['alpha_prime']:.4g}")
    level = f"{100 * i['level']:g} %"
    return f"  {i['method']:<30} {level:>5}  {span}  ({'; '.join([i.get('role', '')] + extra)})"


def _print_human(doc: dict, notes: list[str]) -> None:
    out = click.echo
    n = doc["n"]
    unit = "rounds" if doc["paired"] else "runs"
    arms = ", ".join(f"{k} {v}" for k, v in n.items())
    direction = "lower is better" if doc["lower_is_better"] else "higher is better (inverted to time-like)"
    out(
        f"effect: candidate B vs baseline A ({'paired by round' if doc['paired'] else 'unpaired runs'}; {arms} {unit}; "
        f"{direction})"
    )
    out(
        f"  ratio (time-like)  {doc['ratio']:.6f}   time change {signed_percent(doc['time_change_pct'], 3, missing=NA)}"
    )
    out(
        f"  throughput ratio   {doc['throughput_ratio']:.6f}   throughput change "
        f"{signed_percent(doc['throughput_change_pct'], 3, missing=NA)}"
    )
    out("intervals for the time-like ratio (run-level; steps are never treated as independent):")
    for i in doc["intervals"]:
        out(_interval_line(i))
    if not doc["intervals"]:
        out(f"  none: an interval needs at least 2 {unit} per arm")
    tests = doc["tests"]
    if "p_no_change" in tests:
        d = 100 * doc["delta"]
        out(
            f"tests ({tests['method']}): p(no change) {tests['p_no_change']:.4g}; "
            f"p(regression > {d:g} %) {tests['p_regression_beyond_delta']:.4g}; "
            f"p(improvement > {d:g} %) {tests['p_improvement_beyond_delta']:.4g}; TOST p {tests['p_tost']:.4g}"
        )
    rank = tests.get("rank_test")
    if rank:
        reach = (
            ""
            if rank["can_reach_alpha"]
            else f" (cannot reach α with this n: smallest achievable p {rank['min_achievable_p']:.4g})"
        )
        out(f"  {rank['test']} ({rank['method']}): p {rank['p']:.4g}{reach}")
    aa = doc["aa"]
    if aa:
        f95 = next(i for i in aa["intervals"] if i.get("role") == "primary" and i["level"] == 0.95)
        span = (
            f"[{fixed(f95['low'], 6, missing=NA)}, {fixed(f95['high'], 6, missing=NA)}]"
            if f95["bounded"]
            else "unbounded"
        )
        out(f"A/A control (A' vs A): ratio {aa['ratio']:.6f}, CI95 {span}")
        out(
            f"  noise floor sd(log ratio) {fixed(aa['noise_floor_sd_log'], 6, missing=NA)}; resolution "
            f"±{fixed(aa['resolution_pct'], 3, missing=NA)} %; "
            f"MDE {fixed(aa['mde_pct'], 3, missing=NA)} % (exact {fixed(aa['mde_pct_exact'], 3, missing=NA)} %) "
            f"at {aa['n']} {unit}, power "
            f"{aa['power']:g}"
        )
        out(
            f"  stable: {'no (UNSTABLE)' if aa['unstable'] else 'yes'}; resolves δ: "
            f"{'no (UNDERPOWERED)' if aa['underpowered'] else 'yes'}"
        )
    else:
        out("A/A control: none (give --a-prime to check stability and measure the noise floor)")
    widened = doc.get("widened")
    if widened:
        scale = fixed(widened["scale"], 3, missing=NA)
        out(f"intervals the verdict read (the control rule: α {widened['alpha']:g}, scale {scale}):")
        for i in widened["intervals"]:
            out(_interval_line(i))
    out(f"verdict: {doc['verdict']} — {doc['reason']}")
    out(f"flags: {', '.join(doc['flags']) if doc['flags'] else 'none'}")
    out(f"gate: {doc['gate']}")
    plan = doc["planning"]
    if doc["gate"] == Gate.RERUN or doc["verdict"] in (
        Verdict.INCONCLUSIVE,
        Verdict.SLOWER_UNRESOLVED,
        Verdict.FASTER_UNRESOLVED,
    ):
        need = plan["rounds_needed"]
        need_eq = plan["rounds_needed_equivalence"]
        if plan["sd_unit_log"] is None:
            out(
                f"to resolve δ: the noise is unknown until there are at least 2 {plan['counts']}; "
                "run at least 3 (the hard minimum), 10 by default"
            )
        else:
            out(
                f"to resolve δ = {100 * doc['delta']:g} % (noise from {plan['noise_source']}): "
                f"{need if need is not None else 'more than 10000'} {plan['counts']} to detect it, "
                f"{need_eq if need_eq is not None else 'more than 10000'} to show equivalence (power {plan['power']:g})"
            )
    for note in notes:
        click.echo(f"note: {note}", err=True)


class ValueLists(RunSetCommand):
    """``-a 100.3 99.6 -b 102.9 102.1``: each arm's values up to the next option (as the
    run sets of wb compare), so a value never joins another arm."""

    LISTS = {
        "-a": "baseline value",
        "--baseline": "baseline value",
        "-b": "candidate value",
        "--candidate": "candidate value",
        "--a-prime": "A′ value",
    }


@click.command("stats", cls=ValueLists)
@click.option(
    "-a",
    "--baseline",
    "baseline",
    multiple=True,
    metavar="VALUES",
    help="Baseline (A) per-run values, comma- or space-separated.",
)
@click.option("-b", "--candidate", "candidate", multiple=True, metavar="VALUES", help="Candidate (B) per-run values.")
@click.option(
    "--a-prime",
    "a_prime",
    multiple=True,
    metavar="VALUES",
    help="A/A control (A′) per-run values: a second, independently scheduled baseline.",
)
@click.option(
    "--csv",
    "csv_path",
    metavar="FILE",
    help="Read per-run values from a CSV with columns round,arm,value (arm A, B or A'; '-' for stdin).",
)
@click.option(
    "--paired/--unpaired",
    default=True,
    show_default=True,
    help="Paired by round (value k of each arm is round k) or independent runs.",
)
@click.option(
    "--delta",
    default=0.02,
    show_default=True,
    type=float,
    help="Practical band: changes within [1/(1+δ), 1+δ] do not matter.",
)
@click.option(
    "--lower-is-better/--higher-is-better",
    default=True,
    show_default=True,
    help="Direction of the metric (times: lower; throughput: higher).",
)
@click.option("--seed", default=12345, show_default=True, type=int, help="Bootstrap seed (numpy PCG64).")
@click.option(
    "--n-boot",
    default=10_000,
    show_default=True,
    type=click.IntRange(0, 1_000_000),
    help="Bootstrap resamples (0: none).",
)
@click.option(
    "--fail-on", type=click.Choice(["regression"]), help="Exit 4 when the verdict is REGRESSION or the gate is FAIL."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def command(
    baseline, candidate, a_prime, csv_path, paired, delta, lower_is_better, seed, n_boot, fail_on, as_json
) -> None:
    """Effect, intervals, A/A noise floor and verdict from per-run values.

    Give one value per run (e.g. each run's mean step time after warm-up), never
    per-step values. Example: wb stats -a 100.3,99.6,101.2 -b 102.9,102.1,104.0
    --a-prime 100.0,100.1,100.6 (or -a 100.3 99.6 101.2 -b ...: an arm's values
    run up to the next option).
    """
    notes: list[str] = []
    slots = None
    if csv_path:
        if baseline or candidate or a_prime:
            raise UsageError("give values either with --csv or with -a/-b/--a-prime, not both")
        read = read_arm_values(csv_path, paired)
        values, notes, slots = read.values, read.notes, read.slots
        a, b, ap = values["A"], values["B"], values.get("A'")
    else:
        a, b = _parse_values("--baseline", baseline), _parse_values("--candidate", candidate)
        ap = _parse_values("--a-prime", a_prime)
        if a is None or b is None:
            raise UsageError("give baseline and candidate values (-a and -b) or --csv FILE")
    if not 0 < delta < 1:
        raise UsageError(f"--delta must be between 0 and 1 (a fraction: 0.02 is 2 %), got {delta}")
    if paired:
        lengths = {"A": len(a), "B": len(b)} | ({"A'": len(ap)} if ap is not None else {})
        if len(set(lengths.values())) != 1:
            counts = ", ".join(f"{k} {v}" for k, v in lengths.items())
            raise UsageError(
                f"paired analysis needs one value per round in every arm ({counts}); use --unpaired for independent "
                f"runs"
            )

    try:
        result = analyze(
            a, b, ap, paired=paired, delta=delta, lower_is_better=lower_is_better, seed=seed, n_boot=n_boot, slots=slots
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    doc = result.to_json()
    if notes:
        doc["notes"] = notes
    if as_json:
        for note in notes:
            click.echo(f"note: {note}", err=True)
        emit_json(doc)
    else:
        _print_human(doc, notes)
    if fail_on == "regression" and (result.verdict == Verdict.REGRESSION or result.gate == Gate.FAIL):
        raise WbError(f"regression: verdict {result.verdict}, gate {result.gate}", exit_code=EXIT_REGRESSION)
