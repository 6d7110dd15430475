"""wb report: an investigation or a verified bundle as a self-contained HTML page or a
Markdown summary for an incident ticket (docs/report.md)."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.bundle.format import UNSIGNED_NOTE
from workbench.cli.commands.evidence import _size as parse_size
from workbench.cli.context import emit_json, open_store_from
from workbench.errors import BadInput
from workbench.report.files import FORMATS, output_format
from workbench.textsafe import clean


def _is_bundle(source: str) -> bool:
    """A file is a bundle; a name that looks like one but is not there is a mistake, not an investigation."""
    path = Path(source)
    if path.is_file():
        return True
    if path.suffix.lower() == ".json" or "/" in source:
        raise BadInput(source, "no such file (give a bundle file or an investigation id)")
    return False


@click.command("report")
@click.argument("source", metavar="INVESTIGATION|BUNDLE")
@click.option(
    "-o", "--output", required=True, type=click.Path(dir_okay=False), help="FILE.html (a page) or FILE.md (a summary)."
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None, help="The format (default: by suffix).")
@click.option(
    "--captures",
    "captures_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="A bundle: check the original capture files in DIR against its digests too.",
)
@click.option("--max-size", default="64MB", show_default=True, help="Refuse bundles larger than this.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (path, format, origin, checksum).")
@click.pass_context
def command(ctx, source, output, fmt, captures_dir, max_size, as_json) -> None:
    """Write a report of INVESTIGATION or BUNDLE: a self-contained HTML page or a Markdown summary.

    A bundle is verified first (with --recompute when it embeds samples) and the result is
    shown at the top; a bundle that does not verify is refused (exit 3, nothing written).
    """
    path, chosen = output_format(Path(output), fmt)
    from workbench.report.gather import bundle_report, investigation_report  # numpy: not for 'wb report --help'
    from workbench.report.render import write_report  # matplotlib and Jinja2: not for 'wb report --help'

    if _is_bundle(source):
        report = bundle_report(source, max_bytes=parse_size(max_size), captures_dir=captures_dir)
    else:
        report = investigation_report(open_store_from(ctx), source)
    written = write_report(report, path, chosen)
    summary = {
        "path": str(written.resolve()),
        "format": chosen,
        "size": written.stat().st_size,
        "origin": report.recheck.origin,
        "verified": report.recheck.valid,
        "recomputed": report.recheck.recomputed,
        "checksum": report.recheck.checksum,
        "recheck": list(report.recheck.commands),
        "signed": False,
    }
    if as_json:
        emit_json(summary)
        return
    click.echo(f"wrote {clean(summary['path'])} ({summary['size']:,} bytes)")
    click.echo(clean(report.recheck.statement))
    if report.recheck.checksum:
        click.echo(f"  checksum sha256 {clean(report.recheck.checksum)}")
    for cmd in report.recheck.commands:
        click.echo(f"  {clean(cmd)}")
    click.echo(UNSIGNED_NOTE)
