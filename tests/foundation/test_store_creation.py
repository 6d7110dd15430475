"""Store creation is atomic and race-free, and a store is only made where one is meant to be.

Several processes using a new store at once all succeed and create it once (SQLite and
PostgreSQL); a ``kill -9`` in the middle of creating it leaves nothing that a later
open refuses; a missing directory and an empty file are refused with the way out;
reading or a failed import creates nothing; a read-only store opens for reading.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import text

from store import open_store
from store.errors import SchemaError, StoreError
from store.schema import SCHEMA_VERSION
from tests.conftest import REPO, run_wb
from tests.foundation.helpers import inference_capture, write_json
from workbench.ingest import import_files

# Each worker waits for the same moment, then opens the store and writes to it.
FIRST_USE = """
import sys, time
from store import open_store
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
st = open_store(sys.argv[1])
with st.engine.begin() as conn:
    conn.exec_driver_sql("SELECT count(*) FROM run")
print("OK", flush=True)
"""

# Creates a store, announcing the moment its tables exist inside the creating
# transaction and then stalling there, so the parent can kill it mid-creation.
KILLED_CREATION = """
import sys, time
import store.api, store.schema
real = store.schema.create
def slow(*args, **kwargs):
    real(*args, **kwargs)
    print("CREATED", flush=True)
    time.sleep(60)
store.schema.create = store.api.create_schema = slow  # PostgreSQL (schema.apply), SQLite (api._create_sqlite)
from store import open_store
open_store(sys.argv[1]).ensure_exists()
"""


def _version(url: str) -> int:
    st = open_store(url)
    with st.engine.connect() as conn:
        return int(conn.execute(text("SELECT value FROM wb_meta WHERE key = 'schema_version'")).scalar_one())


@pytest.mark.store
def test_concurrent_first_use_creates_the_store_once(store_url):
    start = time.time() + 3.0  # every worker has imported wb by then
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", FIRST_USE, store_url, str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(6)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    failures = [
        err.strip().splitlines()[-1:] for (out, err), p in zip(results, procs) if p.returncode or out.strip() != "OK"
    ]
    assert not failures, failures
    assert _version(store_url) == SCHEMA_VERSION


@pytest.mark.store
def test_kill_during_creation_leaves_a_usable_store(store_url, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_CREATION, store_url], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout.readline().strip() == "CREATED"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    st = open_store(store_url)  # neither refused nor half-made
    report = import_files(st, [write_json(tmp_path / "run.json", inference_capture(10))])
    assert len(report.run_ids) == 1
    assert _version(store_url) == SCHEMA_VERSION


def test_creation_cut_short_by_an_older_wb_is_repaired(tmp_path):
    import sqlite3

    path = tmp_path / "half.sqlite"  # what wb before atomic creation could leave: tables, no version
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE wb_meta (key VARCHAR PRIMARY KEY, value VARCHAR);"
        "CREATE TABLE run (id INTEGER PRIMARY KEY, label VARCHAR);"
    )
    conn.close()
    st = open_store(str(path))
    assert st.counts()["run"] == 0
    assert _version(str(path)) == SCHEMA_VERSION


def test_missing_directory_is_refused_with_the_way_out(tmp_path):
    path = tmp_path / "nowhere" / "wb.sqlite"
    with pytest.raises(StoreError, match=f"mkdir -p {tmp_path / 'nowhere'}"):
        open_store(str(path))
    for args in (["runs"], ["import", str(write_json(tmp_path / "run.json", inference_capture(5)))]):
        proc = run_wb("--store", str(path), *args)
        assert proc.returncode != 0 and "does not exist" in proc.stderr, proc.stderr
    assert not path.parent.exists()


def test_reading_or_a_failed_import_creates_nothing(tmp_path):
    path = tmp_path / "wb.sqlite"
    proc = run_wb("--store", str(path), "runs", "--json")
    assert proc.returncode == 0 and proc.stdout.strip() == "[]"
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "workbench.capture/1", "lens": "inference", "samples": [')
    proc = run_wb("--store", str(path), "import", str(bad))
    assert proc.returncode == 2, proc.stderr
    assert not path.exists() and not list(tmp_path.glob(".wb.sqlite*"))
    proc = run_wb("--store", str(path), "import", str(write_json(tmp_path / "run.json", inference_capture(5))))
    assert proc.returncode == 0, proc.stderr
    assert path.is_file() and len(open_store(str(path)).list_runs()) == 1


def test_read_commands_do_not_create(tmp_path):
    path = tmp_path / "wb.sqlite"
    with pytest.raises(SchemaError, match="wb --store .* import FILE"):
        open_store(str(path), create=False)
    st = open_store(str(path))
    assert st.list_runs() == [] and not st.exists and not path.exists()


def test_empty_file_is_not_adopted(tmp_path):
    path = tmp_path / "wb.sqlite"
    path.touch()
    with pytest.raises(StoreError, match=f"empty file.*rm {path}"):
        open_store(str(path))
    assert path.stat().st_size == 0


def test_read_only_store_opens_for_reading(tmp_path, monkeypatch):
    path = tmp_path / "wb.sqlite"
    st = open_store(str(path))
    import_files(st, [write_json(tmp_path / "run.json", inference_capture(5))])
    st.close()
    monkeypatch.setattr("store.api.writable", lambda _p: False)
    ro = open_store(str(path))
    assert ro.read_only
    (run,) = ro.list_runs()
    assert ro.load_run(run.id).sample_count == 5
    with pytest.raises(StoreError, match="read-only"):
        import_files(ro, [write_json(tmp_path / "other.json", inference_capture(6))])
    assert len(open_store(str(path)).list_runs()) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through permissions")
def test_store_in_a_read_only_directory(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "wb.sqlite"
    st = open_store(str(path))
    import_files(st, [write_json(tmp_path / "run.json", inference_capture(5))])
    st.close()
    folder.chmod(0o555)
    try:
        ro = open_store(str(path))
        assert ro.read_only and len(ro.list_runs()) == 1
    finally:
        folder.chmod(0o755)


def test_a_file_store_pools_connections_safely_across_threads(tmp_path):
    """A SQLite file store must not get SQLAlchemy's in-memory pool (SingletonThreadPool),
    which closes one thread's connection while another uses it (a segfault in the TUI,
    whose workers read at once)."""
    import threading

    from sqlalchemy.pool import SingletonThreadPool

    from store import open_store

    store = open_store(f"sqlite:///{tmp_path / 's.sqlite'}")
    store.ensure_exists()
    assert not isinstance(store.engine.pool, SingletonThreadPool)
    errors = []

    def reader() -> None:
        try:
            for _ in range(30):
                with store.engine.connect() as conn:
                    conn.exec_driver_sql("SELECT count(*) FROM run").fetchall()
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
