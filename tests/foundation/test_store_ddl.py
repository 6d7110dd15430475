"""store.ddl: the checked-in DDL that creates a store without the ORM is what the table
classes generate, and a store made from it has the schema ``create_all`` makes (SQLite
and PostgreSQL)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest
from sqlalchemy import create_engine, text

from store import open_store
from store.ddl import DIALECTS, STATEMENTS, generate
from store.engine import make_engine


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_checked_in_ddl_is_what_the_table_classes_generate(dialect):
    assert STATEMENTS[dialect] == generate(dialect), "the tables changed: run .venv/bin/python -m store.ddl"


def test_creating_a_store_imports_neither_sqlalchemy_nor_sqlmodel(tmp_path):
    script = (
        "import sys\nfrom store import open_store\nopen_store(sys.argv[1]).ensure_exists()\n"
        "print(sorted(m for m in ('sqlalchemy', 'sqlmodel') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "wb.sqlite")], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def _sqlite_schema(path) -> dict[tuple[str, str], str]:
    conn = sqlite3.connect(path)
    try:
        return {(t, n): sql for t, n, sql in conn.execute("SELECT type, name, sql FROM sqlite_master")}
    finally:
        conn.close()


def _create_all(url: str) -> None:
    from sqlmodel import SQLModel

    from store.tables import load_all_tables

    load_all_tables()
    engine = make_engine(url)
    SQLModel.metadata.create_all(engine)
    engine.dispose()


def test_a_sqlite_store_from_the_ddl_is_the_one_create_all_makes(tmp_path):
    ours, orm = tmp_path / "ddl.sqlite", tmp_path / "orm.sqlite"
    open_store(str(ours)).ensure_exists()
    _create_all(f"sqlite:///{orm}")
    assert _sqlite_schema(ours) == _sqlite_schema(orm)  # the same statements, byte for byte


_PG_SCHEMA = {
    "columns": "SELECT table_name, column_name, data_type, is_nullable, column_default, ordinal_position "
    "FROM information_schema.columns WHERE table_schema = current_schema()",
    "constraints": "SELECT tc.table_name, tc.constraint_type, tc.constraint_name, kcu.column_name, rc.delete_rule "
    "FROM information_schema.table_constraints tc "
    "LEFT JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name "
    "AND kcu.table_schema = tc.table_schema "
    "LEFT JOIN information_schema.referential_constraints rc ON rc.constraint_name = tc.constraint_name "
    "WHERE tc.table_schema = current_schema() AND tc.constraint_type <> 'CHECK'",
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()",
    "sequences": "SELECT sequence_name, data_type FROM information_schema.sequences WHERE sequence_schema = "
    "current_schema()",
    # the append-only history's triggers (store.append_only)
    "triggers": "SELECT event_object_table, trigger_name, event_manipulation, action_timing, action_statement "
    "FROM information_schema.triggers WHERE trigger_schema = current_schema()",
}


def _pg_schema(url: str) -> dict[str, set[tuple]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return {k: {tuple(r) for r in conn.execute(text(q))} for k, q in _PG_SCHEMA.items()}
    finally:
        engine.dispose()


@pytest.mark.store
def test_a_postgresql_store_from_the_ddl_is_the_one_create_all_makes():
    from tests.conftest import PG_ADMIN_URL, _pg_url

    if not PG_ADMIN_URL:
        pytest.skip("PostgreSQL store tests need WB_TEST_POSTGRES_URL (.ci/run sets it)")
    import uuid

    admin = create_engine(_pg_url(PG_ADMIN_URL, "postgres"), isolation_level="AUTOCOMMIT")
    names = [f"wb_test_{uuid.uuid4().hex[:12]}" for _ in range(2)]
    try:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
        ours, orm = (_pg_url(PG_ADMIN_URL, n) for n in names)
        open_store(ours).close()
        _create_all(orm)
        a, b = _pg_schema(ours), _pg_schema(orm)
        assert a["columns"] and a["triggers"] and a == b
    finally:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
