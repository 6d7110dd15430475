"""Importers: from the files users already have to normalized runs.

``detect(path)`` picks an importer by content; ``read_paths`` expands directories,
groups files by importer and reads them. Writing to the store is the job of
``workbench.ingest`` (one transaction per import).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from workbench.errors import BadInput
from workbench.importers.base import Importer, ImportOptions, Probe, probe_file

__all__ = ["Importer", "ImportOptions", "Probe", "all_importers", "detect", "expand_paths", "get_importer"]


@cache
def all_importers() -> tuple[Importer, ...]:
    """Every importer module's ``IMPORTER``, in detection order."""
    found: list[Importer] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        importer = getattr(module, "IMPORTER", None)
        if importer is not None:
            found.append(importer)
    return tuple(sorted(found, key=lambda imp: (imp.priority, imp.name)))


def get_importer(name: str) -> Importer:
    for importer in all_importers():
        if importer.name == name:
            return importer
    names = ", ".join(imp.name for imp in all_importers())
    raise BadInput(None, f"unknown format {name!r} (known: {names})")


def detect(path: Path) -> tuple[Importer, Probe]:
    """The importer that recognises ``path``'s content, or a clear error."""
    probe = probe_file(path)
    if not probe.head.strip():
        raise BadInput(path, "is empty")
    for importer in all_importers():
        if importer.sniff(probe):
            return importer, probe
    known = ", ".join(imp.name for imp in all_importers())
    raise BadInput(path, f"unknown format (wb reads: {known}; see docs/importers.md)")


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """Files named directly, plus the files under named directories (sorted, hidden skipped)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            # wb.toml declares the folder's dimensions (workbench.dims_file); it is not a capture.
            inner = sorted(p for p in path.rglob("*") if p.is_file() and p.name != "wb.toml"
                           and not any(part.startswith(".") for part in p.relative_to(path).parts))
            if not inner:
                raise BadInput(path, "is a directory with no files in it")
            files.extend(inner)
        elif not path.exists():
            raise BadInput(path, "no such file")
        else:
            files.append(path)
    return files
