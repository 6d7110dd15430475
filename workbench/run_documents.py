"""The ``--json`` documents of ``wb runs`` and ``wb show``, built in one place.

``wb runs``/``wb show`` print them (or draw them), and ``wb serve`` answers ``GET /runs``
and ``GET /runs/{id}`` with them, so a client drawing a served document draws what a
local command would (``wb --server URL runs`` is byte-identical to ``wb runs``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.compare.host_activity import within_run
from workbench.summary import run_summary

if TYPE_CHECKING:
    from store.api import RunSummary, Store


def runs_json(runs: Sequence["RunSummary"]) -> list[dict[str, object]]:
    """``wb runs --json``."""
    return [
        {
            "id": r.id,
            "lens": r.lens,
            "label": r.label,
            "dimensions": r.dimension_values(),
            "dimension_sources": {k: v.source for k, v in r.dimensions.items()},
            "window": r.window,
            "samples": r.sample_count,
            "origin": r.origin,
            "created_at": r.created_at,
        }
        for r in runs
    ]


def run_document(record, captures) -> dict[str, object]:
    """``wb show --json`` without the declaration history (``show_document`` adds it)."""
    return {
        "id": record.id,
        "lens": record.lens,
        "label": record.label,
        "dimensions": {k: d.to_json() for k, d in sorted(record.dimensions.items())},
        "window": record.window,
        "work": {"unit": record.work.unit, "amount": record.work.amount} if record.work else None,
        "quality": record.quality,
        "samples": record.sample_count,
        "tables": {
            name: {"rows": len(next(iter(cols.values()))) if cols else 0, "columns": sorted(cols)}
            for name, cols in record.tables.items()
        },
        "phases": run_summary(record),
        "captures": [
            {
                "sha256": c.sha256,
                "name": c.name,
                "size": c.size,
                "format": c.format,
                "importer": f"{c.importer} {c.importer_version}",
                "imported_at": c.imported_at,
            }
            for c in captures
        ],
        "meta": record.meta,
    }


def show_document(store: "Store", run_id: int) -> dict[str, object]:
    """``wb show RUN --json`` for a resolved run id."""
    from store.declarations import history  # loads SQLAlchemy: not for 'wb show --help'

    record = store.load_run(run_id)
    doc = run_document(record, list(store.run_captures(run_id)))
    doc["declarations"] = [d.to_json() for d in history(store, [run_id])]
    host = within_run(record)  # a flight recorder's stacks, CPU and GC: slow spans against the others
    if host is not None:
        doc["host_activity"] = host.to_json()
    return doc
