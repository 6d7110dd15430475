"""wb runs: list the runs in the store."""

from __future__ import annotations

import json

import click

from workbench.cli.context import LENS, emit_json, stdout_console, workbench_from
from workbench.textsafe import clean, markup_safe
from workbench.usecases.runs import ListRuns


@click.command("runs")
@click.option("--lens", type=LENS, help="Only runs of this lens.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_context
def command(ctx: click.Context, lens: str | None, as_json: bool) -> None:
    """List runs: id, lens, label, window, samples, key dimensions."""
    with workbench_from(ctx) as wb:
        docs = wb.call(ListRuns(lens=lens)).runs
    if as_json:
        emit_json(docs)
        return
    print_runs(docs, lens)


def print_runs(runs: list[dict], lens: str | None) -> None:
    """Draw a ``wb runs --json`` document (local or served) at the terminal's width."""
    console = stdout_console()
    if not runs and lens:
        console.print(f"no {lens} runs in this store (without --lens: all runs)")
        return
    if not runs:
        console.print("no runs in this store yet: try 'wb import FILE' ('wb demo' has its own store)")
        return
    from rich.table import Table  # Rich (~40 ms): only to draw, never for --json

    # Escaped before anything is measured or cut: an invisible character is shown as its
    # escape (\u00ad), and an ellipsis never hides the escape that tells two labels apart.
    rows = [
        (
            str(r["id"]),
            clean(r["lens"]),
            clean(r["label"]),
            clean(str(r["window"].get("kind", "unknown"))),
            str(r["samples"]),
            ", ".join(f"{clean(k)}={_short(v)}" for k, v in list(r["dimensions"].items())[:3]),
        )
        for r in runs
    ]
    headers = ("id", "lens", "label", "window", "samples", "dimensions")
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    # One line per run: the fixed columns keep their width, the label and the dimensions
    # share the rest; a long label loses its middle to an ellipsis, keeping the end that
    # tells similar runs apart (the full label: --json, 'wb show').
    room = max(console.width - sum(w for i, w in enumerate(widths) if i not in (2, 5)) - 2 * (len(headers) - 1), 24)
    label_w = min(widths[2], max(12, room - min(widths[5], 20)))
    table = Table(box=None, header_style="bold", pad_edge=False)
    for i, col in enumerate(headers):
        table.add_column(
            col,
            no_wrap=True,
            overflow="ellipsis",
            justify="right" if col in ("id", "samples") else "left",
            min_width=label_w if i == 2 else None if i == 5 else widths[i],
            max_width=label_w if i == 2 else max(room - label_w, 8) if i == 5 else None,
        )
    shown = _distinct_middles([row[2] for row in rows], label_w)
    for row, label in zip(rows, shown):
        table.add_row(*(markup_safe(label if i == 2 else cell) for i, cell in enumerate(row)))
    console.print(table)


def _short(value, width: int = 20) -> str:
    text = clean(value if isinstance(value, str) else json.dumps(value))
    return text if len(text) <= width else text[: width - 1] + "…"


def _middle(text: str, width: int, tail: int | None = None) -> str:
    """``text`` in ``width`` characters, its middle replaced by an ellipsis (keeping
    ``tail`` characters of its end; by default half)."""
    if len(text) <= width:
        return text
    tail = (width - 1) // 2 if tail is None else tail
    return text[: width - 1 - tail] + "…" + text[len(text) - tail :]


def _distinct_middles(labels: list[str], width: int) -> list[str]:
    """Each label shortened by ``_middle``; labels that differ but would look alike
    ("sacct (sample-one-multiline.txt)" and "sacct (sample-multiple-multiline.txt)" both
    "sacct (samp…multiline.txt)") move the ellipsis, nearest the middle first, until
    they look different."""
    shown = [_middle(label, width) for label in labels]
    groups: dict[str, set[str]] = {}
    for label, short in zip(labels, shown):
        groups.setdefault(short, set()).add(label)
    for short, originals in groups.items():
        if len(originals) < 2:
            continue
        half = (width - 1) // 2
        for tail in sorted(range(width - 1), key=lambda t: abs(t - half)):
            moved = {label: _middle(label, width, tail) for label in originals}
            if len(set(moved.values())) == len(originals):
                shown = [moved.get(label, s) if s == short else s for label, s in zip(labels, shown)]
                break
    return shown
