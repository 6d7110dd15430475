"""The store's interface: open it, write an import in one transaction, read runs back."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from store import columns
from store.engine import display_url, make_engine, normalize_url
from store.errors import ReadOnlyStore, RunNotFound, StoreError
from store.records import SAMPLES, Dimension, RunRecord, Work

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlmodel import Session

    from store.tables import Capture, Run


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
    dimensions: dict[str, Any]  # name -> {"value", "source"}
    window: dict[str, Any]
    sample_count: int
    origin: str
    created_at: str

    def dimension_values(self) -> dict[str, Any]:
        return {name: d.get("value") for name, d in self.dimensions.items()}


class Store:
    def __init__(self, url: str, engine: "Engine") -> None:
        self.url = url
        self.engine = engine

    def __repr__(self) -> str:
        return f"Store({display_url(self.url)!r})"

    @property
    def display_url(self) -> str:
        return display_url(self.url)

    @contextmanager
    def session(self) -> Iterator["Session"]:
        """A session in one transaction: committed on success, rolled back on error."""
        from sqlmodel import Session

        with Session(self.engine, expire_on_commit=False) as session:
            try:
                yield session
                session.commit()
            except BaseException as exc:
                session.rollback()
                if _read_only(exc):
                    raise ReadOnlyStore(f"the store {self.display_url} is read-only: nothing was written") from None
                raise

    def close(self) -> None:
        self.engine.dispose()

    # -- captures ---------------------------------------------------------------

    def find_capture(self, sha256: str) -> "Capture | None":
        from sqlmodel import select

        from store.tables import Capture

        with self.session() as s:
            return s.exec(select(Capture).where(Capture.sha256 == sha256)).first()

    def capture_runs(self, capture_id: int) -> list[int]:
        from sqlmodel import select

        from store.tables import RunSource

        with self.session() as s:
            return sorted(s.exec(select(RunSource.run_id).where(RunSource.capture_id == capture_id)).all())

    def run_captures(self, run_id: int) -> list["Capture"]:
        from sqlmodel import select

        from store.tables import Capture, RunSource

        with self.session() as s:
            stmt = select(Capture).join(RunSource, RunSource.capture_id == Capture.id).where(RunSource.run_id == run_id)
            return list(s.exec(stmt.order_by(Capture.id)).all())

    # -- writing ----------------------------------------------------------------

    def add_import(self, captures: Sequence[CaptureInfo], runs: Sequence[RunRecord], *, origin: str = "import",
                   existing: dict[Path, int] | None = None) -> list[int]:
        """Record ``captures`` and ``runs`` in one transaction; returns the new run ids.

        Each run's ``sources`` must name paths among ``captures`` or in ``existing``
        (files already in the store, by capture id). Either everything is written or
        nothing is.
        """
        from sqlalchemy import insert
        from sqlalchemy.exc import IntegrityError

        from store.errors import DuplicateCapture
        from store.tables import Capture, Run, RunColumn, RunSource

        run_ids: list[int] = []
        with self.session() as s:
            capture_ids: dict[Path, int] = dict(existing or {})
            for info in captures:
                row = Capture(
                    sha256=info.sha256,
                    size=info.size,
                    name=info.path.name,
                    path=str(info.path),
                    format=info.format,
                    importer=info.importer,
                    importer_version=info.importer_version,
                )
                s.add(row)
                try:
                    s.flush()
                except IntegrityError:
                    # Another process stored this file between our digest check and this
                    # insert: the unique index decides, and the whole import rolls back.
                    raise DuplicateCapture(info.sha256, info.path) from None
                capture_ids[info.path] = row.id  # type: ignore[assignment]
            for record in runs:
                row = _run_row(record, origin)
                s.add(row)
                s.flush()
                run_id = int(row.id)  # type: ignore[arg-type]
                for source in record.sources:
                    if source not in capture_ids:
                        raise StoreError(f"run {record.label!r} names a source {source} that is not being imported")
                    s.add(RunSource(run_id=run_id, capture_id=capture_ids[source]))
                rows = [
                    {"run_id": run_id, "table_name": table, "name": name, "dtype": str(np.asarray(arr).dtype), "length": len(arr), "data": columns.encode(arr)}
                    for table, cols in record.tables.items()
                    for name, arr in cols.items()
                ]
                if rows:
                    # Core executemany: column blobs never go through the ORM.
                    s.connection().execute(insert(RunColumn), rows)
                run_ids.append(run_id)
                record.id = run_id
        return run_ids

    # -- reading ----------------------------------------------------------------

    def list_runs(self, lens: str | None = None) -> list[RunSummary]:
        from sqlmodel import select

        from store.tables import Run

        with self.session() as s:
            stmt = select(Run).order_by(Run.id)
            if lens:
                stmt = stmt.where(Run.lens == lens)
            return [_summary(r) for r in s.exec(stmt).all()]

    def get_run(self, run_id: int) -> RunSummary:
        from store.tables import Run

        with self.session() as s:
            row = s.get(Run, run_id)
            if row is None:
                raise RunNotFound(f"no run with id {run_id}")
            return _summary(row)

    def resolve_run(self, ref: str | int) -> int:
        """A run id from an id or a label; a label that matches several runs is an error."""
        from sqlmodel import select

        from store.tables import Run

        text_ref = str(ref).strip()
        with self.session() as s:
            if text_ref.isdigit():
                if s.get(Run, int(text_ref)) is not None:
                    return int(text_ref)
            ids = list(s.exec(select(Run.id).where(Run.label == text_ref).order_by(Run.id)).all())
        if len(ids) == 1:
            return int(ids[0])  # type: ignore[arg-type]
        if not ids:
            raise RunNotFound(f"no run with id or label {text_ref!r} (see 'wb runs')")
        raise RunNotFound(f"label {text_ref!r} matches runs {', '.join(map(str, ids))}; name one by id")

    def resolve_runs(self, refs: Sequence[str | int]) -> list[int]:
        return [self.resolve_run(r) for r in refs]

    def load_run(self, run_id: int, tables: Sequence[str] | None = None) -> RunRecord:
        """The run with its columns (all tables, or only ``tables``)."""
        from sqlmodel import select

        from store.tables import Run, RunColumn

        with self.session() as s:
            row = s.get(Run, run_id)
            if row is None:
                raise RunNotFound(f"no run with id {run_id}")
            stmt = select(RunColumn).where(RunColumn.run_id == run_id).order_by(RunColumn.id)
            if tables is not None:
                stmt = stmt.where(RunColumn.table_name.in_(list(tables)))  # type: ignore[attr-defined]
            col_rows = s.exec(stmt).all()
            sources = [Path(c.path) for c in self.run_captures(run_id)]
        record = _record(row)
        record.sources = sources
        for col in col_rows:
            record.tables.setdefault(col.table_name, {})[col.name] = columns.decode(col.data)
        record.tables.setdefault(SAMPLES, {})
        return record

    def load_runs(self, run_ids: Sequence[int], tables: Sequence[str] | None = None) -> list[RunRecord]:
        return [self.load_run(i, tables) for i in run_ids]

    def counts(self) -> dict[str, int]:
        """Row counts of the core tables (tests and `wb doctor` use them)."""
        from sqlalchemy import func, select

        from store.tables import Capture, Run, RunColumn, RunSource

        with self.engine.connect() as conn:
            return {
                t.__tablename__: int(conn.execute(select(func.count()).select_from(t)).scalar_one())  # type: ignore[arg-type]
                for t in (Capture, Run, RunSource, RunColumn)
            }


def _run_row(record: RunRecord, origin: str) -> "Run":
    from store.tables import Run

    return Run(
        lens=record.lens,
        label=record.label,
        dimensions={k: d.to_json() for k, d in record.dimensions.items()},
        window=dict(record.window),
        work_unit=record.work.unit if record.work else None,
        work_amount=record.work.amount if record.work else None,
        quality=dict(record.quality),
        meta=dict(record.meta),
        sample_count=record.sample_count,
        origin=origin,
    )


def _summary(row: "Run") -> RunSummary:
    return RunSummary(
        id=int(row.id),  # type: ignore[arg-type]
        lens=row.lens,
        label=row.label,
        dimensions=dict(row.dimensions or {}),
        window=dict(row.window or {}),
        sample_count=row.sample_count,
        origin=row.origin,
        created_at=row.created_at,
    )


def _record(row: "Run") -> RunRecord:
    return RunRecord(
        id=row.id,
        lens=row.lens,
        label=row.label,
        dimensions={k: Dimension(v.get("value"), v.get("source", "declared"), v.get("declaration")) for k, v in (row.dimensions or {}).items()},
        window=dict(row.window or {}),
        work=Work(row.work_unit, row.work_amount) if row.work_unit else None,
        quality=dict(row.quality or {}),
        meta=dict(row.meta or {}),
    )


def open_store(url: str | None = None, *, create: bool = True) -> Store:
    """Open the store at ``url`` (default: the user's SQLite store), creating or upgrading its schema."""
    from store.schema import ensure_schema

    normalized = normalize_url(url)
    try:
        engine = make_engine(normalized)
        ensure_schema(engine, create=create)
    except StoreError:
        raise
    except Exception as exc:  # driver errors: unreachable server, bad path, permissions
        raise StoreError(f"cannot open store {display_url(normalized)}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc
    return Store(normalized, engine)


def _read_only(exc: BaseException) -> bool:
    """A write refused because the store is read-only (a file or database without write access)."""
    from sqlalchemy.exc import DBAPIError

    text = str(getattr(exc, "orig", exc)).lower()
    return isinstance(exc, DBAPIError) and ("readonly database" in text or "read-only transaction" in text)
