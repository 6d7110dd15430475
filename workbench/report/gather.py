"""A report's two sources: a bundle file, verified before anything is read from it, or an
investigation of the store, exported in memory as a bundle would be.

A bundle that does not verify is refused (exit 3, nothing written): a page is easy to
forward without the checks that came with it, so a mismatched bundle never becomes one.
``wb evidence verify FILE`` shows what differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from store.errors import RunNotFound
from store.records import RunRecord
from workbench.bundle.reader import DEFAULT_MAX_BYTES, read_bundle_file
from workbench.bundle.recompute import rebuild_runs
from workbench.bundle.verify import verify_bundle
from workbench.errors import EXIT_REFUSED, WbError
from workbench.investigations.bundling import export_investigation
from workbench.report.details import RunLoader, add_details
from workbench.report.model import Recheck, Report, read_report
from workbench.rerun.report import reanalyze
from workbench.textsafe import clean
from workbench.vocabulary import JSONDoc, RunRef

if TYPE_CHECKING:
    from store.api import Store


class NotEvidence(WbError):
    """A bundle that does not verify: never drawn as evidence."""

    exit_code = EXIT_REFUSED


def _frame_refs(bundle: JSONDoc) -> tuple[list[RunRef], list[RunRef]]:
    inv = bundle.get("investigation")

    def side(key: str) -> list[RunRef]:
        refs = inv.get(key) if isinstance(inv, dict) else None
        return [r for r in refs if isinstance(r, str | int)] if isinstance(refs, list) else []

    return side("baseline"), side("candidate")


def _bundle_loader(bundle: JSONDoc, embedded: bool) -> RunLoader:
    """Runs rebuilt from the embedded samples, by bundle ref (``run/16``) or by the id a result names (16)."""
    if not embedded:
        return lambda refs: None
    rebuilt = rebuild_runs(bundle)
    by_key: dict[RunRef, RunRecord] = {ref: run for ref, run in rebuilt.items()}
    by_key.update({r.id: r for r in rebuilt.values() if r.id is not None})

    def load(refs: Sequence[RunRef]) -> list[RunRecord] | None:
        found = [by_key.get(r) for r in refs]
        return [r for r in found if r is not None] if all(found) else None

    return load


def bundle_report(
    path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES, captures_dir: str | Path | None = None
) -> Report:
    """The report of the bundle at ``path``, verified first (``--recompute`` when it embeds samples)."""
    bundle = read_bundle_file(path, max_bytes=max_bytes)
    embedded = isinstance(bundle.get("samples"), dict)
    verified = verify_bundle(
        bundle, source=path, captures_dir=captures_dir, recompute=embedded, rerun_engine=reanalyze if embedded else None
    )
    command = f"wb evidence verify {path}" + (" --recompute" if embedded else "")
    if not verified.ok:
        raise NotEvidence(
            f"{clean(path)}: not reported: the bundle does not verify (mismatch in "
            f"{clean(', '.join(verified.mismatched))}); see what differs with: {clean(command)}"
        )
    checksum = bundle.get("checksum")
    recheck = Recheck(
        origin="bundle",
        source=str(path),
        checksum=str(checksum.get("value")) if isinstance(checksum, dict) else None,
        valid=True,
        recomputed=embedded,
        checks=tuple([*verified.checks, *(verified.recompute or [])]),
        commands=(command,) + ((f"wb evidence verify {path} --captures DIR",) if captures_dir is None else ()),
    )
    return add_details(read_report(bundle, recheck), _bundle_loader(bundle, embedded), _frame_refs(bundle))


def investigation_report(store: "Store", investigation: str | int) -> Report:
    """The report of an investigation of the store: exported in memory (no samples: the rows are the store's)."""
    bundle = export_investigation(store, investigation)
    inv = bundle["investigation"]
    number = str(inv.get("ref") or investigation).rsplit("/", 1)[-1]
    out = f"investigation-{number}.bundle.json"
    recheck = Recheck(
        origin="store",
        source=f"investigation {number}",
        checksum=None,
        valid=None,
        recomputed=False,
        checks=(),
        commands=(
            f"wb bundle export {number} -o {out} --embed-samples",
            f"wb evidence verify {out} --recompute",
            f"wb report {out} -o investigation-{number}.html",
        ),
    )

    def load(refs: Sequence[RunRef]) -> list[RunRecord] | None:
        ids = [int(str(r).rsplit("/", 1)[-1]) for r in refs]  # a result names store ids; the frame, run/N
        try:
            return store.load_runs(ids, tables=["samples"])
        except RunNotFound:  # removed since it was compared: the views that need its rows are left out
            return None

    return add_details(read_report(bundle, recheck), load, _frame_refs(bundle))
