"""Shared fixtures, and a hermetic test session.

``store_url`` gives each test a fresh, empty store: SQLite always, and PostgreSQL too
when ``WB_TEST_POSTGRES_URL`` names a server (``.ci/run`` starts one), so store tests
run on both backends.

The whole session runs with ``HOME``, ``XDG_DATA_HOME``, ``XDG_CONFIG_HOME``,
``XDG_CACHE_HOME`` and ``WB_STORE`` inside pytest's temporary directory (set before the
first test, in this process and in every xdist worker, and so in every ``wb`` they
start). The real data, config and cache folders of wb are listed before the session and
after it; a run that wrote anything there fails (``pytest_sessionfinish``).
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

HERMETIC_VARIABLES = ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "WB_STORE")


def _real_wb_folders() -> list[Path]:
    """wb's folders as the user's environment names them (read before the session changes it)."""
    home = Path(os.path.expanduser("~"))
    folders = []
    for variable, fallback in (
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_CACHE_HOME", ".cache"),
    ):
        folders.append(Path(os.environ.get(variable) or home / fallback) / "wb")
        folders.append(home / fallback / "wb")
    return sorted(set(folders))


def _listing(folders: list[Path]) -> dict[str, tuple[int, int]]:
    seen = {}
    for folder in folders:
        if folder.is_dir():
            for path in folder.rglob("*"):
                try:
                    st = path.lstat()
                except OSError:
                    continue
                seen[str(path)] = (st.st_size, st.st_mtime_ns)
    return seen


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the controlling process: the real folders, before any test
        config._wb_real_folders = _real_wb_folders()
        config._wb_real_before = _listing(config._wb_real_folders)


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if hasattr(config, "workerinput") or not hasattr(config, "_wb_real_folders"):
        return
    after = _listing(config._wb_real_folders)
    written = sorted(p for p, v in after.items() if config._wb_real_before.get(p) != v)
    if written:
        shown = ", ".join(written[:10]) + (f" and {len(written) - 10} more" if len(written) > 10 else "")
        print(f"\nwb tests: the suite wrote outside its temporary directories: {shown}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session", autouse=True)
def hermetic_environment(tmp_path_factory):
    """HOME, the XDG folders and WB_STORE inside pytest's temporary directory, for the session
    (XDG_RUNTIME_DIR too: the recorders' control sockets, mode 0700 as a runtime directory is)."""
    base = tmp_path_factory.mktemp("home")
    values = {
        "HOME": base,
        "XDG_DATA_HOME": base / ".local" / "share",
        "XDG_CONFIG_HOME": base / ".config",
        "XDG_CACHE_HOME": base / ".cache",
        "XDG_RUNTIME_DIR": base / "run",
    }
    with pytest.MonkeyPatch.context() as mp:
        for name, path in values.items():
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
            mp.setenv(name, str(path))
        mp.setenv("WB_STORE", f"sqlite:///{base / 'session-store.sqlite'}")
        yield base


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


def run_wb_here(*args: str):
    """``wb args...`` in this process, through ``main`` (its exit code and one-line errors, as a shell gets
    them), where a test checks what wb says and does rather than the process boundary: no interpreter start
    per call (``run_wb`` is the subprocess). Returns a CompletedProcess (text) like ``run_wb``."""
    import contextlib
    import io
    import subprocess

    from workbench.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return subprocess.CompletedProcess(["wb", *args], code, out.getvalue(), err.getvalue())


def run_wb(*args: str, env: dict | None = None, input: str | None = None, cwd: Path | None = None):
    """Run ``python -m workbench`` in a subprocess; returns CompletedProcess (text)."""
    import subprocess
    import sys

    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        env=full_env,
        input=input,
        cwd=cwd,
        timeout=300,
    )
