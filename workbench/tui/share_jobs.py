"""The Share pane's jobs (worker threads): the bundle's measured sizes and its export (through the
use cases, from the store the workbench holds or a server's), the offline recheck of the written
file (as ``wb evidence verify [--recompute]``), and the report written beside a bundle (as ``wb report``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from store.engine import default_data_dir
from workbench.bundle.export import write_bundle
from workbench.bundle.reader import read_bundle_file
from workbench.bundle.verify import render_verify, verify_bundle
from workbench.rerun.report import reanalyze
from workbench.usecases.bundles import ExportBundle, MeasureBundle
from workbench.usecases.transport import Workbench


# Samples are embedded by default up to this size: a bundle that big still mails and diffs.
EMBED_BY_DEFAULT_BYTES = 16 * 2**20


def default_bundle_path(inv_id: int) -> Path:
    """Where the export dialog proposes to write: wb's data directory, never the working
    directory (which may be a source checkout) unless the user types it."""
    return default_data_dir() / "bundles" / f"investigation-{inv_id}.bundle.json"


@dataclass(frozen=True)
class BundleSizes:
    with_samples: int
    without_samples: int

    @property
    def embed_by_default(self) -> bool:
        return self.with_samples <= EMBED_BY_DEFAULT_BYTES


def bundle_sizes(wb: Workbench, inv_id: int) -> BundleSizes:
    """The bundle's size in bytes with and without the embedded samples (measured, not guessed)."""
    sizes = wb.call(MeasureBundle(investigation=str(inv_id)))
    return BundleSizes(sizes.with_samples, sizes.without_samples)


@dataclass(frozen=True)
class ExportResult:
    path: Path
    checksum: str
    embedded: bool
    valid: bool
    report: str  # `wb evidence verify` (with --recompute when samples are embedded) on the written file


def export_bundle(wb: Workbench, inv_id: int, path: Path, embed_samples: bool = True) -> ExportResult:
    """Export, then recheck the written file as `wb evidence verify [--recompute]` would."""
    if path.parent == default_bundle_path(inv_id).parent:
        path.parent.mkdir(parents=True, exist_ok=True)  # the proposed place; elsewhere the folder must exist
    bundle = wb.call(ExportBundle(investigation=str(inv_id), embed_samples=embed_samples)).bundle
    written = write_bundle(bundle, path)
    valid, report = verify_bundle_text(written, recompute=embed_samples)
    return ExportResult(written, str(bundle["checksum"]["value"]), embed_samples, valid, report)


def verify_bundle_text(path: Path, recompute: bool = False) -> tuple[bool, str]:
    """Verify a bundle file offline; (valid, the report as text). ``recompute``: re-derive
    the results from the embedded samples too, as `wb evidence verify --recompute`."""
    report = verify_bundle(
        read_bundle_file(path), source=path, recompute=recompute, rerun_engine=reanalyze if recompute else None
    )
    return report.ok, render_verify(report)


@dataclass(frozen=True)
class ReportWritten:
    html: Path
    markdown: Path
    statement: str  # the report's first line: verified, and how far


def report_paths(bundle: Path) -> tuple[Path, Path]:
    """Beside the bundle: ``X.bundle.json`` -> ``X.report.html`` and ``X.report.md``."""
    stem = bundle.name.removesuffix(".json").removesuffix(".bundle")
    return bundle.with_name(f"{stem}.report.html"), bundle.with_name(f"{stem}.report.md")


def report_beside(_wb: Workbench, bundle: Path) -> ReportWritten:
    """The bundle verified (``--recompute`` when it embeds samples), then its page and its ticket
    summary written beside it; a bundle that does not verify is refused (``NotEvidence``), nothing written."""
    from workbench.report.gather import bundle_report  # numpy, the rank views: only when a report is asked for
    from workbench.report.render import write_report  # matplotlib and Jinja2: only when a report is asked for

    report = bundle_report(bundle)
    html, markdown = report_paths(bundle)
    return ReportWritten(
        write_report(report, html, "html"), write_report(report, markdown, "md"), report.recheck.statement
    )
