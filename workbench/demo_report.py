"""The headless demo: the three seed comparisons, printed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from captures import SYNTHETIC_NOTICE

from workbench.compare import compare
from workbench.compare.render import render_comparison

if TYPE_CHECKING:
    from store.api import Store

# (lens, baseline side, candidate side) as labelled by captures/generate_demo.py
DEMO_PAIRS = (
    ("inference", "engine v0.8.2 run", "engine v0.8.3 run "),
    ("training", "PyTorch 2.3.1 run", "PyTorch 2.4.0-rc1 run"),
    ("fleet", "window A", "window B"),
)


def demo_pairs(store: "Store") -> list[tuple[str, list[int], list[int]]]:
    """Run ids of each demo pair's baseline and candidate side (A′ controls excluded)."""
    runs = store.list_runs()
    pairs = []
    for lens, base, cand in DEMO_PAIRS:
        ours = [r for r in runs if r.lens == lens and "A′" not in r.label]
        pairs.append(
            (lens, [r.id for r in ours if r.label.startswith(base)], [r.id for r in ours if r.label.startswith(cand)])
        )
    return pairs


def demo_controls(store: "Store", lens: str) -> list[int]:
    """The A′ runs of a demo lens (the baseline again): the A/A control of its comparison."""
    return [r.id for r in store.list_runs(lens) if "A′" in r.label]


def print_demo_report(store: "Store") -> None:
    click.echo(f"demo: {SYNTHETIC_NOTICE} (captures/README.md); not measurements")
    click.echo("")
    pairs = demo_pairs(store)
    for lens, base_ids, cand_ids in pairs:
        comparison = compare(
            store.load_runs(base_ids),
            store.load_runs(cand_ids),
            lens=lens,
            changes=_demo_change(lens, store, base_ids, cand_ids),
            control=store.load_runs(demo_controls(store, lens)),
        )
        click.echo(render_comparison(comparison))
        click.echo("")
    # The demo's pair that cannot be compared: comparability comes before any delta.
    other = [r.id for r in store.list_runs("inference") if r.label.endswith("(other hardware)")]
    base_ids = pairs[0][1]
    if other and base_ids:
        click.echo("A pair the inference lens refuses (the candidate ran on other hardware):")
        refused = compare(
            store.load_runs(base_ids),
            store.load_runs(other),
            lens="inference",
            changes=_demo_change("inference", store, base_ids, other),
        )
        click.echo(render_comparison(refused))


def _demo_change(lens: str, store: "Store", base_ids: list[int], cand_ids: list[int]) -> dict:
    dim = {"inference": "engine_revision", "training": "framework"}.get(lens)
    if dim is None:
        return {}
    before = store.get_run(base_ids[0]).dimension_values()[dim]
    after = store.get_run(cand_ids[0]).dimension_values()[dim]
    return {dim: (before, after)}
