"""``wb compare SWEEP --vs SWEEP``: when each side is one name that is a sweep (its id
``sw-…`` or its label) rather than a run, the sweeps compared at matched load
(``usecases/comparisons.py``), drawn here."""

from __future__ import annotations

import sys
from collections.abc import Mapping

import click

from workbench.cli.context import emit_json
from workbench.compare.sweep_render import render_sweep_comparison
from workbench.compare.sweep_result import SweepComparison
from workbench.errors import EXIT_OK, EXIT_REFUSED, EXIT_REGRESSION


def print_sweep_comparison(result: SweepComparison, *, as_json: bool, fail_on: str | None) -> None:
    """Two sweeps compared at matched load, printed (with the curve, drawn by plotext) or as JSON
    (the curve's points are each side's levels)."""
    doc = result.to_json()
    if as_json:
        emit_json(doc)
    else:
        click.echo(render_sweep_comparison(result))
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
