"""Persistence: SQLModel tables, engine setup (SQLite default, PostgreSQL for teams),
schema versions, and the queries the rest of wb uses.

``store`` never imports ``workbench`` or ``lenses``. ``store.records`` is pure data
(no database imports) and is the vocabulary every layer shares. sqlmodel loads only
when a store is opened.

Modules: ``records.py`` the shared vocabulary; ``run_meta.py`` a run's ``meta`` and ``window``
typed at their edge; ``api.py`` the ``Store`` (runs and imports in plain SQL); ``engine.py``,
``schema.py``, ``columns.py`` URLs and engines, schema versions, ``.npy`` columns; ``spooled.py`` a
table whose rows wait in a temporary file until the import writes them; ``ddl.py`` the checked-in
CREATE statements; one module per record family (``tables``, ``investigations``, ``rerun``,
``bisect``, ``actions``, ``declarations``, ``tidy``, ``tokens``) with its typed functions;
``evidence.py`` what a hypothesis cites; ``append_only.py`` the triggers that keep history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.api import Store


def open_store(url: str | None = None, *, create: bool = True) -> "Store":
    """Open (and create or upgrade when ``create``) the store at ``url``; see ``store.api``."""
    from store.api import open_store as _open

    return _open(url, create=create)


__all__ = ["open_store"]
