"""The core tables: captures (provenance), runs, their sources and their columns.

Other groups of tables live in their own modules (investigations, rerun plans) and are
listed in ``ALL_TABLE_MODULES`` so that creating a store creates them all.
"""

from __future__ import annotations

import importlib
from typing import Any, Optional

from sqlalchemy import JSON, Column, ForeignKey, Integer, LargeBinary, UniqueConstraint
from sqlmodel import Field, SQLModel

from store.records import utcnow_iso  # the table modules take it from here

# Modules whose SQLModel tables belong to the schema (imported by load_all_tables).
ALL_TABLE_MODULES: list[str] = [
    "store.tables",
    "store.investigations",
    "store.rerun",
    "store.declarations",
    "store.bisect",
    "store.tokens",
    "store.actions",
]


class Meta(SQLModel, table=True):
    """Key/value facts about the store itself: the schema version above all."""

    __tablename__ = "wb_meta"
    key: str = Field(primary_key=True)
    value: str


class Capture(SQLModel, table=True):
    """An input file, by content: never modified, imported once per digest."""

    __tablename__ = "capture"
    id: Optional[int] = Field(default=None, primary_key=True)
    sha256: str = Field(index=True, unique=True)
    size: int
    name: str  # the original file name
    path: str  # where it was imported from (informational)
    format: str  # the detected format
    importer: str
    importer_version: str
    imported_at: str = Field(default_factory=utcnow_iso)


class Run(SQLModel, table=True):
    """One observation window of one workload."""

    __tablename__ = "run"
    id: Optional[int] = Field(default=None, primary_key=True)
    lens: str = Field(index=True)
    label: str = Field(index=True)
    dimensions: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    window: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    work_unit: Optional[str] = None
    work_amount: Optional[float] = None
    quality: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    sample_count: int = 0
    # "import", "recorder", "bundle" ...: where the run entered this store.
    origin: str = "import"
    created_at: str = Field(default_factory=utcnow_iso)


class RunSource(SQLModel, table=True):
    """Which captures a run came from (a run may span files; a file may hold runs)."""

    __tablename__ = "run_source"
    run_id: int = Field(sa_column=Column(Integer, ForeignKey("run.id", ondelete="CASCADE"), primary_key=True))
    capture_id: int = Field(sa_column=Column(Integer, ForeignKey("capture.id", ondelete="CASCADE"), primary_key=True))


class RunColumn(SQLModel, table=True):
    """One column of one of a run's tables, as ``.npy`` bytes (see ``store.columns``)."""

    __tablename__ = "run_column"
    __table_args__ = (UniqueConstraint("run_id", "table_name", "name"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: int = Field(sa_column=Column(Integer, ForeignKey("run.id", ondelete="CASCADE"), index=True, nullable=False))
    table_name: str
    name: str
    dtype: str
    length: int
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


def load_all_tables() -> None:
    """Import every table module so ``SQLModel.metadata`` holds the whole schema."""
    for module in ALL_TABLE_MODULES:
        importlib.import_module(module)
