"""Evidence bundles: export an investigation, import a colleague's for review (``wb bundle``)."""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from workbench.bundle.export import dumps
from workbench.investigations.bundling import export_investigation, import_bundle
from workbench.limits import MiB
from workbench.usecases.core import Answer, Context, Request, operation


class Bundle(msgspec.Struct, frozen=True, kw_only=True):
    """A bundle as ``wb bundle export`` writes it (checksummed, unsigned); its document is the bundle."""

    max_answer_bytes: ClassVar[int] = 1024 * MiB  # samples embedded: larger than any other answer

    bundle: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.bundle

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "Bundle":
        return cls(bundle=doc)


class ExportBundle(Request[Bundle], frozen=True, kw_only=True, forbid_unknown_fields=True):
    investigation: str
    embed_samples: bool = False


@operation("bundles.export", "read")
def export_bundle(ctx: Context, req: ExportBundle) -> Bundle:
    """An investigation as an evidence bundle."""
    return Bundle(bundle=export_investigation(ctx.store, req.investigation, embed_samples=req.embed_samples))


class ImportedBundle(Answer, frozen=True, kw_only=True):
    """``wb bundle import --json``."""

    bundle: int | None
    investigation: int | None
    already_imported: bool
    checksum: str


class ImportBundle(Request[ImportedBundle], frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A bundle file to keep, read-only, as an imported investigation. Through a server the file
    travels as the request's body (``file_field``) and is read there by the same checks."""

    file_field: ClassVar[str] = "path"
    max_file_bytes: ClassVar[int] = 64 * MiB  # wb evidence verify's default --max-size

    path: str
    by: str | None = None


@operation("bundles.import", "upload")
def import_bundle_file(ctx: Context, req: ImportBundle) -> ImportedBundle:
    """Verify a bundle and keep it, read-only, as an imported investigation."""
    done = import_bundle(ctx.store, req.path, by=ctx.by(req.by))
    return ImportedBundle.from_json(dict(done))


class BundleSizes(Answer, frozen=True, kw_only=True):
    """A bundle's size in bytes with and without the embedded samples (measured, not guessed)."""

    with_samples: int
    without_samples: int


class MeasureBundle(Request[BundleSizes], frozen=True, kw_only=True, forbid_unknown_fields=True):
    investigation: str


@operation("bundles.sizes", "read")
def measure_bundle(ctx: Context, req: MeasureBundle) -> BundleSizes:
    """How big an investigation's bundle is, with and without its samples."""
    return BundleSizes(
        with_samples=len(dumps(export_investigation(ctx.store, req.investigation, embed_samples=True)).encode()),
        without_samples=len(dumps(export_investigation(ctx.store, req.investigation)).encode()),
    )
