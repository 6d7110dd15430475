"""``wb compare SWEEP --vs SWEEP``: when each side is one name that is a sweep (its id
``sw-…`` or its label) rather than a run, compare the sweeps at matched load."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

import click

from store.errors import StoreError
from workbench.cli.context import emit_json, open_store_from
from workbench.compare import parse_change
from workbench.compare.sweep import compare_sweeps, find_sweep, parse_slo
from workbench.compare.sweep_render import render_sweep_comparison
from workbench.errors import EXIT_OK, EXIT_REFUSED, EXIT_REGRESSION, UsageError


def sweep_sides(
    ctx: click.Context, baseline: tuple[str, ...], candidate: tuple[str, ...]
) -> tuple[list[int], list[int]] | None:
    """The two sweeps' run ids, or ``None`` when the names are runs (the usual compare)."""
    if len(baseline) != 1 or len(candidate) != 1:
        return None

    store = open_store_from(ctx)
    sides = []
    for ref in (baseline[0], candidate[0]):
        if not ref.startswith("sw-"):
            try:
                store.resolve_run(ref)
                return None  # a run by that id or label: an ordinary comparison
            except StoreError:
                pass
        ids = find_sweep(store, ref)
        if ids is None:
            return None
        sides.append(ids)
    return sides[0], sides[1]


def run_sweep_compare(
    ctx: click.Context,
    sides: tuple[list[int], list[int]],
    *,
    metric: str | None,
    slo: str | None,
    rate_tolerance: float,
    changes: Sequence[str],
    accepts: Sequence[str],
    whys: Sequence[str],
    as_json: bool,
    fail_on: str | None = None,
    plot: bool = False,
) -> None:
    if len(accepts) != len(whys):
        raise UsageError(f"every --accept needs its own --why TEXT ({len(accepts)} --accept, {len(whys)} --why)")
    if set(sides[0]) & set(sides[1]):
        raise UsageError("the same sweep is on both sides")
    store = open_store_from(ctx)
    # Metadata first; each level's rows are loaded when it is compared (bounded memory).
    meta_only = [store.load_runs(ids, tables=[]) for ids in sides]
    result = compare_sweeps(
        meta_only[0],
        meta_only[1],
        metric=metric,
        slo=parse_slo(slo),
        rate_tolerance=rate_tolerance,
        changes=dict(parse_change(c) for c in changes),
        accepts=dict(zip(accepts, whys)),
        load=lambda runs: store.load_runs([r.id for r in runs]),
    )
    doc = result.to_json()
    if as_json:
        emit_json(doc)
    else:
        from workbench.compare.plots import sweep_curve  # numpy and, when drawn, plotext: only with --plot

        click.echo(render_sweep_comparison(result, sweep_curve(result) if plot else None))
    code = sweep_exit_code(doc, fail_on)
    if code:
        sys.exit(code)


def sweep_exit_code(doc: Mapping[str, object], fail_on: str | None) -> int:
    """As for runs: 3 when a matched level was refused (or none matched), 4 when a level's
    primary verdict is REGRESSION or a guardrail broke (needs two or more runs a level)."""
    matched = _objects(doc["matched"])
    if fail_on in ("refused", "any") and (not matched or any(not m["comparable"] for m in matched)):
        return EXIT_REFUSED
    regression = any(
        _get(_get(m.get("primary"), "effect"), "verdict") == "REGRESSION"
        or any(g["state"] == "broken" for g in _objects(m.get("guardrails")))
        for m in matched
    )
    if fail_on in ("regression", "any") and regression:
        return EXIT_REGRESSION
    return EXIT_OK


def _objects(value: object) -> list[Mapping[str, object]]:
    """The JSON objects of a list (none of anything else)."""
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _get(value: object, key: str) -> object:
    """``value[key]`` of a JSON object (None when absent, or when ``value`` is no object)."""
    return value.get(key) if isinstance(value, Mapping) else None
