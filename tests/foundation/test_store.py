"""The store on every backend: schema, round trips, run references, atomic writes."""

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

from store import open_store
from store.api import CaptureInfo
from store.errors import RunNotFound, SchemaError, StoreError
from store.records import Dimension, RunRecord, Work
from store.schema import SCHEMA_VERSION


def _record(label="run a", path=Path("/x/a.json")):
    r = RunRecord(
        lens="training",
        label=label,
        dimensions={"rank_count": Dimension(8, "measured")},
        window={"kind": "steady", "warmup_excluded": 3},
        work=Work("samples", 1024.0),
        quality={"eval_loss": 2.14},
        meta={"note": "x"},
        sources=[path],
    )
    r.samples["step_ms"] = np.array([420.0, np.nan, 421.5])
    r.samples["rank"] = np.array([0.0, 1.0, 2.0])
    r.tables["operations"] = {"name": np.array(["gemm", "nccl"]), "total_ms": np.array([1.0, 2.0])}
    return r


def _capture(path=Path("/x/a.json"), sha="a" * 64):
    return CaptureInfo(path=path, sha256=sha, size=10, format="native", importer="native", importer_version="1")


@pytest.mark.store
def test_round_trip_keeps_everything(store_url):
    st = open_store(store_url)
    (run_id,) = st.add_import([_capture()], [_record()])
    back = open_store(store_url).load_run(run_id)
    assert back.lens == "training" and back.label == "run a"
    assert back.dimensions["rank_count"] == Dimension(8, "measured")
    assert back.window == {"kind": "steady", "warmup_excluded": 3}
    assert back.work == Work("samples", 1024.0)
    assert back.quality == {"eval_loss": 2.14}
    np.testing.assert_array_equal(back.samples["step_ms"], [420.0, np.nan, 421.5])  # NaN stays unknown
    assert list(back.tables["operations"]["name"]) == ["gemm", "nccl"]
    assert [c.sha256 for c in st.run_captures(run_id)] == ["a" * 64]
    assert st.list_runs()[0].sample_count == 3


@pytest.mark.store
def test_run_metas_are_one_lens_documents_by_id(store_url):
    """What a sweep is found by (``meta["sweep"]``), read without the ORM on either backend."""
    st = open_store(store_url)
    assert st.run_metas("training") == []  # nothing yet: an empty answer, not an error
    ids = st.add_import(
        [_capture(), _capture(Path("/x/b"), "b" * 64)], [_record("a", Path("/x/a.json")), _record("b", Path("/x/b"))]
    )
    assert st.run_metas("training") == [(ids[0], {"note": "x"}), (ids[1], {"note": "x"})]
    assert st.run_metas("inference") == []


@pytest.mark.store
def test_resolve_run_by_id_and_label(store_url):
    st = open_store(store_url)
    ids = st.add_import(
        [_capture(), _capture(Path("/x/b"), "b" * 64)],
        [_record("same", Path("/x/a.json")), _record("same", Path("/x/b"))],
    )
    assert st.resolve_run(str(ids[0])) == ids[0]
    with pytest.raises(RunNotFound, match="matches runs"):
        st.resolve_run("same")
    with pytest.raises(RunNotFound, match="no run"):
        st.resolve_run("nope")


@pytest.mark.store
def test_reads_inside_reading_share_one_snapshot(store_url, monkeypatch):
    """``reading()``: the resolutions and loads of a command open the store once; a read that
    fails inside leaves the next read a fresh one; another thread's reads are its own."""
    import threading

    from store import api

    st = open_store(store_url)
    ids = st.add_import(
        [_capture(), _capture(Path("/x/b"), "b" * 64)], [_record("a", Path("/x/a.json")), _record("b", Path("/x/b"))]
    )
    opened = []
    open_read = api.Store._open_read
    monkeypatch.setattr(api.Store, "_open_read", lambda self: opened.append(1) or open_read(self))
    with st.reading():
        assert st.resolve_runs(["a", str(ids[1])]) == ids
        runs = st.load_runs(ids)
        other: list[object] = []
        worker = threading.Thread(target=lambda: other.append(st.load_run(ids[0]).label))
        worker.start()
        worker.join()
    assert [r.label for r in runs] == ["a", "b"] and other == ["a"]
    assert len(opened) == 2  # this thread's snapshot, and the other thread's own
    with pytest.raises(RunNotFound):
        with st.reading():
            st.resolve_run("nope")
    assert st.load_runs(ids)[1].label == "b" and len(opened) == 4  # a fresh read after the failed one


def test_reading_that_reads_nothing_opens_nothing(tmp_path):
    """A store not created yet (no file) is fine to hold ``reading()`` over when nothing is read:
    a new investigation resolves its empty sides there."""
    st = open_store(f"sqlite:///{tmp_path / 'wb.sqlite'}")
    with st.reading():
        assert st.resolve_runs([]) == [] and st.load_runs([]) == []


@pytest.mark.store
def test_failed_write_leaves_nothing(store_url):
    st = open_store(store_url)
    bad = _record("bad", Path("/not/imported"))
    with pytest.raises(StoreError):
        st.add_import([_capture()], [_record(), bad])
    assert st.counts() == {"capture": 0, "run": 0, "run_source": 0, "run_column": 0}


@pytest.mark.store
def test_newer_schema_is_refused(store_url):
    st = open_store(store_url)
    with st.engine.begin() as conn:
        conn.execute(text("UPDATE wb_meta SET value = :v WHERE key = 'schema_version'"), {"v": str(SCHEMA_VERSION + 1)})
    with pytest.raises(SchemaError, match="newer than this wb"):
        open_store(store_url)


def test_foreign_database_is_refused(tmp_path):
    import sqlite3

    path = tmp_path / "other.sqlite"
    sqlite3.connect(path).execute("CREATE TABLE accounts (id INTEGER)").connection.commit()
    with pytest.raises(SchemaError, match="not a wb store"):
        open_store(str(path))


def test_sqlite_pragmas_on_every_connection(sqlite_url):
    st = open_store(sqlite_url)
    for _ in range(2):
        with st.engine.connect() as conn:
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
            assert conn.execute(text("PRAGMA busy_timeout")).scalar() >= 1000
        st.engine.dispose()


def test_default_url_follows_xdg(monkeypatch, tmp_path):
    from store.engine import default_store_url, normalize_url

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_store_url() == f"sqlite:///{tmp_path / 'wb' / 'wb.sqlite'}"
    assert normalize_url(None) == default_store_url()
    assert normalize_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url(str(tmp_path / "s.sqlite")) == f"sqlite:///{tmp_path / 's.sqlite'}"


def test_object_arrays_are_never_stored():
    from store import columns

    with pytest.raises(TypeError):
        columns.encode(np.array([{"a": 1}], dtype=object))


V1_RERUN_PLAN = (
    "CREATE TABLE rerun_plan (id INTEGER NOT NULL, name VARCHAR NOT NULL, lens VARCHAR NOT NULL, digest VARCHAR NOT "
    "NULL, "
    "origin VARCHAR NOT NULL, body JSON NOT NULL, created_at VARCHAR NOT NULL, PRIMARY KEY (id))"
)


def test_a_version_1_store_is_upgraded_its_plans_belonging_to_no_investigation(sqlite_url):
    """Schema 1 -> 2 adds rerun_plan.investigation_id; the plans made before keep their rows
    (NULL: no investigation)."""
    from store.rerun import RerunPlan, save_plan

    st = open_store(sqlite_url)
    with st.session() as s:
        save_plan(s, "p", "training", "d" * 64, {"name": "p"})
    with st.engine.begin() as conn:
        conn.exec_driver_sql("PRAGMA foreign_keys = OFF")
        conn.exec_driver_sql("DROP TABLE rerun_plan")
        conn.exec_driver_sql(V1_RERUN_PLAN)
        conn.exec_driver_sql("INSERT INTO rerun_plan VALUES (1, 'old', 'training', 'e', 'user', '{}', '2026-01-01')")
        conn.execute(text("UPDATE wb_meta SET value = '1' WHERE key = 'schema_version'"))
    st.close()
    again = open_store(sqlite_url)
    with again.session() as s:
        old = s.get(RerunPlan, 1)
        assert old.name == "old" and old.investigation_id is None
    with again.engine.begin() as conn:
        assert (
            conn.execute(text("SELECT value FROM wb_meta WHERE key = 'schema_version'")).scalar_one()
            == str(SCHEMA_VERSION)
            == "5"
        )
