"""The trigger fires on an injected stall, not on jitter; cooldown and budgets hold.

Every timestamp comes from a fake clock: no sleeps, no dependence on machine speed.
"""

from __future__ import annotations

import random
import threading

import pytest

from .helpers import load, record_steps
from workbench.recorder import TriggerRule
from workbench.recorder.trigger import IncidentBudget, LatencyTrigger


def jitter(n: int, seed: int, median_ms: float = 100.0, sigma: float = 0.12) -> list[float]:
    rng = random.Random(seed)
    return [median_ms * rng.lognormvariate(0.0, sigma) for _ in range(n)]


def incidents(rec) -> int:
    return rec.stats()["incidents"]


def test_fires_once_on_an_injected_stall_and_snapshots_the_moments_before(make_recorder, clock):
    rec = make_recorder(trigger=TriggerRule(k_median=3.0))
    durations = jitter(400, seed=1)
    durations[300] = 1200.0  # the stall
    record_steps(rec, clock, durations)
    assert incidents(rec) == 1
    rec.close()
    [path] = rec.stats()["snapshot_paths"]
    doc = load(path)
    assert doc["trigger"]["seq"] == 300
    assert doc["trigger"]["duration_ms"] == pytest.approx(1200.0, abs=0.01)
    assert 90 < doc["trigger"]["median_ms"] < 110
    assert "median" in doc["trigger"]["rule"]
    assert doc["window"]["incident_seq"] == 300
    steps = [s["step"] for s in doc["samples"]]
    # The moments before the delay, up to and including the slow step.
    assert steps == list(range(0, 301))
    assert doc["samples"][-1]["step_ms"] == pytest.approx(1200.0, abs=0.01)


def test_does_not_fire_on_normal_jitter(make_recorder, clock):
    rec = make_recorder(trigger=TriggerRule(k_median=3.0))
    record_steps(rec, clock, jitter(3000, seed=7, sigma=0.2), phases=())
    assert incidents(rec) == 0
    assert rec.stats()["suppressed"] == {"cooldown": 0, "busy": 0, "budget": 0}


def test_warm_up_does_not_fire_the_relative_rule(make_recorder, clock):
    rec = make_recorder(trigger=TriggerRule(k_median=3.0, min_history=32))
    # Compilation: the first 20 steps are 20x slower, before any median is known.
    record_steps(rec, clock, [2000.0] * 20 + jitter(200, seed=3), phases=())
    assert incidents(rec) == 0


def test_absolute_threshold_fires_without_history(make_recorder, clock):
    rec = make_recorder(trigger=TriggerRule(slower_than_ms=150.0, k_median=None))
    record_steps(rec, clock, [100.0, 100.0, 180.0, 100.0], phases=())
    assert incidents(rec) == 1
    rec.close()
    doc = load(rec.stats()["snapshot_paths"][0])
    assert doc["trigger"]["rule"] == "slower than 150 ms"
    assert doc["trigger"]["seq"] == 2


def test_cooldown_suppresses_a_second_stall(make_recorder, clock):
    rec = make_recorder(trigger=TriggerRule(cooldown_s=60.0, max_incidents=10, max_concurrent=10))
    durations = jitter(200, seed=2)
    durations[100] = 1000.0
    durations[150] = 1000.0  # ~5 s later: inside the cooldown
    record_steps(rec, clock, durations, phases=())
    assert incidents(rec) == 1
    assert rec.stats()["suppressed"]["cooldown"] == 1
    clock.advance_ms(61_000)  # past the cooldown
    record_steps(rec, clock, jitter(20, seed=4) + [1000.0], phases=())
    assert incidents(rec) == 2
    rec.close()
    doc = load(rec.stats()["snapshot_paths"][-1])
    kinds = [e["kind"] for e in doc["recorder"]["events"]]
    assert kinds.count("trigger") == 2 and kinds.count("suppressed") == 1


def test_total_incident_budget(make_recorder, clock):
    rec = make_recorder(trigger=TriggerRule(cooldown_s=0.0, max_incidents=2, max_concurrent=10))
    durations = jitter(300, seed=5)
    for i in (100, 150, 200, 250, 299):
        durations[i] = 1500.0
    record_steps(rec, clock, durations, phases=())
    rec.close()
    stats = rec.stats()
    assert stats["incidents"] == 2
    # The third stall finds the budget spent: the trigger disarms; later stalls cost nothing.
    assert stats["suppressed"]["budget"] == 1
    assert stats["snapshots_written"] == 2
    doc = load(stats["snapshot_paths"][-1])
    assert rec._trigger.threshold_ns == float("inf")
    assert doc["recorder"]["incidents"] == 2


def test_concurrent_incident_budget_and_one_snapshot_at_a_time(make_recorder, clock, monkeypatch):
    rec = make_recorder(trigger=TriggerRule(cooldown_s=0.0, max_incidents=10, max_concurrent=1))
    release = threading.Event()
    writing = threading.Event()
    real_write = rec._write
    active = []

    def slow_write(job):
        active.append(1)
        assert len(active) == 1, "two snapshots written at once"
        writing.set()
        release.wait(10)
        try:
            return real_write(job)
        finally:
            active.pop()

    monkeypatch.setattr(rec, "_write", slow_write)
    durations = jitter(100, seed=6)
    durations[60] = 1500.0
    record_steps(rec, clock, durations, phases=())
    assert writing.wait(10)
    # The writer is stuck; the workload is not: more stalls are recorded and suppressed.
    record_steps(rec, clock, [1500.0, 100.0, 1500.0], phases=())
    assert rec.stats()["suppressed"]["busy"] == 2
    assert rec.stats()["in_flight"] == 1
    release.set()
    rec.snapshot("after release")  # waits: the writer is free again
    assert rec.stats()["in_flight"] == 0
    record_steps(rec, clock, [1500.0], phases=())
    rec.close()
    assert rec.stats()["incidents"] == 2


def test_latency_trigger_refresh_and_explain():
    rule = TriggerRule(k_median=4.0, slower_than_ms=1000.0, min_history=4, history=8, refresh_every=4)
    trig = LatencyTrigger(rule)
    assert trig.threshold_ns == 1000e6
    for d in (10e6, 12e6, 11e6):
        trig.observe(d)
    trig.refresh()
    assert trig.median_ns is None  # fewer than min_history
    trig.observe(13e6)
    trig.refresh()
    assert trig.median_ns == pytest.approx(11.5e6)
    assert trig.threshold_ns == pytest.approx(46e6)
    assert trig.explain(50e6)["rule"].startswith("slower than 4x")


def test_incident_budget_unit():
    budget = IncidentBudget(TriggerRule(cooldown_s=1.0, max_incidents=2, max_concurrent=1))
    assert budget.admit(0.0) is None
    assert budget.admit(2e9) == "busy"
    budget.finished()
    assert budget.admit(0.5e9) == "cooldown"
    assert budget.admit(2e9) is None
    budget.finished()
    assert budget.admit(10e9) == "budget"
    assert budget.suppressed == {"cooldown": 1, "busy": 1, "budget": 1}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"slower_than_ms": None, "k_median": None},
        {"k_median": 1.0},
        {"refresh_every": 24},
        {"min_history": 300},
        {"max_concurrent": 0},
    ],
)
def test_rule_validation(kwargs):
    with pytest.raises(ValueError):
        TriggerRule(**kwargs)


def test_floor_keeps_small_jitter_from_firing(make_recorder, clock):
    rec = make_recorder(trigger=TriggerRule(k_median=3.0, at_least_ms=200.0))
    durations = [2.0] * 100
    durations[50] = 30.0  # 15x the median, but a 30 ms blip
    durations[90] = 400.0  # the real stall
    record_steps(rec, clock, durations, phases=())
    rec.close()
    assert rec.stats()["incidents"] == 1
    doc = load(rec.stats()["snapshot_paths"][0])
    assert doc["trigger"]["seq"] == 90
    assert doc["trigger"]["rule"].endswith("(and at least 200 ms)")
