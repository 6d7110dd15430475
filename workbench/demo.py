"""The demo: the seed's three worked examples loaded into a store of their own."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import captures

from workbench.errors import WbError
from workbench.ingest import import_files
from workbench.investigations.demo import create_demo_investigations

if TYPE_CHECKING:
    from store.api import Store

DEMO_LENSES = ("inference", "training", "fleet")
# Imported after the lenses' folders (so their runs keep their ids): a run on other hardware,
# the demo's example of a pair the inference lens refuses.
DEMO_EXTRA = ("not-comparable",)


def demo_captures_dir() -> Path:
    return Path(captures.__file__).resolve().parent / "demo"


@dataclass
class DemoLoad:
    imported_runs: list[int] = field(default_factory=list)
    already_there: int = 0
    runs_by_lens: dict[str, int] = field(default_factory=dict)
    investigations: list[int] = field(default_factory=list)


def load_demo(store: "Store") -> DemoLoad:
    """Import the demo captures (idempotent: files already in the store are skipped)."""
    root = demo_captures_dir()
    if not root.is_dir():
        raise WbError(f"demo captures not found at {root}; reinstall wb or run captures/generate_demo.py")
    report = import_files(store, [root / name for name in (*DEMO_LENSES, *DEMO_EXTRA)])
    result = DemoLoad(imported_runs=list(report.run_ids), already_there=len(report.skipped))
    for run in store.list_runs():
        result.runs_by_lens[run.lens] = result.runs_by_lens.get(run.lens, 0) + 1
    result.investigations = _demo_investigations(store)
    return result


def _demo_investigations(store: "Store") -> list[int]:
    """The three seed investigations."""
    created = create_demo_investigations(store)
    return list(created or [])
