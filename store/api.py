"""The store's interface: open it, write an import in one transaction, read runs back."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from store import columns
from store.engine import (
    SQLITE_PRAGMAS,
    connect_sqlite,
    default_data_dir,
    display_url,
    in_memory,
    make_engine,
    normalize_url,
    sqlite_path,
    writable,
)
from store.errors import (
    DuplicateCapture,
    EphemeralStore,
    ReadOnlyStore,
    RunNotFound,
    SchemaError,
    StoreDamaged,
    StoreError,
    StoreFull,
)
from store.records import SAMPLES, decimal_id, Dimension, RunRecord, Work, utcnow_iso
from store.schema import ABSENT, READY, SCHEMA_VERSION, apply, sqlalchemy_query, state
from store.schema import create as create_schema

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlmodel import Session


@dataclass(frozen=True)
class CaptureInfo:
    """A file about to be recorded as a capture (its provenance)."""

    path: Path
    sha256: str
    size: int
    format: str
    importer: str
    importer_version: str


@dataclass(frozen=True)
class RunSummary:
    id: int
    lens: str
    label: str
    dimensions: dict[str, Dimension]
    window: dict[str, Any]  # the stored window document (keys differ per importer), as RunRecord.window
    sample_count: int
    origin: str
    created_at: str

    def dimension_values(self) -> dict[str, object]:
        return {name: d.value for name, d in self.dimensions.items()}


class Store:
    """An open store. Reads of runs go through ``_read`` and imports through
    ``add_import``, both plain SQL (the standard library's sqlite3 for a SQLite file: no
    SQLAlchemy import); the SQLAlchemy engine and the ORM load on first use by the other
    writers (investigation records, declarations, ...) and to upgrade a store. A SQLite
    store that does not exist yet is created (atomically) by the first write, so reading
    or a failed import leaves no file behind."""

    def __init__(
        self,
        url: str,
        engine: "Engine | None" = None,
        *,
        path: Path | None = None,
        read_only: bool = False,
        absent: bool = False,
    ) -> None:
        self.url = url
        self.path = path  # the SQLite file, if this store is one
        self.read_only = read_only
        self._absent = absent
        self._engine = engine
        self.in_memory = in_memory(url)  # every write is refused: it would vanish with the process
        self._reading = threading.local()  # this thread's ``reading()``: its stack, and its query once opened

    def __repr__(self) -> str:
        return f"Store({display_url(self.url)!r})"

    @property
    def display_url(self) -> str:
        return display_url(self.url)

    @property
    def exists(self) -> bool:
        """False while a new SQLite store waits for its first write."""
        return not self._absent

    def ensure_exists(self) -> "Store":
        """Create the store now if it does not exist yet (any write does this first)."""
        if self._absent:
            if self.read_only:
                raise ReadOnlyStore(f"the store {self.display_url} is read-only and holds no wb store")
            _create_sqlite(self.path)  # type: ignore[arg-type]
            self._absent = False
        return self

    def refuse_in_memory(self) -> None:
        """Before a write: an in-memory store would report "imported" and then vanish."""
        if self.in_memory:
            raise EphemeralStore(
                f"the store {self.display_url} is in memory and vanishes when wb exits: nothing was written "
                "(name a file with --store PATH)"
            )

    @property
    def engine(self) -> "Engine":
        """The SQLAlchemy engine (made on first use; a store still to be created is created now)."""
        self.ensure_exists()
        if self._engine is None:
            self._engine = make_engine(self.url, read_only=self.read_only)
        return self._engine

    @contextmanager
    def session(self) -> Iterator["Session"]:
        """A session in one transaction: committed on success, rolled back on error."""
        from sqlalchemy import event  # loaded with SQLModel just above
        from sqlmodel import Session  # SQLModel: heavy, only for the ORM writers

        with Session(self.engine, expire_on_commit=False) as session:
            if self.in_memory:
                event.listen(session, "before_flush", lambda *_args: self.refuse_in_memory())
            try:
                yield session
                session.commit()
            except BaseException as exc:
                session.rollback()
                if _read_only(exc):
                    raise ReadOnlyStore(f"the store {self.display_url} is read-only: nothing was written") from None
                if isinstance(exc, Exception) and (fault := _store_fault(self, exc)) is not None:
                    raise fault from None
                raise

    @contextmanager
    def reading(self) -> Iterator[None]:
        """The reads made inside share one snapshot and one connection, opened by the first of
        them (a command that resolves and loads fifteen runs opens the store once, not forty-five
        times; one that reads nothing opens nothing)."""
        if getattr(self._reading, "stack", None) is not None:
            yield  # inside another reading(): its snapshot
            return
        with ExitStack() as stack:
            self._reading.stack = stack
            try:
                yield
            finally:
                self._reading.stack = self._reading.query = None

    @contextmanager
    def _read(self) -> Iterator[Callable[..., list[tuple[Any, ...]]]]:
        """``query(sql, params)`` in one read snapshot: the one ``reading`` holds, else a new one."""
        held = getattr(self._reading, "query", None)
        stack = getattr(self._reading, "stack", None)
        if held is None and stack is not None:  # the first read inside reading(): kept until it ends
            held = self._reading.query = stack.enter_context(self._open_read())
        if held is not None:
            yield held
            return
        with self._open_read() as query:
            yield query

    @contextmanager
    def _open_read(self) -> Iterator[Callable[..., list[tuple[Any, ...]]]]:
        """A read snapshot: sqlite3 for a SQLite file (no SQLAlchemy), the engine otherwise."""
        try:
            if self.path is not None and (self._engine is None or self.read_only):
                conn = connect_sqlite(self.path, read_only=self.read_only)
                try:
                    conn.execute("BEGIN")
                    yield lambda sql, params=None: conn.execute(sql, params or {}).fetchall()
                finally:
                    conn.close()
                return
            with self.engine.connect() as conn:
                yield sqlalchemy_query(conn)
        except StoreError:
            raise
        except Exception as exc:
            if (fault := _store_fault(self, exc)) is not None:  # a corrupt page, a missing table
                raise fault from None
            raise

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()

    # -- captures ---------------------------------------------------------------

    def find_capture(self, sha256: str) -> "CaptureRow | None":
        if self._absent:
            return None
        with self._read() as q:
            rows = q(f"SELECT {_CAPTURE_COLUMNS} FROM capture c WHERE c.sha256 = :sha", {"sha": sha256})
        return CaptureRow(*rows[0]) if rows else None

    def has_capture_of_size(self, size: int) -> bool:
        """Whether a stored capture has this many bytes: a file of another size cannot be one
        already imported, so its digest may be taken while it is read (``workbench.ingest``)."""
        if self._absent:
            return False
        with self._read() as q:
            return bool(q("SELECT 1 FROM capture c WHERE c.size = :size LIMIT 1", {"size": int(size)}))

    def capture_runs(self, capture_id: int) -> list[int]:
        if self._absent:
            return []
        with self._read() as q:
            return sorted(
                int(r[0]) for r in q("SELECT run_id FROM run_source WHERE capture_id = :c", {"c": capture_id})
            )

    def run_captures(self, run_id: int) -> list["CaptureRow"]:
        if self._absent:
            return []
        with self._read() as q:
            return [CaptureRow(*r) for r in q(_CAPTURES_OF_RUN, {"run": run_id})]

    # -- writing ----------------------------------------------------------------

    def add_import(
        self,
        captures: Sequence[CaptureInfo],
        runs: Sequence[RunRecord],
        *,
        origin: str = "import",
        existing: dict[Path, int] | None = None,
    ) -> list[int]:
        """Record ``captures`` and ``runs`` in one transaction; returns the new run ids.

        Each run's ``sources`` must name paths among ``captures`` or in ``existing``
        (files already in the store, by capture id). Either everything is written or
        nothing is. Plain SQL, no ORM: the standard library's sqlite3 for a SQLite file
        (no SQLAlchemy import), SQLAlchemy Core otherwise. Columns go in one at a time:
        streamed into SQLite (no copy of a whole column), one ``.npy`` blob at a time elsewhere.
        """
        self.refuse_in_memory()
        self.ensure_exists()
        if self.path is not None:
            return self._add_import_sqlite(captures, runs, origin, existing)
        from sqlalchemy import text  # SQLAlchemy: heavy, only for a server store

        json_param = "CAST(:{} AS JSON)" if self.engine.dialect.name == "postgresql" else ":{}"
        try:
            with self.engine.begin() as conn:
                return _write_import(
                    lambda sql, params: _first(conn.execute(text(sql), params)),
                    json_param,
                    captures,
                    runs,
                    origin,
                    existing,
                )
        except _Conflict as exc:
            raise exc.duplicate from None
        except Exception as exc:
            if _read_only(exc):
                raise ReadOnlyStore(f"the store {self.display_url} is read-only: nothing was written") from None
            if (fault := _store_fault(self, exc)) is not None:  # disk full: rolled back, nothing lost
                raise fault from None
            raise

    def _add_import_sqlite(
        self, captures: Sequence[CaptureInfo], runs: Sequence[RunRecord], origin: str, existing: dict[Path, int] | None
    ) -> list[int]:
        if self.read_only:
            raise ReadOnlyStore(f"the store {self.display_url} is read-only: nothing was written")
        conn = connect_sqlite(self.path)  # type: ignore[arg-type]
        try:
            # The settings ``make_engine`` gives every connection (WAL, foreign keys, ...).
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("BEGIN IMMEDIATE")  # the write lock first (waits up to the busy timeout)
            try:
                run_ids = _write_import(
                    lambda sql, params: _first(conn.execute(sql, params)),
                    ":{}",
                    captures,
                    runs,
                    origin,
                    existing,
                    write_column=_sqlite_column_writer(conn),
                )
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # (an error may have ended it already)
                    conn.execute("ROLLBACK")
                raise
            return run_ids
        except _Conflict as exc:
            raise exc.duplicate from None
        except Exception as exc:
            if _read_only(exc):
                raise ReadOnlyStore(f"the store {self.display_url} is read-only: nothing was written") from None
            if (fault := _store_fault(self, exc)) is not None:  # disk full: rolled back, nothing lost
                raise fault from None
            raise
        finally:
            conn.close()

    # -- reading ----------------------------------------------------------------

    def list_runs(self, lens: str | None = None) -> list[RunSummary]:
        if self._absent:
            return []
        with self._read() as q:
            rows = q(
                f"SELECT {_RUN_COLUMNS} FROM run" + (" WHERE lens = :lens" if lens else "") + " ORDER BY id",
                {"lens": lens},
            )
        return [_summary(_RunRow(*r)) for r in rows]

    def run_metas(self, lens: str) -> list[tuple[int, dict[str, Any]]]:
        """(id, meta document) of every run of ``lens``, by id (a sweep's runs are found by
        their ``meta["sweep"]``)."""
        if self._absent:
            return []
        with self._read() as q:
            rows = q("SELECT id, meta FROM run WHERE lens = :lens ORDER BY id", {"lens": lens})
        return [(int(r[0]), _json_document(r[1])) for r in rows]

    def get_run(self, run_id: int) -> RunSummary:
        with self._read_run(run_id) as (row, _q):
            return _summary(row)

    def resolve_run(self, ref: str | int) -> int:
        """The run a user's word names: one rule for every command and the server.

        The word is a label exactly as typed (spaces and all), and it is an id only when it
        is ASCII decimal digits with nothing around them (``12``). When the two name
        different runs, or the label several, the word is refused with the candidates: no
        word acts on a run it does not name. An ``int`` is an id.
        """
        if isinstance(ref, int) and not isinstance(ref, bool):
            word, as_id = str(ref), decimal_id(ref)
            by_label: list[tuple[int, str]] = []
        else:
            word, as_id = str(ref), run_word_id(str(ref))
            by_label = self._runs_where("label = :label", {"label": word})
        by_id = self._runs_where("id = :id", {"id": as_id}) if as_id is not None else []
        found = dict.fromkeys([*by_label, *by_id])
        if len(found) == 1:
            return next(iter(found))[0]
        if not found:
            raise RunNotFound(_no_run(word, as_id, isinstance(ref, int)))
        ids = ", ".join(str(run_id) for run_id, _ in list(found)[:_SHOWN_CANDIDATES])
        ids += ", ..." if len(found) > _SHOWN_CANDIDATES else ""  # the label query stops one past what is shown
        labelled = [run_id for run_id, _ in by_label]
        if not by_id:
            how = "each by its label; name one by its id (see 'wb runs')"
        elif len(labelled) == 1:  # a label that is another run's id
            how = (
                f"run {as_id} by its id, run {labelled[0]} by its label; name run {labelled[0]} by its id, or rename "
                f"it ('wb rename {labelled[0]} LABEL') and {word!r} names run {as_id}"
            )
        else:
            how = f"run {as_id} by its id, the others by their label; name one by its id (see 'wb runs')"
        raise RunNotFound(f"{word!r} matches runs {ids} ({how})")

    def _runs_where(self, condition: str, params: dict[str, object]) -> list[tuple[int, str]]:
        """(id, label) of the runs matching ``condition``, by id (at most a few more than shown)."""
        if self._absent:
            return []
        with self._read() as q:
            rows = q(f"SELECT id, label FROM run WHERE {condition} ORDER BY id LIMIT {_SHOWN_CANDIDATES + 1}", params)
        return [(int(r[0]), str(r[1])) for r in rows]

    def resolve_runs(self, refs: Sequence[str | int]) -> list[int]:
        with self.reading():
            return [self.resolve_run(r) for r in refs]

    def load_run(self, run_id: int, tables: Sequence[str] | None = None, leave_out: Sequence[str] = ()) -> RunRecord:
        """The run with its columns (all tables, or only ``tables``; never those of ``leave_out``)."""
        with self._read_run(run_id) as (row, q):
            sql = "SELECT table_name, name, data FROM run_column WHERE run_id = :run"
            params: dict[str, int | str] = {"run": run_id}  # the run, and the tables asked for
            if tables is not None:
                names = list(tables)
                params.update({f"t{i}": t for i, t in enumerate(names)})
                sql += (
                    " AND table_name IN (" + ", ".join(f":t{i}" for i in range(len(names))) + ")"
                    if names
                    else " AND 1 = 0"
                )
            if leave_out:
                params.update({f"x{i}": t for i, t in enumerate(leave_out)})
                sql += " AND table_name NOT IN (" + ", ".join(f":x{i}" for i in range(len(leave_out))) + ")"
            col_rows = q(sql + " ORDER BY id", params)
            sources = [Path(r[4]) for r in q(_CAPTURES_OF_RUN, {"run": run_id})]
        record = _record(row)
        record.sources = sources
        for table_name, name, data in col_rows:
            try:
                record.tables.setdefault(table_name, {})[name] = columns.decode(bytes(data))
            except (ValueError, OSError, EOFError, TypeError) as exc:  # numpy's words for a blob that is not a column
                raise StoreDamaged(
                    f"the store {self.display_url} cannot be used: run {run_id}'s column {table_name}.{name} "
                    f"is not a stored column ({type(exc).__name__}); restore the store from a copy, or remove "
                    f"and import run {run_id} again"
                ) from None
        record.tables.setdefault(SAMPLES, {})
        return record

    def load_runs(
        self, run_ids: Sequence[int], tables: Sequence[str] | None = None, leave_out: Sequence[str] = ()
    ) -> list[RunRecord]:
        with self.reading():
            return [self.load_run(i, tables, leave_out) for i in run_ids]

    def column_blobs(self, run_id: int, table: str, names: Sequence[str]) -> dict[str, bytes]:
        """Some columns of one of a run's tables as stored (``store.columns``): a reader that
        reduces a large table takes the columns it needs, one table at a time."""
        params: dict[str, int | str] = {"run": run_id, "table": table}
        params.update({f"c{i}": n for i, n in enumerate(names)})
        wanted = ", ".join(f":c{i}" for i in range(len(names))) or "NULL"
        with self._read_run(run_id) as (_row, q):
            rows = q(
                f"SELECT name, data FROM run_column WHERE run_id = :run AND table_name = :table AND name IN ({wanted})",
                params,
            )
        return {str(name): bytes(data) for name, data in rows}

    @contextmanager
    def _read_run(self, run_id: int) -> Iterator[tuple["_RunRow", Callable[..., list[tuple[Any, ...]]]]]:
        if self._absent:
            raise RunNotFound(f"no run with id {run_id}")
        with self._read() as q:
            rows = q(f"SELECT {_RUN_COLUMNS} FROM run WHERE id = :id", {"id": decimal_id(run_id) or 0})
            if not rows:
                raise RunNotFound(f"no run with id {run_id}")
            yield _RunRow(*rows[0]), q

    def counts(self) -> dict[str, int]:
        """Row counts of the core tables (tests and `wb doctor` use them)."""
        from sqlalchemy import func, select  # SQLAlchemy: heavy, only for counts

        from store.tables import Capture, Run, RunColumn, RunSource  # SQLModel tables: heavy

        if self._absent:
            return {"capture": 0, "run": 0, "run_source": 0, "run_column": 0}
        with self.engine.connect() as conn:
            return {
                t.__tablename__: int(conn.execute(select(func.count()).select_from(t)).scalar_one())
                for t in (Capture, Run, RunSource, RunColumn)
            }


class _Conflict(Exception):
    """A unique violation on a capture insert (carries the DuplicateCapture to raise)."""

    def __init__(self, duplicate: StoreError) -> None:
        super().__init__(str(duplicate))
        self.duplicate = duplicate


def _first(result: Any) -> Any:
    """The first value of a statement's first row (None for a statement without rows)."""
    if getattr(result, "returns_rows", True) is False:  # SQLAlchemy's result of an INSERT without RETURNING
        return None
    row = result.fetchone()
    return row[0] if row else None


class ColumnRow(TypedDict):
    """A column's ``run_column`` row but its blob."""

    run_id: int
    table_name: str
    name: str
    dtype: str  # informational: "str" for a dictionary-coded text column
    length: int


# Stores one column: its row, its blob's pieces and their total size.
ColumnWriter = Callable[[ColumnRow, Iterator[bytes | memoryview], int], None]


def _write_import(
    execute: Callable[[str, Mapping[str, object]], Any],  # named parameters, as the driver binds them
    json_param: str,
    captures: Sequence[CaptureInfo],
    runs: Sequence[RunRecord],
    origin: str,
    existing: dict[Path, int] | None,
    write_column: ColumnWriter | None = None,
) -> list[int]:
    """The inserts of one import, in the caller's transaction. ``execute(sql, params)``
    returns the first value of the statement's first row (the ``RETURNING id``);
    ``json_param`` writes a JSON parameter (PostgreSQL casts, SQLite stores the text);
    ``write_column(row, pieces, size)`` stores one column from its blob's pieces
    (default: the blob joined, in one insert)."""
    import sqlite3

    import numpy as np  # numpy: not for `wb --help`, only when writing columns

    from store.spooled import SpooledTable

    capture_ids: dict[Path, int] = dict(existing or {})
    for info in captures:
        try:
            capture_ids[info.path] = int(
                execute(
                    _INSERT_CAPTURE,
                    {
                        "sha256": info.sha256,
                        "size": int(info.size),
                        "name": info.path.name,
                        "path": str(info.path),
                        "format": info.format,
                        "importer": info.importer,
                        "importer_version": info.importer_version,
                        "imported_at": utcnow_iso(),
                    },
                )
            )
        except Exception as exc:
            if isinstance(exc, sqlite3.IntegrityError) or type(exc).__name__ == "IntegrityError":
                # Another process stored this file between our digest check and this
                # insert: the unique index decides, and the whole import rolls back.
                raise _Conflict(DuplicateCapture(info.sha256, info.path)) from None
            raise
    insert_run = _INSERT_RUN.format(*(json_param.format(c) for c in ("dimensions", "window", "quality", "meta")))
    run_ids: list[int] = []
    for record in runs:
        run_id = int(
            execute(
                insert_run,
                {
                    "lens": record.lens,
                    "label": record.label,
                    "dimensions": json.dumps({k: d.to_json() for k, d in record.dimensions.items()}),
                    "window": json.dumps(dict(record.window)),
                    "work_unit": record.work.unit if record.work else None,
                    "work_amount": float(record.work.amount)
                    if record.work and record.work.amount is not None
                    else None,
                    "quality": json.dumps(dict(record.quality)),
                    "meta": json.dumps(dict(record.meta)),
                    "sample_count": int(record.sample_count),
                    "origin": origin,
                    "created_at": utcnow_iso(),
                },
            )
        )
        for source in record.sources:
            if source not in capture_ids:
                raise StoreError(f"run {record.label!r} names a source {source} that is not being imported")
            execute(
                "INSERT INTO run_source (run_id, capture_id) VALUES (:run_id, :capture_id)",
                {"run_id": run_id, "capture_id": capture_ids[source]},
            )
        for table, cols in record.tables.items():
            for name in cols:
                # One column at a time, its blob dropped after the insert: peak memory is
                # the arrays plus one column, not the arrays plus every column's bytes.
                # A spooled table's column comes from its file chunk by chunk, never whole.
                # dtype is informational (the blob says how to read it): "str" for a dictionary-coded text column.
                if isinstance(cols, SpooledTable):
                    column = cols.stream(name)
                    dtype, length, pieces, size = column.dtype, column.length, column.pieces, column.size
                else:
                    arr = np.asarray(cols[name])
                    dtype, length = ("str" if columns.is_text(arr) else str(arr.dtype)), len(arr)
                    parts = columns.parts(arr)
                    pieces, size = iter(parts), columns.size(parts)
                row: ColumnRow = {"run_id": run_id, "table_name": table, "name": name, "dtype": dtype, "length": length}
                if write_column is not None:
                    write_column(row, pieces, size)
                else:
                    execute(_INSERT_COLUMN, {**row, "data": b"".join(pieces)})
        run_ids.append(run_id)
        record.id = run_id
    return run_ids


def _sqlite_column_writer(conn: Any) -> ColumnWriter:
    """Columns streamed into SQLite: the row is inserted with a zero blob of the right
    size, then the ``.npy`` header and the array's bytes are written into it in chunks
    (incremental blob I/O), so no copy of a whole column is ever made, by us or by SQLite."""

    def write(row: ColumnRow, pieces: Iterator[bytes | memoryview], size: int) -> None:
        rowid = _first(conn.execute(_INSERT_ZERO_COLUMN, {**row, "size": size}))
        written = 0
        with conn.blobopen("run_column", "data", rowid) as blob:
            for piece in pieces:
                view = memoryview(piece)
                written += view.nbytes
                if written > size:
                    raise StoreError(f"column {row['table_name']}.{row['name']} is longer than its stated {size} bytes")
                for start in range(0, view.nbytes, _BLOB_CHUNK):
                    blob.write(view[start : start + _BLOB_CHUNK])
        if written != size:  # a zero blob's tail would read as data
            raise StoreError(f"column {row['table_name']}.{row['name']} has {written} of its stated {size} bytes")

    return write


_BLOB_CHUNK = 1 << 20
_INSERT_CAPTURE = (
    "INSERT INTO capture (sha256, size, name, path, format, importer, importer_version, imported_at) "
    "VALUES (:sha256, :size, :name, :path, :format, :importer, :importer_version, :imported_at) RETURNING id"
)
# (the JSON columns' parameters are filled in per backend)
_INSERT_RUN = (
    'INSERT INTO run (lens, label, dimensions, "window", work_unit, work_amount, quality, meta, sample_count, origin, '
    "created_at) "
    "VALUES (:lens, :label, {}, {}, :work_unit, :work_amount, {}, {}, :sample_count, :origin, :created_at) RETURNING id"
)
_INSERT_COLUMN = (
    "INSERT INTO run_column (run_id, table_name, name, dtype, length, data) "
    "VALUES (:run_id, :table_name, :name, :dtype, :length, :data)"
)
_INSERT_ZERO_COLUMN = (
    "INSERT INTO run_column (run_id, table_name, name, dtype, length, data) "
    "VALUES (:run_id, :table_name, :name, :dtype, :length, zeroblob(:size)) RETURNING id"
)


# "window" is a reserved word in PostgreSQL: quoted.
_RUN_COLUMNS = (
    'id, lens, label, dimensions, "window", work_unit, work_amount, quality, meta, sample_count, origin, created_at'
)
_CAPTURE_COLUMNS = "c.id, c.sha256, c.size, c.name, c.path, c.format, c.importer, c.importer_version, c.imported_at"
_CAPTURES_OF_RUN = (
    f"SELECT {_CAPTURE_COLUMNS} FROM capture c JOIN run_source s ON s.capture_id = c.id WHERE s.run_id "
    f"= :run ORDER BY c.id"
)


@dataclass(frozen=True)
class CaptureRow:
    """A stored capture, as read (the fields of ``store.tables.Capture``)."""

    id: int
    sha256: str
    size: int
    name: str
    path: str
    format: str
    importer: str
    importer_version: str
    imported_at: str


@dataclass
class _RunRow:
    """A ``run`` row as read without the ORM (JSON columns decoded)."""

    id: int
    lens: str
    label: str
    dimensions: Any
    window: Any
    work_unit: str | None
    work_amount: float | None
    quality: Any
    meta: Any
    sample_count: int
    origin: str
    created_at: str

    def __post_init__(self) -> None:
        # SQLite returns JSON columns as text; psycopg has already decoded them.
        for name in ("dimensions", "window", "quality", "meta"):
            value = getattr(self, name)
            if isinstance(value, (str, bytes)):
                setattr(self, name, json.loads(value))


def _json_document(value: Any) -> dict[str, Any]:
    """A JSON column as a dict: SQLite returns text, psycopg a decoded value; null is {}."""
    if isinstance(value, (str, bytes)):
        value = json.loads(value)
    return dict(value or {})


def _summary(row: "_RunRow") -> RunSummary:
    return RunSummary(
        id=int(row.id),
        lens=row.lens,
        label=row.label,
        dimensions=_dimensions(row),
        window=dict(row.window or {}),
        sample_count=row.sample_count,
        origin=row.origin,
        created_at=row.created_at,
    )


def _dimensions(row: "_RunRow") -> dict[str, Dimension]:
    """A run's stored dimensions (name -> {"value", "source", "declaration"}) decoded."""
    return {
        k: Dimension(v.get("value"), v.get("source", "declared"), v.get("declaration"))
        for k, v in (row.dimensions or {}).items()
    }


def _record(row: "_RunRow") -> RunRecord:
    return RunRecord(
        id=row.id,
        lens=row.lens,
        label=row.label,
        dimensions=_dimensions(row),
        window=dict(row.window or {}),
        work=Work(row.work_unit, row.work_amount) if row.work_unit else None,
        quality=dict(row.quality or {}),
        meta=dict(row.meta or {}),
    )


_SHOWN_CANDIDATES = 10  # runs an ambiguous word lists by name


def run_word_id(word: str) -> int | None:
    """The id a user's word states: ASCII digits with nothing around them (``12``); ``None``
    for anything else (`` 3``, ``3 ``, ``٣``, ``²`` and ``run/3``, a bundle's ref, are labels)."""
    return decimal_id(word) if word.isascii() and word.isdigit() else None


def _no_run(word: str, as_id: int | None, typed_id: bool) -> str:
    if typed_id:
        return f"no run with id {word}"
    hint = run_word_id(word.strip()) if as_id is None else None
    also = f"; an id is its digits alone, {hint}" if hint is not None else ""
    return f"no run with id or label {word!r}{also} (see 'wb runs')"


def open_store(url: str | None = None, *, create: bool = True) -> Store:
    """Open the store at ``url`` (default: the user's SQLite store), upgrading its schema
    when needed. A SQLite store that does not exist yet is created by its first write
    (``create``; with ``create=False`` it is an error), and only in a directory that
    exists (the default store's directory is made for it)."""
    normalized = normalize_url(url)
    try:
        path = sqlite_path(normalized)
        if path is not None:
            return _open_sqlite(normalized, path, create)
        engine = make_engine(normalized)
        with engine.connect() as conn:
            found, _version = state(sqlalchemy_query(conn), engine.dialect.name)
            if found != READY:
                if found == ABSENT and not create:
                    raise SchemaError(
                        f"no wb store at {display_url(normalized)} yet: 'wb --store URL import FILE' creates one"
                    )
                apply(conn)
                conn.commit()
        return Store(normalized, engine)
    except StoreError:
        raise
    except Exception as exc:  # driver errors: unreachable server, bad path, permissions
        raise StoreError(
            f"cannot open store {display_url(normalized)}: {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}"
        ) from exc


def _open_sqlite(url: str, path: Path, create: bool) -> Store:
    if not path.exists():
        if not path.parent.is_dir() and path.parent != default_data_dir():
            raise StoreError(
                f"no store at {path}: its directory {path.parent} does not exist "
                f"(create the directory with 'mkdir -p {path.parent}', then 'wb --store {path} import FILE' creates "
                f"the store)"
            )
        if not create:
            raise SchemaError(f"no wb store at {path} yet: 'wb --store {path} import FILE' creates one")
        return Store(url, path=path, absent=True)
    if not path.is_file():
        raise StoreError(f"store {path} is not a file")
    if path.stat().st_size == 0:
        raise StoreError(
            f"store {path} is an empty file, not a wb store: remove it ('rm {path}') and the next "
            f"'wb --store {path} import FILE' creates the store there"
        )
    read_only = not writable(path)
    conn = connect_sqlite(path, read_only=read_only)
    try:
        found, version = state(lambda sql, params=None: conn.execute(sql, params or {}).fetchall(), "sqlite")
    finally:
        conn.close()
    store = Store(url, path=path, read_only=read_only)
    if found == READY or (read_only and found != ABSENT and version is not None and version == SCHEMA_VERSION):
        return store  # (read-only: tables another wb added cannot be added here, and need not be)
    if read_only:
        raise StoreError(
            f"store {path} is read-only and "
            f"{'holds no wb store' if found == ABSENT else 'needs an upgrade this wb cannot write'}"
        )
    if found == ABSENT and not create:
        raise SchemaError(f"no wb store at {path} yet: 'wb --store {path} import FILE' creates one")
    with store.engine.connect() as sa_conn:
        apply(sa_conn)
        sa_conn.commit()
    return store


def _create_sqlite(path: Path) -> None:
    """Create a new SQLite store at ``path`` atomically: the schema is built in a file
    beside it and linked into place, so ``path`` never holds a half-made store (a
    ``kill -9`` leaves only the temporary file) and of concurrent first uses one
    creates it and the others use that one."""
    import secrets

    if path.parent == default_data_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.creating")
    try:
        conn = connect_sqlite(tmp, create=True)  # the standard library's driver: no SQLAlchemy, no ORM
        try:
            for pragma in SQLITE_PRAGMAS:
                conn.execute(pragma)
            conn.execute("BEGIN IMMEDIATE")
            create_schema(conn.execute, "sqlite")
            conn.execute("COMMIT")
        finally:
            conn.close()  # the last connection checkpoints the WAL into the file
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process created it first: use that one
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(tmp, path)
    finally:
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            leftover.unlink(missing_ok=True)


def _store_fault(store: "Store", exc: BaseException) -> StoreError | None:
    """What a database error says about the store, as one line naming it (None: not a
    fault of the store, e.g. a unique-index conflict, which its callers decide on)."""
    import sqlite3
    import sys

    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    lowered = text.lower()
    if isinstance(orig, sqlite3.IntegrityError) or type(orig).__name__ in (
        "IntegrityError",
        "UniqueViolation",
        "ForeignKeyViolation",
    ):
        return None
    if "disk is full" in lowered or "no space left" in lowered or type(orig).__name__ == "DiskFull":
        return StoreFull(
            f"the store {store.display_url} is full (no space left on its disk): nothing was written, "
            "nothing stored before was lost; free space and run the command again"
        )
    database_error = isinstance(orig, sqlite3.DatabaseError)
    if not database_error and "sqlalchemy" in sys.modules:
        from sqlalchemy.exc import DBAPIError  # loaded already (checked above)

        database_error = isinstance(exc, DBAPIError)
    if not database_error:
        return None
    return StoreDamaged(
        f"the store {store.display_url} cannot be used: {text} (a damaged file, or not a store this wb wrote); "
        "nothing was written. Check it with 'wb doctor', or restore it from a copy"
    )


def _read_only(exc: BaseException) -> bool:
    """A write refused because the store is read-only (a file or database without write access)."""
    import sqlite3
    import sys

    text = str(getattr(exc, "orig", exc)).lower()
    if isinstance(exc, sqlite3.Error):  # the stdlib driver, used directly (no SQLAlchemy to import)
        return "readonly database" in text
    if "sqlalchemy" not in sys.modules:
        return False
    from sqlalchemy.exc import DBAPIError  # SQLAlchemy: heavy, only once a server store failed

    return isinstance(exc, DBAPIError) and ("readonly database" in text or "read-only transaction" in text)
