"""Import files into the store: detect, read (hashing as it reads), then write everything in one transaction.

A file whose SHA-256 is already in the store is skipped (and reported), so a second
import of the same file adds nothing. Only a file that may be one already stored (a
stored capture or another file of this import has its size) is hashed before it is
read; any other is new whatever its digest, which is taken while the importer reads
it (``inputs.watching``): one pass over the file, not two. Any fault in any file leaves
the store as it was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from lenses import builtin_lens
from store.api import CaptureInfo, Store
from store.errors import DuplicateCapture
from store.records import Dimension, RunRecord
from store.spooled import SpooledTable
from workbench.archives import Unpacked
from workbench.declare import contradiction, declare_dimensions
from workbench.dims_file import FolderDimensions
from workbench.errors import BadInput, UsageError
from workbench.importers import UnknownFormat, detect, expand_paths
from workbench.importers.mapped import IMPORTER as MAPPED
from workbench.importers.base import READ_ERRORS, Importer, ImportOptions
from workbench.inputs import Digest, check_unchanged, digest_file, file_size, watching
from workbench.limits import MAX_STRING_CHARS, exceeded
from workbench.textsafe import look_alike_form


@dataclass
class ImportReport:
    imported: list[tuple[Path, list[int]]] = field(default_factory=list)  # file -> new run ids
    linked: list[tuple[Path, list[int]]] = field(default_factory=list)  # a file already stored, read with new ones
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # file -> why
    run_ids: list[int] = field(default_factory=list)
    # a file already stored, imported again with declarations -> what was declared
    declared: list[tuple[Path, list[Any]]] = field(default_factory=list)
    # new run id -> what the lens check found and the importer warned (RunMeta.notes)
    notes: list[tuple[int, list[str]]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "imported": [{"file": str(p), "runs": ids} for p, ids in self.imported],
            "linked": [{"file": str(p), "runs": ids} for p, ids in self.linked],
            "skipped": [{"file": str(p), "reason": why} for p, why in self.skipped],
            "runs": self.run_ids,
            "declared": [
                {"file": str(p), "declarations": [d.to_json() for d in ds if d.changed]} for p, ds in self.declared
            ],
            "notes": [{"run": run, "notes": notes} for run, notes in self.notes],
        }


def parse_dim_options(values: Sequence[str]) -> dict[str, str]:
    """``--dim NAME=VALUE`` options to a mapping (usage error on a malformed one)."""
    dims: dict[str, str] = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--dim expects NAME=VALUE, got {item!r}")
        dims[name.strip()] = value
    return dims


def apply_declared_dimensions(
    record: RunRecord, dims: dict[str, str], origin: Callable[[str], str] = lambda _name: "--dim"
) -> None:
    """Add user-declared dimensions; a value that contradicts the file is refused.
    ``origin(name)`` says where a value came from (``--dim``, a ``wb.toml``)."""
    for name, value in dims.items():
        existing = record.dimensions.get(name)
        if existing is not None and str(existing.value) != value:
            where = record.sources[0] if record.sources else None
            raise BadInput(
                where,
                f"{origin(name)} {name}={value} contradicts the file, which says {name} = {existing.value!r} "
                f"({existing.source})",
            )
        if existing is None:
            record.dimensions[name] = Dimension(value, "declared")
    found = contradiction(record, dims)  # as 'wb declare' checks: the lens's reading of the samples
    if found:
        name, value, seen = found
        where = record.sources[0] if record.sources else None
        raise BadInput(
            where,
            f"{origin(name)} {name}={value} contradicts the data, which show {name} = {seen.value!r} ({seen.source})",
        )


def _unkeepable(value: str) -> str | None:
    """Why a store cannot keep this text (None: it can): a NUL (PostgreSQL refuses it in text,
    so SQLite does too: one rule on both backends) or a lone surrogate (the insert would fail)."""
    if "\x00" in value:
        return "string contains a NUL character (U+0000; not text a store can keep)"
    if not value.isascii() and any("\ud800" <= ch <= "\udfff" for ch in value):
        return "string contains a lone surrogate (not valid Unicode)"
    return None


def check_text(record: RunRecord) -> None:
    """What every importer hands the store is text the store can keep: no NUL and no lone
    surrogate (a JSON ``\\u0000`` or ``\\ud800`` escape), no string over the limit, in the label,
    dimensions, window, meta or a text column. Cheap: metadata is small and text columns are
    checked as arrays."""
    source = record.sources[0] if record.sources else None
    _check_fields(record, source)
    for table, cols in record.tables.items():
        if isinstance(cols, SpooledTable):  # its text is its vocabulary: each distinct string once, rows untouched
            _check_spooled(table, cols, source)
        else:
            _check_columns(table, cols, source)


def _check_fields(record: RunRecord, source: Path | None) -> None:
    """The label, window, meta and dimensions: every string (keys too) keepable and within the limit."""
    stack: list[tuple[Any, str]] = [(record.label, "label"), (record.window, "window"), (record.meta, "meta")]
    stack.extend((d.value, f"dimensions.{name}") for name, d in record.dimensions.items())
    while stack:
        value, where = stack.pop()
        if isinstance(value, dict):
            stack.extend((k, f"{where} (key)") for k in value)
            stack.extend((v, f"{where}.{k}") for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(value))
        elif isinstance(value, str):
            if len(value) > MAX_STRING_CHARS:
                raise exceeded(
                    source,
                    f"a string of {len(value):,} characters is longer than",
                    f"{MAX_STRING_CHARS:,}",
                    where=where[:120],
                )
            why = _unkeepable(value)
            if why is not None:
                raise BadInput(source, why, where=where[:120])


def _check_spooled(table: str, cols: SpooledTable, source: Path | None) -> None:
    for name in cols.text:
        odd = {v: why for v in cols.text_values(name) if (why := _unkeepable(v)) is not None}
        rows = [i for i, v in enumerate(cols[name].tolist()) if v in odd] if odd else []  # (read only to say where)
        if rows:
            raise BadInput(source, odd[cols[name].tolist()[rows[0]]], where=f"{table}[{rows[0]}].{name}")


def _check_columns(table: str, cols: Any, source: Path | None) -> None:
    for name, arr in cols.items():
        arr = np.asarray(arr)
        if arr.dtype.kind == "U" and arr.size:
            # (a fixed-width array pads with NULs: one inside a string is a NUL before another character)
            codes = np.ascontiguousarray(arr).view(np.uint32).reshape(arr.size, -1)
            bad = (codes >= 0xD800) & (codes <= 0xDFFF)
            nul = (codes[:, :-1] == 0) & (codes[:, 1:] != 0)
            for found, why in (
                (bad, "a lone surrogate (not valid Unicode)"),
                (nul, "a NUL character (U+0000; not text a store can keep)"),
            ):
                rows = found.any(axis=1)
                if rows.any():
                    raise BadInput(source, f"string contains {why}", where=f"{table}[{int(np.argmax(rows))}].{name}")
        elif arr.dtype.kind == "O" and arr.size:  # text as shared objects: each distinct string checked once
            for value in set(arr.tolist()):
                why = _unkeepable(value) if isinstance(value, str) else None
                if why is not None:
                    row = arr.tolist().index(value)
                    raise BadInput(source, why, where=f"{table}[{row}].{name}")


def check_samples(record: RunRecord) -> None:
    """The lens's check of what a sample means (DESIGN section 9), on what any importer read
    (built in, a plug-in, ``--map``): invalid samples are marked in place (a failed request,
    a value outside its plausible range kept as unknown) and the findings kept in
    ``meta["sample_check"]``, which ``wb import``, ``wb show`` and ``wb compare`` print."""
    try:
        lens = builtin_lens(record.lens)
    except KeyError:
        return  # a lens nothing here provides: no comparison can read the run either
    where = record.sources[0] if record.sources else None
    try:
        found = lens.check_samples(record)
    except Exception as exc:  # noqa: BLE001 - a plug-in lens's check failing is one line, never a traceback
        raise BadInput(where, f"the {record.lens} lens's sample check failed: {type(exc).__name__}: {exc}") from None
    if found:
        record.meta["sample_check"] = [msgspec.to_builtins(f) for f in found]
    else:
        record.meta.pop("sample_check", None)


@dataclass
class ReadResult:
    """What was read, before anything is written."""

    captures: list[Any] = field(default_factory=list)  # CaptureInfo of new files
    runs: list[RunRecord] = field(default_factory=list)
    existing: dict[Path, int] = field(default_factory=dict)  # known files that new runs use -> capture id
    stored: dict[Path, int] = field(default_factory=dict)  # known files not read again -> capture id
    report: ImportReport = field(default_factory=ImportReport)


def read_files(
    paths: Sequence[Path],
    options: ImportOptions | None = None,
    *,
    known_capture: Callable[[str], tuple[int, str] | None] = lambda _d: None,
    known_size: Callable[[int], bool] = lambda _size: True,
    dims: "dict[str, str] | FolderDimensions | None" = None,
) -> ReadResult:
    """Read everything (no store writes).

    ``known_capture(sha256)`` gives (capture id, why) for a file already in the store;
    ``known_size(size)`` whether a stored file has that size (by default: assume one may,
    and hash every file before reading it).
    A group of files whose importer reads them together (rank traces, a sacct file and
    its sinfo) is read whole when any of its files is new, so a companion imported
    before still informs the new run; runs made only of known files are dropped.
    """
    options = options or ImportOptions()
    folder = dims if isinstance(dims, FolderDimensions) else FolderDimensions(dims)
    with Unpacked() as unpacked:  # the members of archives, read as files, named ARCHIVE/MEMBER
        try:
            return _read_files(paths, options, known_capture, known_size, folder, unpacked)
        except BadInput as exc:
            raise unpacked.rename(exc) from None


def _read_files(
    paths: Sequence[Path],
    options: ImportOptions,
    known_capture: Callable[[str], tuple[int, str] | None],
    known_size: Callable[[int], bool],
    folder: FolderDimensions,
    unpacked: Unpacked,
) -> ReadResult:
    result = ReadResult()
    report = result.report
    seen: dict[str, Path] = {}
    groups: dict[str, list[tuple[Path, Any]]] = {}
    importers: dict[str, Importer] = {}
    known: dict[Path, tuple[int, str]] = {}
    files = unpacked.expand(expand_paths(paths, report.skipped), report.skipped)
    digests = _digests_first(files, options, known_size)
    for path in files:
        sha = ""  # taken while the file is read (its size is new)
        if path in digests:
            sha = digests[path][0]
            if sha in seen:
                report.skipped.append((path, f"same content as {unpacked.shown(seen[sha])}"))
                continue
            seen[sha] = path
            hit = known_capture(sha)
            if hit:
                known[path] = hit
        importer = _importer_for(path, options, folder.params_for(unpacked.archive_of.get(path, path)))
        importers[importer.name] = importer
        groups.setdefault(importer.name, []).append(
            (
                path,
                CaptureInfo(
                    path=path,
                    sha256=sha,
                    size=digests[path][1] if path in digests else 0,
                    format=importer.name,
                    importer=importer.name,
                    importer_version=importer.version,
                ),
            )
        )
    for name, items in groups.items():
        group_paths = [p for p, _ in items]
        if all(p in known for p in group_paths):  # nothing new: do not read at all
            report.skipped.extend((p, known[p][1]) for p in group_paths)
            result.stored.update((p, known[p][0]) for p in group_paths)
            continue
        records, found = _read_group(importers[name], group_paths, digests, options, folder, unpacked)
        items = _digested(items, digests, found)
        used: set[Path] = set()
        for record in records:
            if not record.sources:
                if len(group_paths) != 1:
                    raise RuntimeError(f"importer {name} produced a run without naming its source files")
                record.sources = list(group_paths)
            if all(src in known for src in record.sources):
                continue  # this run was imported before
            check_samples(record)
            beside: Path = unpacked.archive_of.get(record.sources[0], record.sources[0])  # a wb.toml beside an archive
            declared = folder.for_source(beside)
            if declared:
                apply_declared_dimensions(record, declared, partial(_origin, folder, beside))
            check_text(record)
            used.update(record.sources)
            result.runs.append(record)
        for path, info in items:
            if path not in known:
                result.captures.append(info)
            elif path in used:
                result.existing[path] = known[path][0]
            else:
                report.skipped.append((path, known[path][1]))
                result.stored[path] = known[path][0]
    return _shown(result, unpacked) if unpacked.shown_as else result


def _read_group(
    importer: Importer,
    group_paths: list[Path],
    digests: dict[Path, Digest],
    options: ImportOptions,
    folder: FolderDimensions,
    unpacked: Unpacked,
) -> tuple[list[RunRecord], dict[Path, Digest]]:
    """The runs of one importer's files (by the folder parameters each one's folder states), and the digests
    taken while reading those not hashed before; a reader's error is bad input naming the file."""
    try:
        with watching([p for p in group_paths if p not in digests]) as watch:
            records = [
                r
                for part, part_options in _by_folder_params(
                    importer, group_paths, options, folder, lambda p: unpacked.archive_of.get(p, p)
                )
                for r in importer.read(part, part_options)
            ]
    except BadInput:
        raise
    except UnicodeDecodeError as exc:  # text that is not UTF-8: bad input, whichever reader met it
        raise BadInput(
            group_paths[0] if len(group_paths) == 1 else None,
            f"not valid UTF-8 text (byte 0x{exc.object[exc.start]:02x}: {exc.reason})",
        ) from None
    except READ_ERRORS as exc:
        raise BadInput(
            group_paths[0] if len(group_paths) == 1 else None, f"corrupt or truncated input ({exc})"
        ) from None
    return records, watch.found


def _digested(
    items: list[tuple[Path, Any]], first: dict[Path, Digest], read: dict[Path, Digest]
) -> list[tuple[Path, Any]]:
    """The captures of a group once read, with their digests: taken before the read, while
    reading, or now (a reader that did not stream a file whole); each file still the one
    hashed (the bytes parsed are the bytes hashed)."""
    done = []
    for path, info in items:
        sha, size, identity = first.get(path) or read.get(path) or digest_file(path)
        check_unchanged(path, identity)
        done.append((path, replace(info, sha256=sha, size=size)))
    return done


def _digests_first(files: list[Path], options: ImportOptions, known_size: Callable[[int], bool]) -> dict[Path, Digest]:
    """The files to hash before they are read: one that may be a stored capture (a stored one
    has its size) or the same content as another of this import (they share a size), and every
    rank file of a cluster import (``training.cluster``: its workers' digests must match)."""
    if options.rank_executor is not None:
        return options.rank_executor.digests(files, digest_file)
    sizes = {path: file_size(path) for path in files}
    shared = Counter(sizes.values())
    return {path: digest_file(path) for path in files if shared[sizes[path]] > 1 or known_size(sizes[path])}


def _shown(result: ReadResult, unpacked: Unpacked) -> ReadResult:
    """Every unpacked copy named as the user knows it (``ARCHIVE/MEMBER``): captures, sources, reports."""
    shown = unpacked.shown
    result.captures = [replace(info, path=shown(info.path)) for info in result.captures]
    for run in result.runs:
        run.sources = [shown(p) for p in run.sources]
    result.existing = {shown(p): v for p, v in result.existing.items()}
    result.stored = {shown(p): v for p, v in result.stored.items()}
    result.report.skipped = [(shown(p), why) for p, why in result.report.skipped]
    return result


def _origin(folder: FolderDimensions, source: Path, name: str) -> str:
    return folder.origin(source, name)


def _importer_for(path: Path, options: ImportOptions, folder_params: dict[str, object]) -> Importer:
    """The importer of ``path``: ``--map`` reads every file named; else detection by content, and
    a folder's ``[map]`` (its ``wb.toml``) for a file no importer takes."""
    if options.params.get("map"):
        return MAPPED
    try:
        return detect(path)[0]
    except UnknownFormat:
        if folder_params.get("map"):
            return MAPPED
        raise


def _by_folder_params(
    importer: Any,
    paths: list[Path],
    options: ImportOptions,
    folder: FolderDimensions,
    beside: Callable[[Path], Path] = lambda p: p,
) -> list[tuple[list[Path], ImportOptions]]:
    """``paths`` split by the import parameters their ``wb.toml`` gives this importer
    (``[sacct] fields``), each part with its options; the command line wins over a file."""
    declared = {option.param for option in getattr(importer, "options", ())}
    parts: dict[tuple[tuple[str, Any], ...], list[Path]] = {}
    for path in paths:
        given = {
            k: v for k, v in folder.params_for(beside(path)).items() if k in declared and options.params.get(k) is None
        }
        parts.setdefault(tuple(sorted(given.items())), []).append(path)
    return [
        (part, replace(options, params={**options.params, **dict(given)}) if given else options)
        for given, part in parts.items()
    ]


def import_files(
    store: "Store",
    paths: Sequence[Path | str],
    options: ImportOptions | None = None,
    *,
    dims: "dict[str, str] | FolderDimensions | None" = None,
    origin: str = "import",
) -> ImportReport:
    """Import ``paths`` (files or directories) into ``store`` in one transaction."""

    def known(sha: str) -> tuple[int, str] | None:
        capture = store.find_capture(sha)
        if capture is None:
            return None
        runs = store.capture_runs(int(capture.id))
        listed = ", ".join(map(str, runs)) or "none"
        return int(capture.id), f"already imported (capture {capture.id}, runs {listed}); nothing added"

    folder = dims if isinstance(dims, FolderDimensions) else FolderDimensions(dims)
    for attempt in range(2):
        read = read_files(
            [Path(p) for p in paths], options, known_capture=known, known_size=store.has_capture_of_size, dims=folder
        )
        report = read.report
        declare_on_stored(store, read, folder)
        if read.runs:
            stored = {r.label: r.id for r in store.list_runs()}
            if not (options and options.label):
                distinguish_labels(read.runs, set(stored))
            refuse_look_alike_labels(read.runs, stored)
        if not read.runs and not read.captures:
            return report
        try:
            run_ids = store.add_import(read.captures, read.runs, origin=origin, existing=read.existing)
            break
        except DuplicateCapture:
            if attempt:
                raise
            # A concurrent import stored one of these files first (nothing of ours was
            # written): read again, and the digest check now says "already imported".
    report.run_ids = run_ids

    def runs_of(path: Path) -> list[int]:
        return [r.id for r in read.runs if path in r.sources]  # type: ignore[misc]

    report.imported = [(info.path, runs_of(info.path)) for info in read.captures]
    report.notes = [(r.id, list(r.typed_meta.notes)) for r in read.runs if r.id is not None and r.typed_meta.notes]
    report.linked = [(path, runs_of(path)) for path in read.existing]
    return report


def declare_on_stored(store: "Store", read: ReadResult, folder: FolderDimensions) -> None:
    """Files already stored, imported again with ``--dim`` or a ``wb.toml``: the
    declarations go on their runs (``wb declare``'s rules and history) instead of
    "nothing added"."""
    report = read.report
    for path, capture_id in read.stored.items():
        dims = folder.for_source(path)
        run_ids = store.capture_runs(capture_id)
        if not dims or not run_ids:
            continue
        origins = ", ".join(sorted({folder.origin(path, name) for name in dims}))
        done = declare_dimensions(store, run_ids, dims, why=f"declared at a new import of {path.name} ({origins})")
        report.declared.append((path, done))
        report.skipped = [(p, why) for p, why in report.skipped if p != path]


def refuse_look_alike_labels(runs: Sequence[RunRecord], stored: dict[str, int]) -> None:
    """Bad input when a new run's label differs from a stored or another new label but looks
    the same (``cand`` and ``cand\\u00ad``, ``ｃａｎｄ``, ``cand ``: :func:`look_alike_form`): a
    reviewer could not tell the runs apart. The same label again is allowed (a word naming
    both is refused, with their ids)."""
    by_form: dict[str, dict[str, str]] = {}  # form -> label -> who has it
    for label, run_id in stored.items():
        by_form.setdefault(look_alike_form(label), {}).setdefault(label, f"run {run_id}")
    for run in runs:
        source = run.sources[0] if run.sources else None
        alike = by_form.setdefault(look_alike_form(run.label), {})
        other = next((label for label in alike if label != run.label), None)
        if other is not None:
            raise BadInput(
                source,
                f"label {run.label!r} looks like the label {other!r} of {alike[other]} (they differ only by "
                "invisible characters, spacing or compatibility forms); give another with --label",
                where="label",
            )
        alike.setdefault(run.label, f"the run from {source.name}" if source else "another run of this import")


def distinguish_labels(runs: Sequence[RunRecord], taken: set[str]) -> None:
    """Runs from different files that would share a label (with each other or with a
    stored run) get the file's name after it, or its folder and name when the names
    match too: two files imported without --label never look alike in 'wb runs'."""

    def source(run: RunRecord) -> Path | None:
        return run.sources[0] if run.sources else None

    counts = Counter(r.label for r in runs)
    files: dict[str, set[Path | None]] = {}
    for r in runs:
        files.setdefault(r.label, set()).add(source(r))
    for r in runs:
        if r.label not in taken and (counts[r.label] < 2 or len(files[r.label]) < 2):
            continue
        path = source(r)
        if path is None:
            continue
        names = {p.name for p in files[r.label] if p is not None}
        hint = path.name if len(names) == len(files[r.label]) else f"{path.parent.name}/{path.name}"
        r.label = f"{r.label} ({hint})"
