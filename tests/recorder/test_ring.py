"""Bounded retention: the byte and age budgets hold however long the run."""

from __future__ import annotations

import gc
import tracemalloc

from workbench.recorder import Budget
from workbench.recorder.ring import SegmentRing


def ring(max_bytes=64 * 1024, max_age_ns=None, segment_rows=256, seal_every_ns=float("inf")):
    return SegmentRing(
        "spans",
        ("a", "b", "c", "d", "e"),
        max_bytes=max_bytes,
        max_age_ns=max_age_ns,
        segment_rows=segment_rows,
        seal_every_ns=seal_every_ns,
    )


def fill(r: SegmentRing, rows: int, t0: float = 0.0, dt: float = 1.0) -> float:
    t = t0
    for i in range(rows):
        t += dt
        r.append([float(i), 0.0, 0.0, t, t])
        if r.full():
            r.seal(t)
    return t


def test_byte_budget_holds_and_evictions_are_counted():
    r = ring(max_bytes=64 * 1024)
    fill(r, 200_000)
    view = r.view(1e12)
    assert view.nbytes <= r.max_bytes
    # Nearly all of the budget is used: trimming is by whole small segments.
    assert view.nbytes >= 0.8 * r.max_bytes
    assert view.rows + view.evicted_rows == 200_000
    assert view.evicted_segments > 0
    # The newest rows are the ones kept, in order.
    last = view.segments[-1].values
    assert last[-5] == 199_999.0
    firsts = [s.values[0] for s in view.segments]
    assert firsts == sorted(firsts)


def test_segment_is_capped_at_a_sixteenth_of_the_budget():
    r = ring(max_bytes=16 * 1024, segment_rows=1_000_000)
    assert r.segment_rows * 5 * 8 <= 16 * 1024 / 16


def test_age_budget_drops_old_segments():
    r = ring(max_bytes=1 << 20, max_age_ns=1000.0, segment_rows=10)
    fill(r, 100, t0=0.0, dt=1.0)  # t = 1..100, sealed every 10 rows
    r.append([1.0, 0, 0, 5000.0, 5000.0])
    view = r.view(5000.0)
    # Everything sealed before t=4000 is older than the age budget.
    assert view.rows == 1
    assert view.evicted_rows == 100


def test_age_trim_happens_without_new_rows():
    r = ring(max_bytes=1 << 20, max_age_ns=100.0, segment_rows=10)
    fill(r, 50)
    assert r.view(60.0).rows == 50
    r.maybe_seal(10_000.0)  # an idle process: housekeeping alone trims by age
    assert r.view(10_000.0).rows == 0


def test_time_based_seal():
    r = ring(max_bytes=1 << 20, segment_rows=1000, seal_every_ns=50.0)
    r.append([0.0, 0, 0, 1.0, 1.0])
    r.maybe_seal(10.0)
    assert len(r.active) == 5
    r.maybe_seal(60.0)
    assert len(r.active) == 0 and r.view(60.0).rows == 1


def test_memory_stays_flat_over_a_long_run():
    """Traced memory after 180k rows equals that after 60k rows (budget reached)."""
    budget = 256 * 1024
    r = ring(max_bytes=budget, segment_rows=512)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        t = fill(r, 60_000)
        at_budget = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.reset_peak()
        fill(r, 120_000, t0=t)
        later, peak = (v - base for v in tracemalloc.get_traced_memory())
    finally:
        tracemalloc.stop()
    unbounded = 180_000 * 5 * 8
    assert at_budget <= 1.10 * budget
    assert later <= 1.10 * budget and peak <= 1.15 * budget
    assert abs(later - at_budget) <= 0.10 * budget
    assert unbounded > 25 * budget  # the run really was far past the budget


def test_budget_validation():
    import pytest

    with pytest.raises(ValueError):
        Budget(max_bytes=10)
    with pytest.raises(ValueError):
        Budget(max_bytes=1 << 20, max_age_s=0)
    assert Budget(max_bytes=1 << 20, max_age_s=80).seal_interval_s == 5.0
    assert Budget(max_bytes=1 << 20, max_age_s=8).seal_interval_s == 1.0


def test_recorder_memory_is_flat_over_a_long_run(make_recorder, clock):
    """Through the public API: spans and phases for 45k steps in a 128 KiB budget."""
    budget = 128 * 1024
    rec = make_recorder(spans=Budget(max_bytes=budget, max_age_s=None))

    def run(n: int) -> None:
        for _ in range(n):
            with rec.step():
                with rec.phase("input"):
                    clock.advance_ms(1)
                with rec.phase("compute"):
                    clock.advance_ms(2)

    run(5_000)  # warm: the name table, the trigger history, the first segments
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        run(10_000)
        first = tracemalloc.get_traced_memory()[0] - base
        run(30_000)
        later, peak = (v - base for v in tracemalloc.get_traced_memory())
    finally:
        tracemalloc.stop()
    stats = rec.stats()["spans"]
    assert stats["retained_bytes"] <= budget
    assert stats["evicted_records"] > 100_000  # 135k rows went through a ~5k-row budget
    assert abs(later - first) <= 0.10 * budget
    assert peak <= 1.10 * budget
