"""Each store module that defines tables can be used on its own: every foreign key finds
the table it refers to. A store created from the checked-in DDL loads no ORM, so the first
ORM write in a process may import one table module alone (a bisection once failed so:
``bisection.investigation_id`` could not find ``investigation``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

STORE = Path(__file__).resolve().parents[2] / "store"
TABLE_MODULES = sorted(f"store.{p.stem}" for p in STORE.glob("*.py") if "table=True" in p.read_text())

CHECK = """
import importlib, sys
importlib.import_module(sys.argv[1])
from sqlmodel import SQLModel
for table in SQLModel.metadata.sorted_tables:
    for fk in table.foreign_keys:
        fk.column  # raises NoReferencedTableError when the target table is not loaded
"""


@pytest.mark.parametrize("module", TABLE_MODULES)
def test_a_table_module_alone_resolves_its_foreign_keys(module):
    done = subprocess.run([sys.executable, "-c", CHECK, module], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr.strip().splitlines()[-1:]
