"""``wb --server URL compare|inspect|bundle export``: the served comparison drawn by the local
renderer (``render_comparison`` on ``Comparison.from_json``, ``render_inspect`` on the
inspection typed again, then the way out of a refusal),
and the served bundle written as ``wb bundle export`` writes it. Apart from ``remote`` so
that ``wb runs``/``wb show`` with a server load no compare engine."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click
import msgspec

from workbench.bundle.export import write_bundle
from workbench.cli.context import emit_json
from workbench.cli.remote import client, segment
from workbench.compare.inspect_data import Distribution, InspectResult, Operation, OverTime
from workbench.compare.model import Comparison
from workbench.compare.render import render_comparison, render_inspect
from workbench.compare.way_out import WayOut, render_way_out
from workbench.errors import UsageError
from workbench.vocabulary import JSONDoc


def compare(
    ctx: click.Context,
    *,
    baseline,
    candidate,
    control,
    lens,
    changes,
    accepts,
    whys,
    extensions,
    metric,
    as_json: bool,
    fail_on: str | None,
    exit_code: Callable[[Comparison, str | None], int],
) -> None:
    """``exit_code``: the local command's rule for --fail-on."""
    if extensions:
        raise UsageError(
            "--extension names a file here; with --server the server's lens extensions apply (WB_LENS_EXTENSIONS where "
            "it runs)"
        )
    if not candidate:
        raise UsageError("name the candidate runs: wb compare BASE... --vs CAND...")
    with client(ctx) as c:
        doc = c.post_json(
            "/compare",
            compare_body(baseline, candidate, control, lens, changes, accepts, whys, metric),
            idempotent=True,
        )
    result = Comparison.from_json(doc)
    if as_json:
        emit_json(doc)
    else:
        click.echo(render_comparison(result))
        if "way_out" in doc:
            click.echo("\n".join(render_way_out(WayOut.from_json(doc["way_out"]))))
    if fail_on in ("regression", "any") and result.comparable and result.verdict is None:
        click.echo(
            "wb: note: no verdict on the primary metric (needs two or more runs a side): --fail-on regression cannot "
            "fire on it",
            err=True,
        )
    code = exit_code(result, fail_on)
    if code:
        sys.exit(code)


def inspect(
    ctx: click.Context,
    *,
    baseline,
    candidate,
    control,
    lens,
    changes,
    accepts,
    whys,
    extensions,
    windows: int,
    top: int,
    as_json: bool,
    refused_exit: int,
    metric: str | None = None,
) -> None:
    """``wb --server URL inspect``: the served document drawn by ``render_inspect``."""
    if extensions:
        raise UsageError(
            "--extension names a file here; with --server the server's lens extensions apply (WB_LENS_EXTENSIONS where "
            "it runs)"
        )
    body = {
        **compare_body(baseline, candidate, control, lens, changes, accepts, whys, metric),
        "windows": windows,
        "top": top,
    }
    with client(ctx) as c:
        doc = c.post_json("/inspect", body, idempotent=True)
    result = inspect_result_of(doc)
    if as_json:
        emit_json(doc)
    else:
        click.echo(render_inspect(result))
        if "way_out" in doc:
            click.echo("\n".join(render_way_out(WayOut.from_json(doc["way_out"]))))
    if not result.comparison.comparable:
        sys.exit(refused_exit)


def inspect_result_of(doc: Mapping[str, object]) -> InspectResult:
    """``wb inspect --json``'s document typed again (the inverse of ``InspectResult.to_json``)."""
    comparison = doc["comparison"]
    if not isinstance(comparison, Mapping):
        raise msgspec.ValidationError("Expected `object` - at `$.comparison`")
    return InspectResult(
        comparison=Comparison.from_json(comparison),
        distributions=msgspec.convert(doc.get("distributions", []), tuple[Distribution, ...]),
        over_time=msgspec.convert(doc["over_time"], OverTime) if doc.get("over_time") else None,
        operations=None if doc.get("operations") is None else msgspec.convert(doc["operations"], tuple[Operation, ...]),
    )


def bundle_export(
    ctx: click.Context, investigation: str, output: str | None, embed_samples: bool
) -> tuple[dict[str, Any], Path]:
    """The served bundle, written as ``wb bundle export`` writes it; (bundle, path)."""
    with client(ctx) as c:
        text = c.get_text(
            f"/investigations/{segment(investigation)}/bundle", {"embed_samples": "1"} if embed_samples else None
        )
    bundle = json.loads(text)
    if output is None:
        ref = str(bundle["investigation"].get("ref") or investigation).rsplit("/", 1)[-1]
        output = str(Path.cwd() / f"investigation-{ref}.bundle.json")
    return bundle, write_bundle(bundle, output)


def compare_body(
    baseline: Sequence[str],
    candidate: Sequence[str],
    control: Sequence[str],
    lens: str | None,
    changes: Sequence[str],
    accepts: Sequence[str],
    whys: Sequence[str],
    metric: str | None = None,
    investigation: str | None = None,
) -> JSONDoc:
    """``POST /compare``'s body from ``wb compare``'s words."""
    body: JSONDoc = {
        "baseline": list(baseline),
        "candidate": list(candidate),
        "control": list(control),
        "lens": lens,
        "change": list(changes),
        "accept": list(accepts),
        "why": list(whys),
    }
    if metric:
        body["metric"] = metric
    if investigation is not None:
        body["investigation"] = investigation
    return body
