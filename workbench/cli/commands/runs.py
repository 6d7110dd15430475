"""wb runs: list the runs in the store."""

from __future__ import annotations

import click


@click.command("runs")
@click.option("--lens", type=click.Choice(["inference", "training", "fleet"]), help="Only runs of this lens.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_context
def command(ctx: click.Context, lens: str | None, as_json: bool) -> None:
    """List runs: id, lens, label, window, samples, key dimensions."""
    from workbench.cli.context import emit_json, open_store_from, stdout_console
    from workbench.textsafe import markup_safe

    store = open_store_from(ctx)
    runs = store.list_runs(lens)
    if as_json:
        emit_json([
            {"id": r.id, "lens": r.lens, "label": r.label, "dimensions": r.dimension_values(),
             "dimension_sources": {k: v.get("source") for k, v in r.dimensions.items()},
             "window": r.window, "samples": r.sample_count, "origin": r.origin, "created_at": r.created_at}
            for r in runs
        ])
        return
    console = stdout_console()
    if not runs:
        console.print("no runs in this store yet: try 'wb import FILE' ('wb demo' has its own store)")
        return
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("id", "lens", "label", "window", "samples"):
        table.add_column(col, no_wrap=col != "label", justify="right" if col in ("id", "samples") else "left")
    table.add_column("dimensions", overflow="ellipsis", no_wrap=True, max_width=34)
    for r in runs:
        dims = ", ".join(f"{k}={_short(v)}" for k, v in list(r.dimension_values().items())[:3])
        table.add_row(str(r.id), r.lens, markup_safe(r.label), markup_safe(r.window.get("kind", "unknown")), str(r.sample_count), markup_safe(dims))
    console.print(table)


def _short(value, width: int = 20) -> str:
    text = value if isinstance(value, str) else __import__("json").dumps(value)
    return text if len(text) <= width else text[: width - 1] + "…"
