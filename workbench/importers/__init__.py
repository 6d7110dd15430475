"""Importers: from the files users already have to normalized runs.

``detect(path)`` picks an importer by content; ``read_paths`` expands directories,
groups files by importer and reads them. Writing to the store is the job of
``workbench.ingest`` (one transaction per import).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import stat
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from workbench.errors import BadInput
from workbench.importers.base import Importer, ImportOptions, Probe, probe_file

__all__ = ["Importer", "ImportOptions", "Probe", "all_importers", "detect", "expand_paths", "get_importer", "scan_directory"]


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


def scan_directory(root: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The regular files under ``root`` (sorted, hidden names skipped), and what was
    passed over with why: a symlink leading out of ``root`` is not followed (a scanned
    directory must not reach ``/etc`` or ``/dev/zero``), and a FIFO, device or socket is
    not read. Symlinked directories are never descended into."""
    base = root.resolve()
    files: list[Path] = []
    passed: list[tuple[Path, str]] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        here = Path(folder)
        for d in dirs:
            if (here / d).is_symlink():
                passed.append((here / d, "a symlink to a directory; not followed"))
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = here / name
            if path.is_symlink():
                target = path.resolve()
                if not target.is_relative_to(base):
                    passed.append((path, f"a symlink out of the directory (to {target}); not followed"))
                    continue
            try:
                mode = path.stat().st_mode
            except OSError as exc:
                passed.append((path, f"cannot be read ({exc.strerror or exc})"))
                continue
            if stat.S_ISDIR(mode):
                passed.append((path, "a symlink to a directory; not followed"))
            elif not stat.S_ISREG(mode):
                passed.append((path, "not a regular file (a FIFO, device or socket); not read"))
            else:
                files.append(path)
    return sorted(files), passed


def expand_paths(paths: Iterable[Path], passed: list[tuple[Path, str]] | None = None) -> list[Path]:
    """Files named directly, plus the regular files under named directories (see
    :func:`scan_directory`; what it passes over is appended to ``passed``)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            inner, skipped = scan_directory(path)
            # wb.toml declares the folder's dimensions (workbench.dims_file); it is not a capture.
            inner = [p for p in inner if p.name != "wb.toml"]
            if passed is not None:
                passed.extend(skipped)
            if not inner:
                raise BadInput(path, "is a directory with no files in it" + (f" ({len(skipped)} passed over: {skipped[0][1]})" if skipped else ""))
            files.extend(inner)
        elif not path.exists() and not path.is_symlink():
            raise BadInput(path, "no such file")
        else:
            files.append(path)
    return files
