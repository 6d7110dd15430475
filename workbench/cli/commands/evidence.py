"""wb evidence: check a bundle offline (no store, no GPU, no network).

Only ``workbench.bundle`` is imported on this path, never the store or Textual.
"""

from __future__ import annotations

import json
import sys

import click

from workbench.bundle.reader import read_bundle_file
from workbench.bundle.verify import render_verify, verify_bundle
from workbench.cli import json_out
from workbench.vocabulary import jsonable
from workbench.errors import EXIT_REFUSED, UsageError


def _size(text: str) -> int:
    units = {
        "": 1,
        "B": 1,
        "K": 1024,
        "KB": 1024,
        "KIB": 1024,
        "M": 2**20,
        "MB": 2**20,
        "MIB": 2**20,
        "G": 2**30,
        "GB": 2**30,
        "GIB": 2**30,
    }
    t = text.strip().upper()
    num = t.rstrip("KMGIB")
    unit = t[len(num) :]
    if not num.isdigit() or unit not in units:
        raise UsageError(f"--max-size {text!r}: expected e.g. 64MB or 200M")
    return int(num) * units[unit]


@click.group("evidence")
def command() -> None:
    """Evidence checks."""


@command.command("verify")
@click.argument("bundle", type=click.Path(dir_okay=False))
@click.option(
    "--recompute",
    is_flag=True,
    help="Re-derive the comparisons from the embedded samples and check them against the results.",
)
@click.option(
    "--captures",
    "captures_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Check the original capture files in DIR against the recorded digests.",
)
@click.option("--max-size", default="64MB", show_default=True, help="Refuse bundles larger than this.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def verify(bundle, recompute, captures_dir, max_size, as_json) -> None:
    """Recheck BUNDLE's checksum and every digest. Exit 0 valid, 3 mismatch, 2 unreadable.

    Bundles are unsigned: valid means unchanged since export, not who made it
    nor that the result is right.
    """
    doc = read_bundle_file(bundle, max_bytes=_size(max_size))
    rerun_engine = None
    if recompute:
        # Rerun comparisons are re-derived from their per-run values; only --recompute loads numpy for it.
        from workbench.rerun.report import reanalyze as rerun_engine

    report = verify_bundle(
        doc, source=bundle, captures_dir=captures_dir, recompute=recompute, rerun_engine=rerun_engine
    )
    if as_json:
        # the one strict encoder (nan and ±inf: null, with the reason beside); not emit_json, which loads the store
        sys.stdout.write(json.dumps(jsonable(report.to_json()), indent=2, ensure_ascii=False, allow_nan=False) + "\n")
        json_out.mark_written()
    else:
        click.echo(render_verify(report))
    if not report.ok:
        sys.exit(EXIT_REFUSED)
