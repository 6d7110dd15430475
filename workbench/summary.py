"""Describe a run's columns: counts, missing, mean and quantiles. Descriptive only.

These figures pool the samples of one run; they describe it and are never an
interval or a test (the independent unit for those is a run).
"""

from __future__ import annotations


import numpy as np

from store.records import RunRecord


def column_summary(values: np.ndarray) -> dict[str, object]:
    """count, missing, mean, p50, p95, min, max of a numeric column; None where unknown."""
    arr = np.asarray(values, dtype=np.float64)
    known = arr[~np.isnan(arr)]
    out: dict[str, object] = {"count": int(known.size), "missing": int(arr.size - known.size)}
    if known.size == 0:
        return {**out, "mean": None, "p50": None, "p95": None, "min": None, "max": None}
    p50, p95 = np.percentile(known, [50, 95])
    return {
        **out,
        "mean": float(known.mean()),
        "p50": float(p50),
        "p95": float(p95),
        "min": float(known.min()),
        "max": float(known.max()),
    }


def duration_columns(record: RunRecord, table: str = "samples") -> list[str]:
    cols = record.tables.get(table, {})
    return [
        name for name, arr in cols.items() if (name.endswith("_ms") or name.endswith("_s")) and arr.dtype.kind == "f"
    ]


def run_summary(record: RunRecord) -> dict[str, dict[str, object]]:
    """A descriptive summary of every duration column of the run's samples."""
    samples = record.tables.get("samples", {})
    return {name: column_summary(samples[name]) for name in duration_columns(record)}
