"""A demo store built once per session and copied for each TUI test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def _demo_store_master(tmp_path_factory):
    from store import open_store
    from workbench.demo import load_demo

    path = tmp_path_factory.mktemp("demo") / "demo.sqlite"
    store = open_store(f"sqlite:///{path}")
    load_demo(store)
    with store.engine.connect() as conn:  # fold the WAL into the file before copying it
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return path


@pytest.fixture
def demo_url(_demo_store_master, tmp_path):
    target = tmp_path / "demo.sqlite"
    shutil.copy(_demo_store_master, target)
    return f"sqlite:///{target}"


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path, monkeypatch):
    """Rerun work directories (and any default store) go under tmp_path, not the user's data dir."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("WB_STORE", raising=False)


SWEEPS = Path(__file__).resolve().parents[1] / "data" / "inference" / "real" / "inference-perf-kubecon-na-2025"


@pytest.fixture(scope="session")
def _sweep_store_master(_demo_store_master, tmp_path_factory):
    """The demo store with three real load sweeps (inference-perf, KubeCon NA 2025) imported."""
    from store import open_store
    from workbench.ingest import import_files

    path = tmp_path_factory.mktemp("sweeps") / "sweeps.sqlite"
    shutil.copy(_demo_store_master, path)
    store = open_store(f"sqlite:///{path}")
    import_files(store, [SWEEPS])
    with store.engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return path


@pytest.fixture
def sweep_url(_sweep_store_master, tmp_path):
    target = tmp_path / "sweeps.sqlite"
    shutil.copy(_sweep_store_master, target)
    return f"sqlite:///{target}"


TRACES = Path(__file__).resolve().parents[1] / "data" / "training" / "trace_diff"


@pytest.fixture(scope="session")
def _own_store_master(tmp_path_factory):
    """A store with a user's own two traces (the HTA trace-diff pair) and nothing else (no demo)."""
    from store import open_store
    from workbench.ingest import import_files

    path = tmp_path_factory.mktemp("own") / "own.sqlite"
    store = open_store(f"sqlite:///{path}")
    import_files(store, [TRACES / "control" / "control.json.gz", TRACES / "test" / "test.json.gz"])
    with store.engine.connect() as conn:  # fold the WAL into the file before copying it
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return path


@pytest.fixture
def own_url(_own_store_master, tmp_path):
    target = tmp_path / "own.sqlite"
    shutil.copy(_own_store_master, target)
    return f"sqlite:///{target}"
