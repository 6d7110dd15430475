"""wb show: one run in full: dimensions with sources, window, work, samples, phases."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from workbench.numbers import figure
from workbench.cli.context import emit_json, stdout_console, workbench_from
from workbench.compare.findings_render import findings_block, window_lines
from workbench.compare.host_activity import HostReport, render_host
from store.run_meta import RunMeta
from workbench.formats.load_sweep import ALL_AT_ONCE
from workbench.textsafe import markup_safe as esc
from workbench.usecases.runs import ShowRun

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


@click.command("show")
@click.argument("run")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def command(ctx: click.Context, run: str, as_json: bool) -> None:
    """Show RUN (an id or a label)."""
    with workbench_from(ctx) as wb:
        doc = wb.call(ShowRun(run=run)).run
    if as_json:
        emit_json(doc)
    else:
        print_run(doc)


_STATS = ("mean", "median", "p90", "p95", "p99", "p99.9", "std", "min", "max")


def _print_summary(console: Console, summary: object) -> None:
    """The figures the file states (``meta["summary"]``): a summary-only run's only data."""
    if not isinstance(summary, dict) or not summary:
        return
    blocks = {k: v for k, v in summary.items() if isinstance(v, dict) and any(s in v for s in _STATS)}
    scalars = {k: v for k, v in summary.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    if blocks:
        console.print(_summary_table(blocks))
    if scalars:
        console.print("summary: " + ", ".join(f"{esc(k)}={esc(figure(v))}" for k, v in scalars.items()))


def _summary_table(blocks: dict[str, dict]) -> Table:
    """One row per stated metric, a column per statistic any of them states (blank where one does not)."""
    from rich.table import Table  # Rich (~40 ms): only to draw, never for --json

    shown = [s for s in _STATS if any(s in b for b in blocks.values())]
    table = Table(
        title="summary (as the file states it; source: file)", title_justify="left", box=None, header_style="bold"
    )
    for col in ("metric", *shown):
        table.add_column(col, overflow="fold", justify="left" if col == "metric" else "right")
    for name, block in blocks.items():
        table.add_row(
            esc(name), *(esc(figure(block[s])) if isinstance(block.get(s), (int, float)) else "" for s in shown)
        )
    return table


def load_words(load: dict, fmt) -> str:
    """A run's load in words: every request at once is said so, never "requested unknown req/s"."""
    rate, strategy = load.get("requested_rate"), load.get("strategy")
    requested = (
        "all requests at once"
        if rate is None and strategy == ALL_AT_ONCE
        else f"requested {fmt(rate)} req/s, strategy {fmt(strategy)}"
    )
    return f"{requested}, concurrency {fmt(load.get('concurrency'))}; achieved {fmt(load.get('achieved_rate'))} req/s"


def print_run(doc: dict) -> None:
    """Draw a ``wb show --json`` document (local or served)."""
    console = stdout_console()
    console.print(f"[bold]run {doc['id']}[/bold]  {esc(doc['label'])}  ({doc['lens']})")
    _print_window(console, doc["window"])
    work = doc["work"]
    console.print(f"work: {esc(figure(work['amount']))} {esc(work['unit'])}" if work else "work: unknown")
    if doc["quality"]:
        console.print("quality: " + ", ".join(f"{esc(k)}={figure(v)}" for k, v in doc["quality"].items()))
    console.print(f"samples: {doc['samples']:,}")
    for note in RunMeta.of(doc["meta"]).notes:  # the lens check's findings and the importer's warnings
        console.print(f"note: {esc(note)}", highlight=False)
    _print_summary(console, doc["meta"].get("summary"))
    _print_load(console, doc["meta"])
    _print_dimensions(console, doc["dimensions"])
    if doc["phases"]:
        _print_phases(console, doc["phases"])
    if doc.get("declarations"):
        _print_declarations(console, doc["declarations"])
    if "host_activity" in doc:
        for line in render_host(HostReport.from_json(doc["host_activity"])):
            console.print(esc(line), overflow="ignore", crop=False)
    for c in doc["captures"]:
        console.print(f"capture {esc(c['name'])}  sha256:{c['sha256'][:16]}…  {c['size']:,} B  {esc(c['importer'])}")
    diagnostics = doc["meta"].get("diagnostics")
    if isinstance(diagnostics, list) and diagnostics:
        for line in findings_block(
            [d for d in diagnostics if isinstance(d, dict)], "trace findings (observations, not causes)"
        ):
            console.print(esc(line), highlight=False)


def _print_window(console: Console, window: dict) -> None:
    warm = window.get("warmup_excluded")
    console.print(
        f"window: {esc(window.get('kind', 'unknown'))}"
        + (f", warm-up excluded: {esc(warm)}" if warm is not None else "")
    )
    for line in window_lines(window):
        console.print(esc(line), highlight=False)


def _print_load(console: Console, meta: dict) -> None:
    """The load a level ran at, and the sweep it belongs to (with how to compare it)."""
    load, sweep = meta.get("load"), meta.get("sweep")
    if isinstance(load, dict):
        console.print(f"load: {esc(load_words(load, figure))}")
    if isinstance(sweep, dict):
        console.print(
            f"sweep: {esc(sweep.get('id'))} {esc(sweep.get('label'))!r}, level {figure((sweep.get('level') or 0) + 1)} "
            f"of "
            f"{figure(sweep.get('levels'))} ({esc(sweep.get('axis'))}): wb compare {esc(sweep.get('id'))} --vs SWEEP"
        )


def _print_dimensions(console: Console, dimensions: dict) -> None:
    from rich.table import Table  # Rich (~40 ms): only to draw, never for --json

    dims = Table(title="dimensions", title_justify="left", box=None, header_style="bold")
    for col in ("name", "value", "source"):
        dims.add_column(col, overflow="fold")
    for name, d in dimensions.items():
        value = d["value"] if isinstance(d["value"], str) else json.dumps(d["value"])
        source = d["source"] + (f" (#{d['declaration']})" if d.get("declaration") is not None else "")
        dims.add_row(esc(name), esc(value), esc(source))
    console.print(dims)


def _print_phases(console: Console, phase_stats: dict) -> None:
    from rich.table import Table  # Rich (~40 ms): only to draw, never for --json

    phases = Table(
        title="phases (descriptive, pooled within this run)", title_justify="left", box=None, header_style="bold"
    )
    for col in ("column", "n", "missing", "mean", "p50", "p95"):
        phases.add_column(col, justify="left" if col == "column" else "right")
    for name, s in phase_stats.items():
        phases.add_row(
            esc(name), str(s["count"]), str(s["missing"]), figure(s["mean"]), figure(s["p50"]), figure(s["p95"])
        )
    console.print(phases)


def _print_declarations(console: Console, declarations: list) -> None:
    console.print("[bold]declarations[/bold] (wb declare, oldest first)")
    for d in declarations:
        what = f"{d['name']}={d['value']}" if d["action"] == "set" else f"{d['name']} unset"
        why = f"  why: {d['why']}" if d["why"] else ""
        console.print(f"  #{d['id']}  {esc(what)}  by {esc(d['who'])} at {esc(d['at'])}{esc(why)}")
