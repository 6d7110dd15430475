"""Importers: from the files users already have to normalized runs.

``detect(path)`` picks an importer by content; ``read_paths`` expands directories,
groups files by importer and reads them. Writing to the store is the job of
``workbench.ingest`` (one transaction per import).

The registry holds the built-in importers (the modules of this package) and the
plug-ins other packages declare in the entry-point group ``wb.importers`` (an
``Importer`` instance or class). A plug-in that cannot be loaded is reported on one line
(logger ``wb.plugins``) and left out; the built-ins never depend on it.
"""

from __future__ import annotations

import importlib
import logging
import os
import pkgutil
import stat
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from store.records import RunRecord
from workbench.errors import BadInput, WbError
from workbench.formats.key_sets import NearMiss
from workbench.importers.base import Importer, ImporterOption, ImportOptions, Probe, probe_file

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "Importer",
    "ImporterOption",
    "ImportOptions",
    "Probe",
    "UnknownFormat",
    "all_importers",
    "detect",
    "expand_paths",
    "get_importer",
    "import_options",
    "nearest_miss",
    "scan_directory",
]

PLUGIN_GROUP = "wb.importers"
OPTION_TYPES = (str, int, float, bool)
log = logging.getLogger("wb.plugins")


@cache
def all_importers() -> tuple[Importer, ...]:
    """Every importer, in detection order: the built-ins by priority, then the plug-ins by
    priority (a plug-in never takes a file a built-in recognises)."""
    found: list[Importer] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        importer = getattr(module, "IMPORTER", None)
        if importer is not None:
            found.append(importer)
    builtins = sorted(found, key=lambda imp: (imp.priority, imp.name))
    return (*builtins, *sorted(_plugins(builtins), key=lambda imp: (imp.priority, imp.name)))


def import_options() -> tuple[tuple[ImporterOption, tuple[str, ...]], ...]:
    """Every importer's ``wb import`` options, each once (first declaration's order), with
    the names of the formats that read it."""
    formats: dict[ImporterOption, list[str]] = {}
    for importer in all_importers():
        for option in importer.options:
            formats.setdefault(option, []).append(importer.name)
    return tuple((option, tuple(names)) for option, names in formats.items())


def _plugins(builtins: list[Importer]) -> Iterator[Importer]:
    from importlib.metadata import entry_points  # ~30 ms (email, zipfile): not at `wb --help`

    taken = {imp.name for imp in builtins}
    declared = {opt.param: opt for imp in builtins for opt in imp.options}
    for entry in entry_points(group=PLUGIN_GROUP):
        what = _describe(entry)
        try:
            importer = entry.load()
            if isinstance(importer, type) and issubclass(importer, Importer):
                importer = importer()
            problem = _problem(importer, taken, declared)
        except Exception as exc:  # noqa: BLE001 - a plug-in's failure, whatever it is, is reported, never raised
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            log.warning("wb: %s not loaded: %s", what, problem)
            continue
        taken.add(importer.name)
        declared.update((opt.param, opt) for opt in importer.options)
        yield _Guarded(importer, what)


def _describe(entry: "EntryPoint") -> str:
    dist = getattr(entry, "dist", None)
    return f"plug-in importer {entry.name!r} ({entry.value}{f', package {dist.name}' if dist is not None else ''})"


def _problem(importer: object, taken: set[str], declared: dict[str, ImporterOption]) -> str | None:
    """Why ``importer`` cannot join the registry, or None."""
    if not isinstance(importer, Importer):
        return f"{type(importer).__name__} is not a workbench.importers.base.Importer"
    if not isinstance(importer.name, str) or not importer.name:
        return "it has no name"
    if importer.name in taken:
        return f"the format name {importer.name!r} is taken"
    flags = {opt.flag: opt.param for opt in declared.values()}
    for opt in importer.options:
        if not isinstance(opt, ImporterOption):
            return f"option {opt!r} is not an ImporterOption"
        if not opt.flag.startswith("--") or not opt.param.isidentifier() or opt.type not in OPTION_TYPES:
            return (
                f"option {opt.flag!r}: a flag starts with '--', a param is a Python name, a type is str, int, float "
                f"or bool"
            )
        if declared.get(opt.param, opt) != opt or flags.get(opt.flag, opt.param) != opt.param:
            return f"option {opt.flag} ({opt.param}) differs from the one another importer declares"
    return None


class _Guarded(Importer):
    """A plug-in importer whose unexpected failures become one line naming the plug-in
    (a ``BadInput``: nothing is written), never a traceback."""

    def __init__(self, inner: Importer, what: str) -> None:
        self.inner, self.what = inner, what
        self.name, self.version, self.description = inner.name, inner.version, inner.description
        self.priority, self.options = inner.priority, tuple(inner.options)
        self.by_content = bool(getattr(inner, "by_content", True))

    def sniff(self, probe: Probe) -> bool:
        try:
            return bool(self.inner.sniff(probe))
        except Exception as exc:  # noqa: BLE001 - see the class docstring
            raise BadInput(probe.path, f"{self.what} failed to sniff it: {type(exc).__name__}: {exc}") from None

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        try:
            yield from self.inner.read(paths, options)
        except WbError:
            raise
        except Exception as exc:  # noqa: BLE001 - see the class docstring
            raise BadInput(
                paths[0] if len(paths) == 1 else None, f"{self.what} failed: {type(exc).__name__}: {exc}"
            ) from None


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
    known = ", ".join(imp.name for imp in all_importers() if imp.by_content)
    near = nearest_miss(probe)
    if near is None:
        raise UnknownFormat(path, f"unknown format (wb reads: {known}); {WAY_IN} (see docs/importers.md)")
    raise UnknownFormat(path, f"unknown format: closest is {near.text()}; {WAY_IN} (see docs/importers.md)", near=near)


# The way in for a file no importer knows (workbench.formats.record_map), said with every refusal.
WAY_IN = "or map its records onto a lens: wb import FILE --map MAP.toml"


class UnknownFormat(BadInput):
    """No importer takes the file. ``near`` (when one came close) names the importer, why
    it declined and what would help; ``--json`` errors carry it as ``error.details.closest``."""

    def __init__(self, file: Path, message: str, *, near: NearMiss | None = None) -> None:
        super().__init__(file, message)
        self.near = near
        self.closest = (
            None if near is None else {"importer": near.importer, "reason": near.reason, "hint": near.hint or None}
        )
        self.details = {"closest": self.closest} if self.closest else None  # rides along in the --json error document


def nearest_miss(probe: Probe) -> NearMiss | None:
    """The importer that came closest to taking ``probe``, with its reason."""
    best: NearMiss | None = None
    for importer in all_importers():
        try:
            near = importer.decline(probe)
        except Exception:  # noqa: BLE001 - a plug-in's decline must never hide the "unknown format" line
            continue
        if near is not None and (best is None or near.score > best.score):
            best = near
    return best


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
                raise BadInput(
                    path,
                    "is a directory with no files in it"
                    + (f" ({len(skipped)} passed over: {skipped[0][1]})" if skipped else ""),
                )
            files.extend(inner)
        elif not path.exists() and not path.is_symlink():
            raise BadInput(path, "no such file")
        else:
            files.append(path)
    return files
