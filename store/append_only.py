"""Append-only history, kept by the database itself.

Decisions (an action's approvals and rejections, its verifications, a hypothesis's status
history), the actions they decide and `wb declare` declarations are history: a row is
written once and never changed nor removed. The ORM refuses it first (each table module's
``before_update``/``before_delete`` guard); the triggers made here refuse it in the
database, so a bulk ``UPDATE``/``DELETE`` through a session, or raw SQL from any client,
is refused too (SQLite ``RAISE(ABORT)``, a PostgreSQL exception).

A history row goes only with the record it belongs to: removing a run removes its
declarations, removing an action (never done by wb: only with its investigation) its
decisions. So the ``DELETE`` trigger refuses while the owner row still exists; the
owner's ``ON DELETE CASCADE`` runs after the owner is gone, and passes.

The triggers are made with each table (``after_create``: ``create_all`` and the checked-in
DDL of ``store.ddl`` both hold them) and, for a store made before them, by the schema
migration to version 5 (``store.schema``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Table

# table -> (the owner table, the column that names the owner row)
APPEND_ONLY: dict[str, tuple[str, str]] = {
    "action": ("investigation", "investigation_id"),
    "action_decision": ("action", "action_id"),
    "action_verification": ("action", "action_id"),
    "hypothesis_status": ("hypothesis", "hypothesis_id"),
    "dimension_declaration": ("run", "run_id"),
}


def message(table: str, verb: str) -> str:
    return f"{table} is append-only history: a row is never {verb}"


def statements(dialect: str, table: str) -> tuple[str, ...]:
    """The DDL that makes ``table`` append-only on ``dialect`` (none for a table that is not history)."""
    if table not in APPEND_ONLY:
        return ()
    owner, column = APPEND_ONLY[table]
    changed, removed = message(table, "changed"), message(table, "removed while its " + owner + " exists")
    if dialect == "sqlite":
        return (
            f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} BEGIN SELECT RAISE(ABORT, '{changed}'); END",
            f"CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} "
            f"WHEN EXISTS (SELECT 1 FROM {owner} WHERE id = OLD.{column}) "
            f"BEGIN SELECT RAISE(ABORT, '{removed}'); END",
        )
    if dialect == "postgresql":
        # No '%' anywhere: the driver would read it as a parameter marker.
        return (
            f"CREATE FUNCTION {table}_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF TG_OP = 'UPDATE' THEN RAISE EXCEPTION USING MESSAGE = '{changed}', ERRCODE = 'restrict_violation'; "
            f"END IF; "
            f"IF EXISTS (SELECT 1 FROM {owner} WHERE id = OLD.{column}) THEN "
            f"RAISE EXCEPTION USING MESSAGE = '{removed}', ERRCODE = 'restrict_violation'; END IF; "
            f"RETURN OLD; END $$",
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {table}_append_only()",
        )
    return ()


def attach(table: "Table") -> None:
    """Make the triggers whenever ``table`` is created (``create_all``, a new table group)."""
    from sqlalchemy import DDL, event

    for dialect in ("sqlite", "postgresql"):
        for statement in statements(dialect, table.name):
            event.listen(table, "after_create", DDL(statement).execute_if(dialect=dialect))


def install(conn: object, dialect: str, existing: set[str]) -> None:
    """Make the triggers on the history tables a store already has (the migration to 5)."""
    execute = conn.exec_driver_sql  # type: ignore[attr-defined]
    for table in sorted(set(APPEND_ONLY) & existing):
        if dialect == "sqlite":
            execute(f"DROP TRIGGER IF EXISTS {table}_no_update")
            execute(f"DROP TRIGGER IF EXISTS {table}_no_delete")
        elif dialect == "postgresql":
            execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}")
            execute(f"DROP FUNCTION IF EXISTS {table}_append_only()")
        for statement in statements(dialect, table):
            execute(statement)
