"""Shared fixtures.

``store_url`` gives each test a fresh, empty store: SQLite always, and PostgreSQL too
when ``WB_TEST_POSTGRES_URL`` names a server (``.ci/run`` starts one), so store tests
run on both backends.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
REAL_CAPTURES = SHARED / "real-captures"

PG_ADMIN_URL = os.environ.get("WB_TEST_POSTGRES_URL")
BACKENDS = ["sqlite", "postgresql"]


def _pg_url(base: str, dbname: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(base).set(drivername="postgresql+psycopg", database=dbname).render_as_string(hide_password=False)


@pytest.fixture(params=BACKENDS)
def store_url(request, tmp_path):
    """A fresh store URL on each backend (PostgreSQL is skipped when no server is configured)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'wb.sqlite'}"
        return
    if not PG_ADMIN_URL:
        pytest.skip("PostgreSQL store tests need WB_TEST_POSTGRES_URL (.ci/run sets it)")
    from sqlalchemy import create_engine, text

    dbname = f"wb_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(_pg_url(PG_ADMIN_URL, "postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{dbname}"'))
    try:
        yield _pg_url(PG_ADMIN_URL, dbname)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'wb.sqlite'}"


@pytest.fixture
def wb_env(tmp_path, monkeypatch):
    """An environment where the default and demo stores live under tmp_path."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("WB_STORE", raising=False)
    return tmp_path


def run_wb(*args: str, env: dict | None = None, input: str | None = None, cwd: Path | None = None):
    """Run ``python -m workbench`` in a subprocess; returns CompletedProcess (text)."""
    import subprocess
    import sys

    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, env=full_env, input=input, cwd=cwd, timeout=300)
