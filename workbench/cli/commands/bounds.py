"""wb bounds: conservative ratio bounds from stated duration bounds (exact, not a confidence interval)."""

from __future__ import annotations

from fractions import Fraction

import click

from workbench.cli.context import emit_json
from workbench.errors import UsageError
from workbench.stats.bounds import bounds, outward, to_fraction
from workbench.textsafe import clean

_SECONDS = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}


def _parse_range(option: str, text: str):
    parts = text.split(":")
    if len(parts) != 2:
        raise UsageError(f"{option}: expected LOW:HIGH (e.g. 99:101), got {text!r}")
    try:
        return to_fraction(parts[0]), to_fraction(parts[1])
    except ValueError as exc:
        raise UsageError(f"{option}: {exc}") from None


def _exact(p) -> str:
    return f"[{p[0]}, {p[1]}]"


def _pct_pair(p, places: int) -> str:
    low, high = outward(p[0], p[1], places)
    sign = lambda s: s if s.startswith("-") else f"+{s}"  # noqa: E731
    return f"[{sign(low)} %, {sign(high)} %]"


@click.command("bounds")
@click.option(
    "--baseline", required=True, metavar="LOW:HIGH", help="Stated bounds of the baseline's duration for the fixed work."
)
@click.option(
    "--candidate",
    required=True,
    metavar="LOW:HIGH",
    help="Stated bounds of the candidate's duration for the same work.",
)
@click.option("--work", metavar="AMOUNT", help="The fixed work both durations complete (adds throughput bounds).")
@click.option("--unit", default="units", show_default=True, help="Unit of --work (tokens, samples, ...).")
@click.option(
    "--time-unit", type=click.Choice(sorted(_SECONDS)), default="ms", show_default=True, help="Unit of the durations."
)
@click.option(
    "--places", type=click.IntRange(1, 30), default=8, show_default=True, help="Decimals shown (rounded outward)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def command(
    baseline: str, candidate: str, work: str | None, unit: str, time_unit: str, places: int, as_json: bool
) -> None:
    """Certain bounds on the time and throughput ratios, from duration bounds.

    If the baseline took between LOW and HIGH and the candidate between LOW and HIGH
    (same work), the ratios lie inside the printed ranges with certainty. This is
    interval arithmetic, not statistics: no confidence level applies, and a range
    that contains 1 establishes no direction.
    """
    a = _parse_range("--baseline", baseline)
    b = _parse_range("--candidate", candidate)
    w = None
    if work is not None:
        try:
            w = to_fraction(work)
        except ValueError as exc:
            raise UsageError(f"--work: {exc}") from None
    try:
        result = bounds(*a, *b, work=w, unit=unit if w is not None else None)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    per_second = Fraction(_SECONDS[time_unit])
    doc = result.to_json(places)
    doc["time_ratio_formula"] = [f"{b[0]}/{a[1]}", f"{b[1]}/{a[0]}"]
    doc["throughput_ratio_formula"] = [f"{a[0]}/{b[1]}", f"{a[1]}/{b[0]}"]
    doc["time_unit"] = time_unit
    if w is not None:
        base = tuple(x * per_second for x in result.baseline_throughput)  # type: ignore[union-attr]
        cand = tuple(x * per_second for x in result.candidate_throughput)  # type: ignore[union-attr]
        doc["baseline_throughput"] = [float(base[0]), float(base[1])]
        doc["candidate_throughput"] = [float(cand[0]), float(cand[1])]
        doc["baseline_throughput_exact"] = [str(base[0]), str(base[1])]
        doc["candidate_throughput_exact"] = [str(cand[0]), str(cand[1])]
        doc["throughput_unit"] = f"{unit}/s"
    if as_json:
        emit_json(doc)
        return

    out = click.echo
    out("deterministic bounds — not a confidence interval: if the stated durations hold, the ratio lies inside")
    out("with certainty; no probability is attached, and nothing here says how likely the bounds are.")
    out(f"  baseline  {_exact(result.baseline)} {time_unit}   candidate  {_exact(result.candidate)} {time_unit}")
    tl, th = outward(*result.time_ratio, places)
    ql, qh = outward(*result.throughput_ratio, places)
    out(
        f"  time ratio B/A        {doc['time_ratio_formula'][0]} .. {doc['time_ratio_formula'][1]} = "
        f"{_exact(result.time_ratio)} "
        f"≈ [{tl}, {th}]   time change {_pct_pair(result.time_change_pct, places - 2)}"
    )
    out(
        f"  throughput ratio B/A  {doc['throughput_ratio_formula'][0]} .. {doc['throughput_ratio_formula'][1]} = "
        f"{_exact(result.throughput_ratio)} "
        f"≈ [{ql}, {qh}]   throughput change {_pct_pair(result.throughput_change_pct, places - 2)}"
    )
    if w is not None:
        u = clean(unit)
        bl, bh = outward(base[0], base[1], 3)
        cl, ch = outward(cand[0], cand[1], 3)
        out(f"  throughput for {w} {u}: baseline [{bl}, {bh}] {u}/s, candidate [{cl}, {ch}] {u}/s")
    words = {
        "SLOWER_CERTAIN": "the candidate has lower throughput under every duration the bounds allow",
        "FASTER_CERTAIN": "the candidate has higher throughput under every duration the bounds allow",
        "UNDETERMINED": "the range contains 1: these bounds establish no direction (tighter bounds or a statistical "
        "comparison are needed)",
    }
    out(f"verdict: {result.verdict} — {words[result.verdict]}")
    out("(ranges rounded outward: lower ends down, upper ends up)")
