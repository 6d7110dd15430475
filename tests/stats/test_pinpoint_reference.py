"""bench/pinpoint.py, the Pinpoint reference wb's bisect is measured against, checked against
Pinpoint's own published tests (catapult-project/catapult 6fd8bbe72367,
dashboard/dashboard/pinpoint/models/: compare/*_test.py, exploration_test.py,
job_state_test.py), value for value where they give values."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "pinpoint.py"


@pytest.fixture(scope="module")
def pp():
    spec = importlib.util.spec_from_file_location("pinpoint_reference", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


# mann_whitney_u_test.py
def test_mann_whitney_u(pp):
    assert pp.mann_whitney_u(list(range(10)), list(range(20, 30))) == pytest.approx(0.00018267179110955002, abs=1e-7)
    assert pp.mann_whitney_u(list(range(5)), list(range(10))) == pytest.approx(0.13986357686781267, abs=1e-7)
    assert pp.mann_whitney_u([0] * 5, [1] * 5) == pytest.approx(0.0039767517097886512, abs=1e-7)
    assert pp.mann_whitney_u([0], [1]) == 1.0
    assert pp.mann_whitney_u([0] * 5, [0] * 5) == 1.0


# kolmogorov_smirnov_test.py
def test_kolmogorov_smirnov(pp):
    assert pp.kolmogorov_smirnov(list(range(10)), list(range(20, 30))) == pytest.approx(
        1.8879793657162556e-05, abs=1e-7
    )
    assert pp.kolmogorov_smirnov(list(range(5)), list(range(10))) == pytest.approx(0.26680230985258474, abs=1e-7)
    assert pp.kolmogorov_smirnov([0] * 5, [1] * 5) == pytest.approx(0.0037813540593701006, abs=1e-7)
    assert pp.kolmogorov_smirnov([0], [1]) == 0.2890414283708268
    assert pp.kolmogorov_smirnov([0] * 5, [0] * 5) == 1.0


# thresholds_test.py
def test_thresholds(pp):
    with pytest.raises(NotImplementedError):
        pp.high_threshold("unknown mode", 1, 20)
    assert pp.high_threshold("functional", 0.5, 20) == 0.0195
    assert pp.high_threshold("performance", 1.5, 20) <= pp.LOW_THRESHOLD
    assert pp.high_threshold("performance", 0.1, 20) <= 0.99
    assert pp.high_threshold("performance", 10, 5) == 0.0122
    assert pp.high_threshold("performance", 1.5, 50) <= pp.LOW_THRESHOLD
    assert pp.LOW_THRESHOLD == 0.01


# compare_test.py: these call Compare without benchmark arguments, i.e. the 2018 thresholds
@pytest.mark.parametrize(
    ("a", "b", "n", "mode", "magnitude", "result"),
    [
        ([], [0] * 10, 10, "functional", 1, "unknown"),
        (list(range(10)), [], 10, "performance", 1, "unknown"),
        ([0] * 10, [1] * 10, 10, "functional", 0.5, "different"),
        ([0] * 10, [0] * 9 + [1], 10, "functional", 0.5, "unknown"),
        ([0] * 10, [0] * 10, 10, "functional", 0.5, "same"),
        (list(range(10)), list(range(7, 17)), 10, "performance", 1, "different"),
        (list(range(10)), list(range(3, 13)), 10, "performance", 1, "unknown"),
        (list(range(10)), list(range(10)), 10, "performance", 1, "same"),
    ],
)
def test_compare(pp, a, b, n, mode, magnitude, result):
    c = pp.compare(a, b, n, mode, magnitude, pp.RULES["2018"])
    assert c.result == result
    if result == "different":
        assert c.p_value <= c.low_threshold
    elif result == "same":
        assert c.p_value > c.high_threshold
    elif a and b:
        assert c.p_value <= c.high_threshold
    else:
        assert c.p_value is None


def test_the_2024_rule_floors_both_thresholds(pp):
    """compare.py: with benchmark arguments the low threshold is at least 0.05, the high at least 0.10."""
    c = pp.compare(list(range(10)), list(range(3, 13)), 10, "performance", 1, pp.RULES["2024"])
    assert (c.low_threshold, c.high_threshold) == (0.05, pytest.approx(max(0.10, c.high_threshold)))
    assert c.high_threshold >= 0.10


def _midpoint(a, b):  # exploration_test.py's FindMidpoint
    offset = (b - a) // 2
    return None if offset == 0 else a + offset


def _explore(pp, changes, detected, levels=2, on_unknown=None):
    calls = []
    results = pp.speculate(
        changes, detected, on_unknown or (lambda *args: calls.append(args)), _midpoint, levels=levels
    )
    for index, change in results:
        changes.insert(index, change)
    return changes, calls


# exploration_test.py
def test_speculate(pp):
    always = lambda *_: True  # noqa: E731
    assert pp.speculate([], lambda *_: False, lambda *_: None, _midpoint, levels=100) == []
    assert _explore(pp, [1, 6], always)[0] == [1, 2, 3, 4, 6]
    assert _explore(pp, [0, 100], always)[0] == [0, 25, 50, 75, 100]
    assert _explore(pp, [0, 9, 100], always)[0] == [0, 2, 4, 6, 9, 31, 54, 77, 100]
    changes, _ = _explore(pp, [0, 10], always)
    assert changes == [0, 2, 5, 7, 10]
    assert _explore(pp, changes, always)[0] == list(range(11))
    changes, calls = _explore(pp, [0, 5, 10], lambda a, _: None if a >= 5 else True)
    assert calls and changes == [0, 1, 2, 3, 5, 10]
    assert pp.speculate([0, 1000], lambda *_: False, lambda *_: None, _midpoint, levels=2) == []


def test_midpoint_is_commit_midpoint(pp):
    """commit.py Midpoint on commits in order: the commit before the middle of an even range."""
    assert [pp.midpoint(0, b) for b in (1, 2, 9, 10)] == [None, 1, 4, 5]


# job_state_test.py (the quests' pass and fail become values 0 and 1)
def _job(pp, values, commits=10, **kw):
    job = pp.Job(commits, run=lambda c: values[c], **kw)
    return job


def test_job_different_with_midpoint(pp):
    job = _job(pp, {1: 0.0, 9: 1.0, 5: 1.0})
    job.add_change(1)
    job.add_change(9)
    job.schedule_work()
    job.explore()
    assert job.changes == [1, 5, 9]
    assert {len(job.attempts[c]) + job.pending.count(c) for c in job.changes} == {10}
    assert job.differences() == []  # change 5 has not run yet


def test_job_different_no_midpoint(pp):
    job = _job(pp, {1: 0.0, 2: 1.0})
    job.add_change(1)
    job.add_change(2)
    job.schedule_work()
    job.explore()
    assert job.changes == [1, 2] and len(job.attempts[1]) == len(job.attempts[2])
    assert job.differences() == [(1, 2)]


def test_job_unknown_doubles_the_attempts_of_both(pp):
    cycle = {1: iter(list(range(10)) * 100), 9: iter(list(range(3, 13)) * 100)}
    job = pp.Job(10, run=lambda c: float(next(cycle[c])), rule=pp.RULES["2018"])
    job.add_change(1)
    job.add_change(9)
    job.schedule_work()
    assert job.compare_changes(1, 9) == "unknown"
    job.explore()
    job.schedule_work()
    assert job.changes == [1, 9] and len(job.attempts[1]) == len(job.attempts[9]) == 20


def test_job_improvement_is_same_and_attempts_stop_at_160(pp):
    job = _job(pp, {0: 1.0, 9: 0.0})
    job.add_change(0)
    job.add_change(9)
    job.schedule_work()
    assert job.compare_changes(0, 9) == "same"  # faster: the improvement direction
    job = pp.Job(10, run=lambda c: float(c % 2), rule=pp.RULES["2018"])
    rounds = list(pp.bisect(job))
    assert rounds and max(len(v) for v in job.attempts.values()) <= pp.MAX_ATTEMPTS


def test_abort_after_max_builds(pp):
    job = pp.Job(1000, run=lambda c: 0.0)
    for i in range(pp.MAX_BUILDS):
        job.add_change(i)
    with pytest.raises(RuntimeError, match="Bisected max number of times: 60"):
        job.add_change(123)


def test_a_clear_regression_is_found(pp):
    job = pp.Job(64, run=lambda c: 2.0 if c >= 37 else 1.0)
    list(pp.bisect(job))
    assert job.differences() == [(36, 37)] and job.runs() == 10 * len(job.changes)
