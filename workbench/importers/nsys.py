"""Nsight Systems SQLite exports (``nsys export --type sqlite``), one report per rank.

The export schema drifts between releases, so the export metadata is read first
(``META_DATA_EXPORT``, or ``EXPORT_META_DATA`` before 2024) and only schema major
version 3 is accepted: NVIDIA's export notes mark a major bump as breaking for a
significant share of queries, and the ``.nsys-rep`` report, not its export, is the
forward-compatible file, so an older export (schema 2.x) is refused with the table it
has and the ``nsys export`` command that writes schema 3 from its report. Every column
is checked with ``PRAGMA table_info`` before it is used, and tables that were not
captured are simply absent (their columns are then unknown, not zero). Names are ids
into ``StringIds``. Times are integer nanoseconds on the report's own session timebase,
so ranks from different reports are not on one clock. Steps are NVTX ranges
(``ProfilerStep#N``, ``step N``, ``iteration N``, or the ``step_pattern`` import
parameter). The rank and world size come from the profiled process's
``RANK``/``WORLD_SIZE`` environment, when the report recorded it.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
import numpy as np

from store.records import RunRecord
from workbench.errors import BadInput
from workbench.importers.base import Importer, ImporterOption, ImportOptions, Probe, open_regular
from workbench.limits import MAX_STRING_CHARS, SQL_STEPS_PER_BYTE, exceeded, size_text
from workbench.textsafe import clean
from workbench.training import model as m
from workbench.training.job import WARMUP_STEPS, build_job
from workbench.training.parallel import JOBS, read_each

SQLITE_MAGIC = b"SQLite format 3\x00"
SUPPORTED_MAJOR = 3
_CHUNK = 200_000
DEFAULT_STEP_PATTERN = r"^(?:ProfilerStep#|(?:train[_ ]?)?step[ _#:]*|iter(?:ation)?[ _#:]*)(\d+)$"
_NVTX_RANGES = (59, 60)  # PushPopRange, StartEndRange
# The tables this reader queries.
_READ = frozenset(
    {
        "META_DATA_EXPORT",
        "EXPORT_META_DATA",
        "META_DATA_CAPTURE",
        "StringIds",
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        "ENUM_CUDA_MEMCPY_OPER",
        "NVTX_EVENTS",
        "TARGET_INFO_GPU",
    }
)


class NsysImporter(Importer):
    name = "nsys"
    version = "1"
    description = "Nsight Systems SQLite export (nsys export --type sqlite), one report per rank"
    priority = 30
    options = (
        WARMUP_STEPS,
        ImporterOption(
            "step_pattern",
            "--step-pattern",
            "NVTX range name (a regular expression) that marks a step in Nsight exports.",
            metavar="REGEX",
        ),
        JOBS,
    )

    def sniff(self, probe: Probe) -> bool:
        head = probe.head
        if not head.startswith(SQLITE_MAGIC) or b"StringIds" not in head:
            return False
        return any(
            marker in head
            for marker in (
                b"CUPTI_ACTIVITY_KIND",
                b"NVTX_EVENTS",
                b"TARGET_INFO_",
                b"META_DATA_EXPORT",
                b"EXPORT_META_DATA",
            )
        )

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        jobs: dict[Path, list[Path]] = {}
        for path in paths:
            jobs.setdefault(path.parent, []).append(path)
        for _directory, files in sorted(jobs.items()):
            ranks = read_each(read_report, files, options)
            yield build_job(ranks, options, format_name="Nsight Systems SQLite export")


IMPORTER = NsysImporter()


_PROGRESS_EVERY = 100_000  # SQLite VM steps between checks of the budget
# One string or blob SQLite may produce (a kernel name, an NVTX text): it refuses longer
# ones itself (SQLITE_LIMIT_LENGTH), whether stored or computed.
MAX_VALUE_BYTES = MAX_STRING_CHARS * 4
# Timestamps are integer ns: beyond 2^62 (146 years) a difference of two wraps int64.
MAX_TIMESTAMP = 1 << 62
# What this reader's own queries ask of SQLite; anything else (a function a view or a
# trigger would run, a recursive CTE) is refused by the authorizer.
_ALLOWED_FUNCTIONS = frozenset({"coalesce", "like"})
_ALLOWED_PRAGMAS = frozenset({"table_info", "table_xinfo"})


class _Authorizer:
    """SQLite's authorizer for an untrusted export: reads of tables and the few pragmas
    and functions this reader uses, nothing else. The first refusal is kept for the message."""

    def __init__(self) -> None:
        self.refused: str | None = None

    def __call__(self, action: int, arg1: str | None, arg2: str | None, _db: str | None, source: str | None) -> int:
        if action in (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ) and source is None:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in _ALLOWED_PRAGMAS:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _ALLOWED_FUNCTIONS and source is None:
            return sqlite3.SQLITE_OK
        if self.refused is None:
            what = f"the function {arg2}()" if action == sqlite3.SQLITE_FUNCTION else f"SQLite action {action}"
            self.refused = what + (f" (from {source})" if source else "")
        return sqlite3.SQLITE_DENY


def read_report(path: Path, options: ImportOptions | None = None) -> m.RankTrace:
    options = options or ImportOptions()
    with open_regular(path) as f:  # a FIFO or device is refused before SQLite sees it
        size = os.fstat(f.fileno()).st_size
    try:
        con = sqlite3.connect(f"file:{path.resolve()}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as exc:
        raise BadInput(path, f"cannot open as SQLite ({exc})") from None
    # Work bounded by the file's size: a query that runs on (a crafted view, a join
    # without an index) is stopped, not waited for.
    budget = max(1, SQL_STEPS_PER_BYTE * size // _PROGRESS_EVERY)
    calls = [0]

    def progress() -> int:
        calls[0] += 1
        return 1 if calls[0] > budget else 0

    con.set_progress_handler(progress, _PROGRESS_EVERY)
    # The step budget bounds how many steps, not what one step builds (printf('%.*c', 9e8,
    # 'x') is one step): each value is capped, and SQLite may only read tables.
    con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    authorizer = _Authorizer()
    con.set_authorizer(authorizer)
    try:
        return _Report(path, con, options).read()
    except sqlite3.DataError as exc:
        if "too big" in str(exc):
            raise exceeded(path, "holds a string or blob longer than", size_text(MAX_VALUE_BYTES)) from None
        raise BadInput(path, f"corrupt or truncated SQLite export ({exc})") from None
    except sqlite3.DatabaseError as exc:
        if calls[0] > budget:
            raise exceeded(
                path,
                "reading the export takes more work than",
                f"{SQL_STEPS_PER_BYTE} SQLite steps per byte of the file",
            ) from None
        if authorizer.refused:
            raise BadInput(
                path, f"asks SQLite to run {authorizer.refused}; an nsys export holds data, not code: refused"
            ) from None
        raise BadInput(path, f"corrupt or truncated SQLite export ({exc})") from None
    finally:
        con.close()


class _Report:
    def __init__(self, path: Path, con: sqlite3.Connection, options: ImportOptions) -> None:
        self.path = path
        self.con = con
        self.options = options
        self.tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        views = sorted(
            row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'view'") if row[0] in _READ
        )
        if views:  # nsys writes tables; a view can compute without end (a recursive CTE)
            raise BadInput(
                path, f"{views[0]} is a view, not a table: an nsys export holds its data in tables", where=views[0]
            )
        self.names = m.Names()
        self._strings: dict[int, str] | None = None

    # -- schema ---------------------------------------------------------------------------

    def columns(self, table: str) -> set[str]:
        if table not in self.tables:
            return set()
        rows = list(self.con.execute(f'PRAGMA table_xinfo("{table}")'))
        generated = [row[1] for row in rows if row[6] in (2, 3)]  # hidden: 2 virtual, 3 stored generated
        if generated:  # computed on every read (hex(zeroblob(n))): nsys writes plain columns
            raise BadInput(
                self.path,
                f"column {generated[0]} is a generated column (an expression, not data); refused",
                where=table,
            )
        return {row[1] for row in rows}

    def need(self, table: str, cols: tuple[str, ...]) -> bool:
        """True when ``table`` exists with ``cols``; a table with some of them missing is an error."""
        have = self.columns(table)
        if not have:
            return False
        missing = [c for c in cols if c not in have]
        if missing:
            raise BadInput(self.path, f"export schema lacks column(s) {', '.join(missing)}", where=table)
        return True

    def export_meta(self) -> tuple[str, dict[str, str]]:
        """The export metadata table's name and its rows."""
        for table in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
            if table in self.tables:
                return table, {str(k): str(v) for k, v in self.con.execute(f'SELECT name, value FROM "{table}"')}
        raise BadInput(
            self.path,
            "no export metadata table (META_DATA_EXPORT or EXPORT_META_DATA): not an nsys export, or one too old to "
            "trust",
        )

    def strings(self) -> dict[int, str]:
        if self._strings is None:
            self._strings = {}
            if "StringIds" in self.tables:
                self.need("StringIds", ("id", "value"))
                for i, v in self.con.execute("SELECT id, value FROM StringIds"):
                    if type(i) is not int:
                        raise BadInput(self.path, f"a string id is not an integer ({_shown(i)})", where="StringIds.id")
                    self._strings[i] = "" if v is None else str(v)
        return self._strings

    def rows(self, sql: str, table: str, columns: tuple[str, ...]) -> Iterator[np.ndarray]:
        cur = self.con.execute(sql)
        while True:
            chunk = cur.fetchmany(_CHUNK)
            if not chunk:
                return
            try:
                yield np.array(chunk, dtype=np.int64)
            except (ValueError, TypeError, OverflowError):
                raise self._not_integer(chunk, table, columns) from None

    def _not_integer(self, chunk: list[tuple], table: str, columns: tuple[str, ...]) -> BadInput:
        """The first value of ``chunk`` that is not an int64 (text, NULL, a real), named."""
        for row in chunk:
            for col, value in zip(columns, row):
                if type(value) is not int or not -(1 << 63) <= value < (1 << 63):
                    return BadInput(self.path, f"{col} must be an integer, not {_shown(value)}", where=table)
        return BadInput(self.path, "a value is not an integer", where=table)

    def int_table(self, table: str, columns: tuple[str, ...], select: str | None = None) -> np.ndarray:
        """``columns`` of ``table`` as int64 rows (``select``: the SELECT list, when not plain column names)."""
        sql = f'SELECT {select or ", ".join(f"{chr(34)}{c}{chr(34)}" for c in columns)} FROM "{table}"'
        parts = list(self.rows(sql, table, columns))
        return np.concatenate(parts) if parts else np.zeros((0, len(columns)), dtype=np.int64)

    # -- reading ---------------------------------------------------------------------------

    def read(self) -> m.RankTrace:
        table, meta = self.export_meta()
        version = meta.get("EXPORT_SCHEMA_VERSION", "")
        major = meta.get("EXPORT_SCHEMA_VERSION_MAJOR") or version.split(".")[0]
        if not major.isdigit() or int(major) != SUPPORTED_MAJOR:
            raise BadInput(self.path, _unsupported(version, major), where=f"{table}.EXPORT_SCHEMA_VERSION")
        env = self.process_env()
        rank = _env_int(env, "RANK")
        world = _env_int(env, "WORLD_SIZE")
        trace = m.RankTrace(source=self.path, rank=rank, world_size=world, names=self.names.values, clock="session")
        trace.gpu = self.gpu_activity()
        trace.runtime = self.runtime()
        self.nvtx(trace)
        trace.has_host_api = len(trace.runtime["start"]) > 0
        trace.devices = self.devices(trace.gpu["device"])
        trace.meta = {
            "nsys_version": meta.get("EXPORT_PRODUCT_VERSION", ""),
            "export_schema": version,
            "timestamps": "integer ns on the report's session timebase",
            "rank_from": "RANK environment variable" if rank is not None else "unknown",
        }
        if any(trace.names[i].startswith("aten::") for i in np.unique(trace.ops["name"])):
            trace.framework = "PyTorch"
        return trace

    def process_env(self) -> dict[str, str]:
        if "META_DATA_CAPTURE" not in self.tables:
            return {}
        env: dict[str, str] = {}
        for _name, value in self.con.execute(
            "SELECT name, value FROM META_DATA_CAPTURE WHERE name LIKE '%ENVIRONMENT_VARIABLE'"
        ):
            key, sep, val = str(value).partition("=")
            if sep and key in ("RANK", "WORLD_SIZE"):
                env[key] = val.strip().strip('"')
        return env

    def gpu_activity(self) -> dict[str, np.ndarray]:
        parts: list[tuple[np.ndarray, int, np.ndarray]] = []  # (rows, base kind, name ids)
        strings = self.strings()
        kernel_cols = self.columns("CUPTI_ACTIVITY_KIND_KERNEL")
        if kernel_cols:
            name_col = "demangledName" if "demangledName" in kernel_cols else "shortName"
            self.need(
                "CUPTI_ACTIVITY_KIND_KERNEL",
                ("start", "end", "deviceId", "streamId", "correlationId", "globalPid", name_col),
            )
            rows = self.int_table(
                "CUPTI_ACTIVITY_KIND_KERNEL",
                ("start", "end", "deviceId", "streamId", "correlationId", "globalPid", name_col),
            )
            uniq, inverse = np.unique(rows[:, 6], return_inverse=True)
            texts = [strings.get(int(sid), f"<string {sid}>") for sid in uniq]
            name_ids = np.array([self.names.id(t) for t in texts], dtype=np.int32)[inverse]
            kernel_kinds = np.array(
                [m.COLLECTIVE if m.is_communication_kernel(t) else m.KERNEL for t in texts], dtype=np.int8
            )[inverse]
            parts.append((rows, -1, name_ids))
        else:
            kernel_kinds = np.zeros(0, dtype=np.int8)
        copy_labels = self.memcpy_labels()
        for table, kind in (("CUPTI_ACTIVITY_KIND_MEMCPY", m.MEMCPY), ("CUPTI_ACTIVITY_KIND_MEMSET", m.MEMSET)):
            cols = self.columns(table)
            if not cols:
                continue
            extra = "copyKind" if kind == m.MEMCPY and "copyKind" in cols else "0"
            self.need(table, ("start", "end", "deviceId", "streamId", "correlationId", "globalPid"))
            rows = self.int_table(
                table,
                ("start", "end", "deviceId", "streamId", "correlationId", "globalPid", extra),
                select=f'start, "end", deviceId, streamId, correlationId, globalPid, {extra}',
            )
            if kind == m.MEMCPY:
                ids = np.array(
                    [self.names.id(f"Memcpy {copy_labels.get(int(k), 'Unknown')}") for k in rows[:, 6]], dtype=np.int32
                )
            else:
                ids = np.full(len(rows), self.names.id("Memset"), dtype=np.int32)
            parts.append((rows, kind, ids))
        if not parts:
            return m.empty_gpu()
        rows = np.concatenate([p[0] for p in parts])
        kind = np.concatenate([kernel_kinds if p[1] == -1 else np.full(len(p[0]), p[1], dtype=np.int8) for p in parts])
        names = np.concatenate([p[2] for p in parts])
        _check_times(self.path, rows[:, 0], rows[:, 1], "CUPTI_ACTIVITY_KIND_*")
        if np.any(rows[:, 1] < rows[:, 0]):
            bad = int(np.flatnonzero(rows[:, 1] < rows[:, 0])[0])
            raise BadInput(
                self.path,
                f"an activity ends before it starts (start {rows[bad, 0]}, end {rows[bad, 1]})",
                where="CUPTI_ACTIVITY_KIND_*",
            )
        return {
            "start": rows[:, 0].copy(),
            "end": rows[:, 1].copy(),
            "kind": kind,
            "stream": rows[:, 3].copy(),
            "correlation": _process_correlation(rows[:, 5], rows[:, 4]),
            "name": names,
            "device": rows[:, 2].copy(),
        }

    def memcpy_labels(self) -> dict[int, str]:
        if "ENUM_CUDA_MEMCPY_OPER" not in self.tables:
            return {}
        short = {"HTOD": "HtoD", "DTOH": "DtoH", "DTOD": "DtoD", "HTOH": "HtoH", "PTOP": "PtoP"}
        out = {}
        for ident, name, label in self.con.execute("SELECT id, name, label FROM ENUM_CUDA_MEMCPY_OPER"):
            tail = str(name).rsplit("_", 1)[-1]
            out[int(ident)] = short.get(tail, str(label))
        return out

    def runtime(self) -> dict[str, np.ndarray]:
        if not self.need("CUPTI_ACTIVITY_KIND_RUNTIME", ("start", "end", "globalTid", "correlationId", "nameId")):
            return m.empty_runtime()
        rows = self.int_table("CUPTI_ACTIVITY_KIND_RUNTIME", ("start", "end", "globalTid", "correlationId", "nameId"))
        _check_times(self.path, rows[:, 0], rows[:, 1], "CUPTI_ACTIVITY_KIND_RUNTIME")
        strings = self.strings()
        ids = {int(s): self.names.id(strings.get(int(s), f"<string {s}>")) for s in np.unique(rows[:, 4])}
        names = np.array([ids[int(s)] for s in rows[:, 4]], dtype=np.int32)
        return {
            "start": rows[:, 0].copy(),
            "end": rows[:, 1].copy(),
            "correlation": _process_correlation(rows[:, 2], rows[:, 3]),
            "name": names,
        }

    def _nvtx_class(self, name: str, pattern: re.Pattern[str]) -> tuple[int, int | None, int]:
        """A range name's id, the step number it names (``--step-pattern``) and its class: 1 a loader wait,
        2 a checkpoint, 0 any other operation."""
        found = pattern.match(name)
        number = found.group(1) if found and found.groups() else None
        if number is not None and not (number.isascii() and number.isdigit() and len(number) <= 18):
            raise BadInput(
                self.path, f"step number in {_shown(name)} is not a decimal of at most 18 digits", where="NVTX_EVENTS"
            )
        return (
            self.names.id(name),
            int(number) if number is not None else None,
            1 if m.is_loader_wait(name) else 2 if m.is_checkpoint(name) else 0,
        )

    def _bad_range_time(self, start: object, end: object, name: str) -> BadInput:
        bad = start if type(start) is not int or not 0 <= start <= MAX_TIMESTAMP else end
        return BadInput(
            self.path,
            f"an NVTX range's time must be integer ns from 0 to 2^62, not {_shown(bad)} ({_shown(name)})",
            where="NVTX_EVENTS",
        )

    def nvtx(self, trace: m.RankTrace) -> None:
        cols = self.columns("NVTX_EVENTS")
        if not cols:
            return
        self.need("NVTX_EVENTS", ("start", "end", "eventType"))
        text = (
            "COALESCE(n.text, s.value)" if {"text", "textId"} <= cols else ("n.text" if "text" in cols else "s.value")
        )
        join = "LEFT JOIN StringIds s ON s.id = n.textId" if "textId" in cols else ""
        pattern = re.compile(str(self.options.params.get("step_pattern") or DEFAULT_STEP_PATTERN), re.IGNORECASE)
        steps, ops, loader, ckpt = (
            m.Columns(number="q", start="q", end="q"),
            m.Columns(start="q", end="q", name="l"),
            m.Columns(start="q", end="q"),
            m.Columns(start="q", end="q"),
        )
        classes: dict[str, tuple[int, int | None, int]] = {}
        sql = (
            f'SELECT n.start, n."end", {text} FROM NVTX_EVENTS n {join} WHERE n.eventType IN {_NVTX_RANGES} AND '
            f'n."end" IS NOT NULL'
        )
        cur = self.con.execute(sql)
        while chunk := cur.fetchmany(_CHUNK):
            for start, end, name in chunk:
                name = "" if name is None else str(name)
                got = classes.get(name)
                if got is None:
                    got = classes[name] = self._nvtx_class(name, pattern)
                name_id, step, cls = got
                if (
                    type(start) is not int
                    or type(end) is not int
                    or not 0 <= start <= MAX_TIMESTAMP
                    or not 0 <= end <= MAX_TIMESTAMP
                ):
                    raise self._bad_range_time(start, end, name)
                if end < start:
                    raise BadInput(self.path, f"an NVTX range ends before it starts ({name!r})", where="NVTX_EVENTS")
                if step is not None:
                    steps.number.append(step)
                    steps.start.append(start)
                    steps.end.append(end)
                    continue
                ops.start.append(start)
                ops.end.append(end)
                ops.name.append(name_id)
                if cls == 1:
                    loader.start.append(start)
                    loader.end.append(end)
                elif cls == 2:
                    ckpt.start.append(start)
                    ckpt.end.append(end)
        trace.steps = steps.finish()
        trace.ops = ops.finish()
        trace.ops["name"] = trace.ops["name"].astype(np.int32)
        trace.loader = loader.finish()
        trace.checkpoint = ckpt.finish()
        trace.has_loader_annotations = len(trace.loader["start"]) > 0
        trace.has_checkpoint_annotations = len(trace.checkpoint["start"]) > 0

    def devices(self, used: np.ndarray) -> list[str]:
        cols = self.columns("TARGET_INFO_GPU")
        if not {"id", "name"} <= cols:
            return []
        by_id = {int(i): str(n).strip() for i, n in self.con.execute("SELECT id, name FROM TARGET_INFO_GPU") if n}
        ids = {int(d) for d in np.unique(used)}
        named = sorted({by_id[d] for d in ids if d in by_id})
        return named or sorted(set(by_id.values()))


REEXPORT = "nsys export --type sqlite --force-overwrite true --output REPORT.sqlite REPORT.nsys-rep"


def _unsupported(version: str, major: str) -> str:
    """Why an export of another schema is refused, and the way forward."""
    shown = clean(version)[:40] if version else "?"
    if major.isdigit() and int(major) < SUPPORTED_MAJOR:
        return (
            f"export schema {shown} is older than the {SUPPORTED_MAJOR}.x this wb reads (a major version is a breaking "
            f"change); a current Nsight Systems re-exports the report (.nsys-rep, or .qdrep) at schema "
            f"{SUPPORTED_MAJOR}: {REEXPORT}"
        )
    return f"unsupported export schema version {shown} (this wb reads schema {SUPPORTED_MAJOR}.x)"


def _process_correlation(global_id: np.ndarray, correlation: np.ndarray) -> np.ndarray:
    """Correlation ids are unique per process: key them by the PID inside the global id."""
    pid = (global_id >> 24) & 0xFFFFFF
    return (pid << 40) | (correlation & ((1 << 40) - 1))


def _env_int(env: dict[str, str], key: str) -> int | None:
    value = env.get(key)
    return int(value) if value is not None and value.isascii() and value.isdigit() and len(value) <= 9 else None


def _check_times(path: Path, start: np.ndarray, end: np.ndarray, where: str) -> None:
    """Timestamps from 0 to 2^62 ns: a span of -2^63 .. 2^63-1 would wrap int64 when subtracted."""
    for col, values in (("start", start), ("end", end)):
        bad = (values < 0) | (values > MAX_TIMESTAMP)
        if bad.any():
            raise BadInput(
                path,
                f"{col} {int(values[np.flatnonzero(bad)[0]])} is outside 0 .. 2^62 ns "
                "(int64 arithmetic on it would wrap)",
                where=where,
            )


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
