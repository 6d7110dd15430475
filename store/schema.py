"""Schema versions: create a new store, upgrade an older one, refuse a newer one.

The version lives in ``wb_meta``. A migration is a function that takes a connection
inside a transaction and moves the schema from version N to N+1. A store made by a
newer wb, or a database that is not a wb store, is refused with a clear message
rather than misread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from store.errors import SchemaError

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine

SCHEMA_VERSION = 1

# MIGRATIONS[n] upgrades a store at version n to n + 1. Version 1 is the first release.
MIGRATIONS: dict[int, Callable[["Connection"], None]] = {}


def read_version(conn: "Connection") -> int | None:
    from sqlalchemy import inspect, text

    tables = set(inspect(conn).get_table_names())
    if "wb_meta" not in tables:
        if tables & {"run", "capture"} or tables:
            raise SchemaError(f"this database is not a wb store (it has tables {', '.join(sorted(tables)[:5])} but no wb_meta)")
        return None
    row = conn.execute(text("SELECT value FROM wb_meta WHERE key = 'schema_version'")).first()
    if row is None:
        raise SchemaError("this wb store has no schema version; it may be damaged")
    try:
        return int(row[0])
    except ValueError:
        raise SchemaError(f"this wb store has an unreadable schema version {row[0]!r}") from None


def ensure_schema(engine: "Engine", *, create: bool = True) -> int:
    """Create or upgrade the schema; return the version now in force."""
    from sqlalchemy import text
    from sqlmodel import SQLModel

    from store.tables import load_all_tables

    load_all_tables()
    with engine.begin() as conn:
        version = read_version(conn)
        if version is None:
            if not create:
                raise SchemaError("no wb store here (nothing has been imported yet)")
            SQLModel.metadata.create_all(conn)
            conn.execute(
                text("INSERT INTO wb_meta (key, value) VALUES ('schema_version', :v)"),
                {"v": str(SCHEMA_VERSION)},
            )
            return SCHEMA_VERSION
        if version > SCHEMA_VERSION:
            raise SchemaError(
                f"this store has schema version {version}, newer than this wb understands ({SCHEMA_VERSION}); "
                "upgrade wb to use it"
            )
        while version < SCHEMA_VERSION:
            step = MIGRATIONS.get(version)
            if step is None:
                raise SchemaError(f"no migration from schema version {version}; this store cannot be upgraded")
            step(conn)
            version += 1
            conn.execute(text("UPDATE wb_meta SET value = :v WHERE key = 'schema_version'"), {"v": str(version)})
        # Tables added in this version without a migration of their own (new groups) are created empty.
        SQLModel.metadata.create_all(conn)
        return version
