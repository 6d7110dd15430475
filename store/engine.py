"""Store URLs and engines: SQLite by default (WAL, foreign keys, busy timeout), PostgreSQL for teams."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

SQLITE_BUSY_TIMEOUT_MS = 10_000


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "wb"


def default_store_url() -> str:
    return f"sqlite:///{default_data_dir() / 'wb.sqlite'}"


def demo_store_url() -> str:
    return f"sqlite:///{default_data_dir() / 'demo.sqlite'}"


def normalize_url(url: str | None) -> str:
    """A SQLAlchemy URL from what the user typed: a URL, a bare path, or nothing (the default)."""
    if not url:
        return default_store_url()
    if "://" not in url:  # a bare path means a SQLite file
        return f"sqlite:///{Path(url).expanduser().resolve()}"
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def display_url(url: str) -> str:
    """The URL with any password hidden, for messages."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def make_engine(url: str) -> "Engine":
    from sqlalchemy import create_engine, event

    url = normalize_url(url)
    if url.startswith("sqlite"):
        path = url.split("sqlite:///", 1)[1] if "sqlite:///" in url else ""
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record) -> None:  # every connection, not just the first
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True)
