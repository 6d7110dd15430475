"""A demo store built once per session and copied for each TUI test."""

from __future__ import annotations

import shutil

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
