"""wb bundle: export an investigation as an evidence bundle; import a colleague's for review."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.bundle.export import write_bundle
from workbench.bundle.format import UNSIGNED_NOTE
from workbench.cli.context import emit_json, workbench_from
from workbench.investigations.common import current_user
from workbench.usecases.bundles import ExportBundle, ImportBundle


@click.group("bundle")
def command() -> None:
    """Evidence bundles (JSON, checksummed, unsigned). Check one with 'wb evidence verify'."""


@command.command("export")
@click.argument("investigation")
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(dir_okay=False),
    help="Where to write the bundle (default: investigation-ID.bundle.json in the working directory; the path is "
    "printed).",
)
@click.option(
    "--embed-samples",
    is_flag=True,
    help="Embed the runs' normalized samples so 'verify --recompute' can re-derive the results.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary (path, checksum, digests).")
@click.pass_context
def export(ctx, investigation, output, embed_samples, as_json) -> None:
    """Export INVESTIGATION to a bundle file."""
    with workbench_from(ctx) as wb:
        bundle = wb.call(ExportBundle(investigation=investigation, embed_samples=embed_samples)).bundle
    if output is None:  # the working directory, as the TUI's Share stage proposes
        ref = str(bundle["investigation"].get("ref") or investigation).rsplit("/", 1)[-1]
        output = Path.cwd() / f"investigation-{ref}.bundle.json"
    path = write_bundle(bundle, output)
    summary = {
        "path": str(path.resolve()),
        "size": path.stat().st_size,
        "checksum": bundle["checksum"]["value"],
        "recipe_sha256": bundle["recipe"]["digest"]["sha256"],
        "results_sha256": bundle["results"]["digest"]["sha256"],
        "samples_sha256": bundle["samples"]["digest"]["sha256"] if "samples" in bundle else None,
        "captures": len(bundle["subject"]),
        "signed": False,
    }
    if as_json:
        emit_json(summary)
        return
    click.echo(f"wrote {path.resolve()} ({summary['size']:,} bytes)")
    click.echo(f"  checksum sha256 {summary['checksum']}")
    click.echo(f"  recipe   sha256 {summary['recipe_sha256']}")
    click.echo(f"  results  sha256 {summary['results_sha256']}")
    if summary["samples_sha256"]:
        click.echo(f"  samples  sha256 {summary['samples_sha256']}")
    click.echo(f"  {summary['captures']} capture(s) listed by digest")
    click.echo(UNSIGNED_NOTE)
    click.echo(f"check it anywhere with: wb evidence verify {path}")


@command.command("import")
@click.argument("bundle", type=click.Path(dir_okay=False))
@click.option("--by", default=None, help="Who imports it (default: your login name).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def import_(ctx, bundle, by, as_json) -> None:
    """Import BUNDLE for review: verified first, stored read-only, marked as imported.

    Nothing the bundle carries is run (its rerun plans are kept as text only).
    """
    with workbench_from(ctx) as wb:
        result = wb.call(ImportBundle(path=bundle, by=by or current_user())).to_json()
    if as_json:
        emit_json(result)
        return
    if result["already_imported"]:
        click.echo(f"already imported as investigation {result['investigation']} (bundle {result['bundle']})")
    else:
        click.echo(f"imported as investigation {result['investigation']} (read-only; bundle {result['bundle']})")
    click.echo("nothing in the bundle was run; it is unsigned, so it shows integrity, not who made it")
