"""Schema versions: create a new store, upgrade an older one, refuse a newer one.

The version lives in ``wb_meta``. A migration is a function that takes a connection
inside a transaction and moves the schema from version N to N+1. A store made by a
newer wb, or a database that is not a wb store, is refused with a clear message
rather than misread.

Opening is cheap: ``state`` reads the table names and ``wb_meta`` with two queries and
no ORM. Creating a store is too: an empty database gets the checked-in DDL
(``store.ddl``). ``wb_meta`` also records the fingerprint of the table code that last created
tables in the store (``tables``); while it matches, nothing is created, so the ORM
is imported only by a process that writes or has tables to add (a new table group is
created empty in old stores, without a migration). Every change runs in one
transaction under a lock (SQLite ``BEGIN IMMEDIATE``, a PostgreSQL advisory lock)
that re-reads the state first: concurrent first uses create the tables once, and a
killed creation leaves nothing behind.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.ddl import STATEMENTS
from store.errors import SchemaError

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

SCHEMA_VERSION = 5


def _add_api_tokens(conn: "Connection") -> None:
    """1 -> 2: the ``api_token`` table of ``wb serve`` (store/tokens.py), created empty."""
    from store.tokens import ApiToken  # the ORM: loaded only to upgrade

    ApiToken.__table__.create(conn, checkfirst=True)  # type: ignore[attr-defined]


def _plans_belong_to_investigations(conn: "Connection") -> None:
    """2 -> 3: ``rerun_plan.investigation_id``, the investigation a plan verifies (NULL for
    the plans made before: they belong to none, so they decide no hypothesis)."""
    query = sqlalchemy_query(conn)
    if "rerun_plan" not in table_names(query, conn.dialect.name):
        return  # the rerun tables are created (with the column) when first needed
    if conn.dialect.name == "sqlite":
        columns = {r[1] for r in query("PRAGMA table_info(rerun_plan)")}
    else:
        columns = {
            r[0]
            for r in query(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = 'rerun_plan'"
            )
        }
    if "investigation_id" not in columns:
        conn.exec_driver_sql(
            "ALTER TABLE rerun_plan ADD COLUMN investigation_id INTEGER REFERENCES investigation (id) ON DELETE "
            "RESTRICT"
        )


def _add_actions(conn: "Connection") -> None:
    """3 -> 4: the action tables (store/actions.py: proposed changes, their approvals and
    rejections, the plans that verify them), created empty."""
    from sqlmodel import SQLModel  # the ORM: loaded only to upgrade

    from store.actions import Action, ActionDecision, ActionVerification
    from store.investigations import ImportedBundle, Investigation
    from store.rerun import RerunPlan

    # With the tables they refer to (created only where missing), dependencies first.
    kinds = (ImportedBundle, Investigation, RerunPlan, Action, ActionDecision, ActionVerification)
    tables = [t.__table__ for t in kinds]  # type: ignore[union-attr]
    SQLModel.metadata.create_all(conn, tables=tables, checkfirst=True)


def _columns(query: Query, dialect: str, table: str) -> set[str]:
    if dialect == "sqlite":
        return {r[1] for r in query(f"PRAGMA table_info({table})")}
    return {
        r[0]
        for r in query(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = :t",
            {"t": table},
        )
    }


def _history_is_append_only(conn: "Connection") -> None:
    """4 -> 5: the database refuses a change to decision and declaration history (triggers,
    ``store.append_only``); a hypothesis names the kind of its test and the evidence that
    existed when it was written (``test_kind``, ``evidence_before``: NULL for the hypotheses
    made before, which any decisive kind may decide, after their time)."""
    from store.append_only import install  # plain DDL strings: no ORM

    query = sqlalchemy_query(conn)
    dialect = conn.dialect.name
    tables = table_names(query, dialect)
    if "hypothesis" in tables:
        have = _columns(query, dialect, "hypothesis")
        if "test_kind" not in have:
            conn.exec_driver_sql("ALTER TABLE hypothesis ADD COLUMN test_kind VARCHAR")
        if "evidence_before" not in have:
            conn.exec_driver_sql("ALTER TABLE hypothesis ADD COLUMN evidence_before JSON")
    install(conn, dialect, tables)


# MIGRATIONS[n] upgrades a store at version n to n + 1. Version 1 is the first release.
MIGRATIONS: dict[int, Callable[["Connection"], None]] = {
    1: _add_api_tokens,
    2: _plans_belong_to_investigations,
    3: _add_actions,
    4: _history_is_append_only,
}

# What ``state`` finds.
READY = "ready"  # the version and the tables of this wb
ABSENT = "absent"  # no wb tables yet (an empty database, or an older creation that was cut short)
CHANGE = "change"  # an older version to upgrade, or tables to add

# pg_advisory_xact_lock key: "wb schema" (any constant; held only while the schema changes).
_PG_LOCK = 0x77622D736368656D

Query = Callable[..., list[tuple[Any, ...]]]  # (sql, params=None) -> rows


@cache
def tables_fingerprint() -> str:
    """SHA-256 of the store package's source with the schema version: it changes when
    a table may have been added or changed (``create_all`` then runs once per store)."""
    digest = hashlib.sha256(f"schema {SCHEMA_VERSION}\n".encode())
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def table_names(query: Query, dialect: str) -> set[str]:
    if dialect == "sqlite":
        return {r[0] for r in query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
    return {r[0] for r in query("SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()")}


def state(query: Query, dialect: str) -> tuple[str, int | None]:
    """(READY | ABSENT | CHANGE, the version found); raises SchemaError for a store this
    wb must not touch (newer, not a wb store, damaged)."""
    tables = table_names(query, dialect)
    if not tables:
        return ABSENT, None
    if "wb_meta" not in tables:
        raise SchemaError(
            f"this database is not a wb store (it has tables {', '.join(sorted(tables)[:5])} but no wb_meta)"
        )
    meta = dict(query("SELECT key, value FROM wb_meta"))
    raw = meta.get("schema_version")
    if raw is None:
        # Only an older wb's creation cut short leaves wb_meta without a version (it
        # created tables outside a transaction); with no data in it, creating again repairs it.
        if any(query(f"SELECT 1 FROM {t} LIMIT 1") for t in ("run", "capture") if t in tables):
            raise SchemaError(
                "this wb store has no schema version but holds runs; it may be damaged "
                "(keep a copy, then export what you need with 'wb bundle export')"
            )
        return ABSENT, None
    try:
        version = int(raw)
    except ValueError:
        raise SchemaError(f"this wb store has an unreadable schema version {raw!r}") from None
    if version > SCHEMA_VERSION:
        raise SchemaError(
            f"this store has schema version {version}, newer than this wb understands ({SCHEMA_VERSION}); "
            "upgrade wb to use it"
        )
    if version < SCHEMA_VERSION or meta.get("tables") != tables_fingerprint():
        return CHANGE, version
    return READY, version


def sqlalchemy_query(conn: "Connection") -> Query:
    from sqlalchemy import text

    return lambda sql, params=None: list(conn.execute(text(sql), params or {}).all())


def create(execute: Callable[[str], Any], dialect: str) -> None:
    """A new store's schema in the caller's transaction, from the checked-in DDL (no ORM):
    every table and index, then the version and the tables' fingerprint in ``wb_meta``.
    ``execute(sql)`` runs one statement as is (no parameters)."""
    for statement in STATEMENTS[dialect]:
        execute(statement)
    execute(
        f"INSERT INTO wb_meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}'), "
        f"('tables', '{tables_fingerprint()}')"
    )


def apply(conn: "Connection") -> int:
    """Under the schema lock, in the caller's transaction: bring the store to this wb's
    schema (create, upgrade, add tables); return the version now in force."""
    from sqlalchemy import text

    dialect = conn.dialect.name
    if dialect == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")  # the write lock first: the state read next stays true
    elif dialect == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK})
    query = sqlalchemy_query(conn)
    found, version = state(query, dialect)
    if found == READY:
        return int(version)  # type: ignore[arg-type]
    if found == ABSENT and dialect in STATEMENTS and not table_names(query, dialect):  # an empty database
        create(conn.exec_driver_sql, dialect)
        return SCHEMA_VERSION
    from sqlmodel import SQLModel  # the ORM: upgrades and table groups new to an older store

    from store.tables import load_all_tables

    load_all_tables()
    if found == ABSENT:
        version = SCHEMA_VERSION
    else:
        while version < SCHEMA_VERSION:  # type: ignore[operator]
            step = MIGRATIONS.get(version)  # type: ignore[arg-type]
            if step is None:
                raise SchemaError(f"no migration from schema version {version}; this store cannot be upgraded")
            step(conn)
            version += 1  # type: ignore[operator]
    # New tables (a new group, or the whole schema) are created empty; existing ones are kept.
    SQLModel.metadata.create_all(conn)
    conn.execute(text("DELETE FROM wb_meta WHERE key IN ('schema_version', 'tables')"))
    conn.execute(
        text("INSERT INTO wb_meta (key, value) VALUES ('schema_version', :v), ('tables', :t)"),
        {"v": str(version), "t": tables_fingerprint()},
    )
    return int(version)  # type: ignore[arg-type]
