"""What a job means (the fleet lens's sample check, DESIGN section 9).

A wait needs its time columns: a file without them gives jobs, never a window (every figure
that needs times is unknown, with that reason). A wait is ``start − eligible``: one below
zero or past a year is not a wait. Allocation never exceeds capacity: a window whose jobs
hold more GPUs at once than the pool has says the capacity (or the gang sizes) is wrong, and
the capacity is kept as unknown rather than a figure that makes idle GPUs negative.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any
from datetime import datetime, timezone

import numpy as np

from lenses.bounds import WAIT_BOUND_S
from store.records import SAMPLES, RunRecord
from store.run_meta import SampleFinding

TIME_COLUMNS = ("submit", "eligible", "start", "end")


def check_jobs(run: RunRecord, epoch: Callable[[Any], float]) -> list[SampleFinding]:
    """The fleet rules over ``run`` in place (``epoch`` reads a pool figure as a number)."""
    table = run.tables.get(SAMPLES)
    if not isinstance(table, dict) or not table:
        return []
    n = len(next(iter(table.values())))
    present = [c for c in TIME_COLUMNS if c in table and bool(np.isfinite(np.asarray(table[c], dtype=float)).any())]
    if not present:
        return [
            SampleFinding(
                code="no_times",
                text=f"the {n:,} jobs carry no times (no Submit, Eligible, Start or End values): queue waits, waiting "
                f"jobs, the window, allocation over time and GPU-hours are unknown",
                count=n,
                of=n,
            )
        ]
    found = _waits(table, n)
    if "start" not in table:
        found.append(
            SampleFinding(
                code="no_start",
                text="the file has no Start column: queue waits, waiting jobs and allocation are unknown",
                of=n,
            )
        )
    elif "eligible" not in present:
        found.append(
            SampleFinding(
                code="no_eligible",
                text="no job has an Eligible time: queue wait (Start − Eligible) is unknown; Start − Submit would "
                "count holds and dependencies",
                of=n,
            )
        )
    found.extend(_capacity(run, table, epoch))
    return found


def _waits(table: dict[str, np.ndarray], n: int) -> list[SampleFinding]:
    """A wait below zero or past a year (and an end before its start) is not one: unknown."""
    found = []
    start = np.asarray(table.get("start", np.full(n, np.nan)), dtype=np.float64)
    for column, other, bad_of in (
        ("eligible", start, lambda own, s: (s - own < 0) | (s - own > WAIT_BOUND_S)),
        ("end", start, lambda own, s: own < s),
    ):
        if column not in table:
            continue
        own = np.asarray(table[column], dtype=np.float64)
        with np.errstate(invalid="ignore"):
            bad = bad_of(own, other) & np.isfinite(own) & np.isfinite(other)
        if not bad.any():
            continue
        own = table[column] = own.copy()
        own[bad] = np.nan
        what = (
            "a queue wait below 0 or past a year (Start − Eligible)" if column == "eligible" else "an End before Start"
        )
        found.append(
            SampleFinding(
                code=f"implausible_{column}",
                text=f"{int(bad.sum()):,} of {n:,} jobs have {what}: their {column} time is kept as unknown",
                count=int(bad.sum()),
                of=n,
            )
        )
    return found


def peak_allocation(table: dict[str, np.ndarray], start: float, end: float) -> tuple[float, float]:
    """The most GPUs held at once inside ``[start, end]``, and when (NaN, NaN when unknown)."""
    n = len(next(iter(table.values())))
    s = np.asarray(table.get("start", np.full(n, np.nan)), dtype=np.float64)
    e = np.asarray(table.get("end", np.full(n, np.nan)), dtype=np.float64)
    gpus = np.asarray(table.get("gpus", np.full(n, np.nan)), dtype=np.float64)
    e = np.where(np.isfinite(e), e, end)
    held = np.isfinite(s) & np.isfinite(gpus) & (gpus > 0) & (s <= end) & (e > start) & (e > s)
    if not held.any():
        return math.nan, math.nan
    times = np.concatenate([np.maximum(s[held], start), e[held]])
    deltas = np.concatenate([gpus[held], -gpus[held]])
    order = np.lexsort((deltas, times))  # at one instant, releases before acquisitions
    level = np.cumsum(deltas[order])
    at = int(np.argmax(level))
    return float(level[at]), float(times[order][at])


def _when(t: float) -> str:
    """A time in words: epoch seconds as UTC, small numbers (a window's own origin) as seconds."""
    if t > 1e8:
        return "at " + datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"at {t:g} s"


def _capacity(run: RunRecord, table: dict[str, np.ndarray], epoch: Callable[[Any], float]) -> list[SampleFinding]:
    pool = run.meta.get("pool")
    if not isinstance(pool, dict):
        return []
    capacity = epoch(pool.get("capacity_gpus"))
    if not math.isfinite(capacity):
        return []
    start, end = epoch(pool.get("window_start")), epoch(pool.get("window_end"))
    if not math.isfinite(start):
        start = -math.inf
    if not math.isfinite(end):
        known = np.concatenate([np.asarray(table[c], dtype=np.float64) for c in ("start", "end") if c in table])
        end = float(np.nanmax(known)) if np.isfinite(known).any() else math.inf
    peak, at = peak_allocation(table, start, end)
    if not (math.isfinite(peak) and peak > capacity):
        return []
    pool["capacity_stated_gpus"] = pool.pop("capacity_gpus")
    pool["capacity_gpus"] = None
    return [
        SampleFinding(
            code="over_capacity",
            text=f"{peak:,.0f} GPUs are allocated at once ({_when(at)}) on a pool of {capacity:,.0f}: allocation "
            f"cannot exceed capacity, so the stated capacity (or a gang size) is wrong; the capacity is kept as "
            f"unknown (idle GPUs and the pool's capacity dimension with it)",
            count=int(peak),
            of=int(capacity),
        )
    ]
