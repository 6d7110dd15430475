"""The recorder's one door to the store, opened by the writer thread on first use.

The recorder runs inside training jobs, so importing it must not pull in the store,
SQLAlchemy or the importers (an import-linter contract in pyproject.toml checks it; this
module is its one named exception). Only when a snapshot is written with a store
configured does the writer thread come here and load the ingest API.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from store import open_store
from workbench.inputs import ImportOptions
from workbench.ingest import import_files


def import_into_store(path: Path, store_url: str) -> Any:
    """Import one snapshot file as ``wb import`` would: one transaction, so the store
    never holds half a snapshot."""
    store = open_store(store_url)
    try:
        return import_files(store, [path], ImportOptions(), origin="recorder")
    finally:
        store.close()
