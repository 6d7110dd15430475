"""Store URLs and connections: SQLite by default (WAL, foreign keys, busy timeout), PostgreSQL for teams.

Reading a SQLite store needs no SQLAlchemy: ``connect_sqlite`` is the standard
library's driver with the same settings, and costs a millisecond where importing
SQLAlchemy costs a good part of a second. ``make_engine`` is for writes and for
PostgreSQL.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    import sqlite3

    from sqlalchemy.engine import Engine

SQLITE_BUSY_TIMEOUT_MS = 10_000
# Every writing connection's settings (a read-only one skips the first).
SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA foreign_keys=ON",
    f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}",
    "PRAGMA synchronous=NORMAL",
)


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "wb"


def default_store_url() -> str:
    return f"sqlite:///{default_data_dir() / 'wb.sqlite'}"


def demo_store_url() -> str:
    return f"sqlite:///{default_data_dir() / 'demo.sqlite'}"


def work_dir(url: str) -> Path:
    """Where the files that belong to the store at ``url`` live (rerun and bisect work folders).

    Beside a SQLite file ``DIR/NAME.sqlite``: ``DIR/NAME.work/``, so a store named with
    ``--store``/``WB_STORE`` keeps its runs' files with it, never in the default data
    directory. A server store has no directory of its own: its files go under the data
    directory in a folder named after the server and database (no credentials).
    """
    path = sqlite_path(url)
    if path is not None:
        return path.with_name(f"{path.stem}.work")
    import hashlib  # only for a server or in-memory store, never on the SQLite path

    shown = display_url(url)
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in shown.split("://", 1)[-1])[:60]
    return default_data_dir() / "work" / f"{name}-{hashlib.sha256(shown.encode()).hexdigest()[:8]}"


def normalize_url(url: str | None) -> str:
    """A SQLAlchemy URL from what the user typed: a URL, a bare path, or nothing (the default)."""
    if not url:
        return default_store_url()
    if "://" not in url:  # a bare path means a SQLite file
        return f"sqlite:///{Path(url).expanduser().resolve()}"
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite store URL (None for another backend or an in-memory database)."""
    if not url.startswith("sqlite"):
        return None
    scheme, sep, rest = url.partition(":///")
    if not sep or scheme not in ("sqlite", "sqlite+pysqlite") or "?" in rest:
        return None  # another driver or URI parameters: leave the URL to SQLAlchemy
    if rest in ("", ":memory:"):
        return None
    return Path(rest)


def in_memory(url: str) -> bool:
    """True for a SQLite URL whose database lives in memory (``sqlite://``,
    ``sqlite:///:memory:``, ``mode=memory``): it vanishes when the process exits."""
    if not url.startswith("sqlite"):
        return False
    _scheme, sep, rest = url.partition("://")
    rest = rest.removeprefix("/") if sep else rest
    return (
        rest in ("", ":memory:")
        or rest.startswith(":memory:?")
        or rest.startswith("file::memory:")
        or "mode=memory" in rest
    )


def display_url(url: str) -> str:
    """The URL with any password hidden, for messages."""
    if url.startswith("sqlite"):  # no credentials in a file URL; no SQLAlchemy import for it
        return url
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def writable(path: Path) -> bool:
    """Whether wb may write the SQLite store at ``path``: the file and its directory (for
    the WAL and the lock files) both writable."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _sqlite_uri(path: Path, read_only: bool, *, create: bool = False) -> str:
    if not read_only:  # never an implicit new file: a store is created on purpose (store.api)
        return f"file:{quote(str(path))}?mode={'rwc' if create else 'rw'}"
    # A read-only directory cannot take the -shm file a WAL reader needs; with no -wal
    # file there is nothing beyond the main file to read, so it is opened as immutable.
    immutable = not os.access(path.parent, os.W_OK) and not Path(f"{path}-wal").exists()
    return f"file:{quote(str(path))}?mode=ro" + ("&immutable=1" if immutable else "")


def connect_sqlite(path: Path, *, read_only: bool = False, create: bool = False) -> "sqlite3.Connection":
    """A standard-library connection in autocommit mode (the caller says BEGIN);
    ``create``: the file may be new (a store being created)."""
    import sqlite3

    conn = sqlite3.connect(
        _sqlite_uri(path, read_only, create=create),
        uri=True,
        timeout=SQLITE_BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,
        check_same_thread=False,
    )
    conn.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    return conn


def make_engine(url: str, *, read_only: bool = False) -> "Engine":
    from sqlalchemy import create_engine, event

    url = normalize_url(url)
    if url.startswith("sqlite"):
        path = sqlite_path(url)
        if path is not None:  # the stdlib driver with our URI (read-only stores open with mode=ro)
            import sqlite3

            from sqlalchemy.pool import QueuePool

            uri = _sqlite_uri(path, read_only, create=not path.exists())
            # A URL without a path reads as an in-memory database, whose default pool
            # (SingletonThreadPool) closes other threads' connections under load: a file
            # store takes the pool a file URL would (the TUI reads from several workers).
            engine = create_engine(
                "sqlite+pysqlite://",
                poolclass=QueuePool,
                creator=lambda: sqlite3.connect(
                    uri, uri=True, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000, check_same_thread=False
                ),
            )
        else:
            engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record) -> None:  # every connection, not just the first
            cur = dbapi_conn.cursor()
            for pragma in SQLITE_PRAGMAS if not read_only else SQLITE_PRAGMAS[1:]:
                cur.execute(pragma)
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True)
