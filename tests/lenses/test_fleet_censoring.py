"""Censored fleet waits: the worked example of docs/lenses.md, by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lenses import builtin_lens
from lenses.fleet import km_median, read_window
from tests.lenses.test_lenses import NAN, fleet


def example(target=15.0):
    # gpus, submit, eligible, start, end: started after 10, 20, 30 s; two still waiting
    # at the end (1000 s), eligible at 975 and 960 s: at least 25 and 40 s.
    return fleet(
        [
            (1, 100, 100, 110, 120),
            (1, 200, 200, 220, 230),
            (1, 300, 300, 330, 340),
            (2, 975, 975, NAN, NAN),
            (2, 960, 960, NAN, NAN),
        ],
        target=target,
    )


def test_worked_example_against_15_s():
    lens = builtin_lens("fleet")
    w = read_window(example())
    assert sorted(w.waits) == [10, 20, 30] and sorted(w.censored) == [25, 40]
    assert lens.primary_value(example()) == pytest.approx(20.0)
    assert w.mean_wait_lower == pytest.approx(25.0)
    assert w.km_median() == (30.0, pytest.approx(NAN, nan_ok=True))
    assert (w.met, w.missed, w.known_misses, w.pending) == (1, 2, 2, 0)
    assert w.attained == pytest.approx(0.2)
    assert w.attainment_bounds == (pytest.approx(0.2), pytest.approx(0.2))
    m = lens.window_metrics(example())
    assert m["service_attainment"] == pytest.approx(20.0)
    assert m["km_median_wait"] == 30.0 and m["mean_wait_with_waiting"] == pytest.approx(25.0)
    assert m["waiting_jobs"] == 2


def test_worked_example_against_30_s_has_a_pending_job():
    w = read_window(example(target=30.0))
    assert (w.met, w.missed, w.known_misses, w.pending) == (3, 0, 1, 1)
    assert w.attained == pytest.approx(3 / 4)
    assert w.attainment_bounds == (pytest.approx(3 / 5), pytest.approx(4 / 5))


def test_kaplan_meier_survival_steps_by_hand():
    """S = 0.8 at 10 s, 0.6 at 20 s, 0.3 at 30 s (the job censored at 25 s left the risk set)."""
    from scipy.stats import CensoredData, ecdf

    sf = ecdf(CensoredData(uncensored=[10, 20, 30], right=[25, 40])).sf
    assert [sf.evaluate(t) for t in (10, 20, 30)] == pytest.approx([0.8, 0.6, 0.3])
    assert km_median(np.array([10.0, 20, 30]), np.array([25.0, 40]))[0] == 30.0


def test_median_not_reached_is_a_lower_bound_not_a_value():
    # One job started after 10 s; three still waiting (25, 40, 60 s): S(10) = 3/4 > 0.5.
    median, above = km_median(np.array([10.0]), np.array([25.0, 40.0, 60.0]))
    assert math.isnan(median) and above == 60.0


def test_a_window_where_nobody_started_but_six_waited_an_hour():
    lens = builtin_lens("fleet")
    jobs = [(16, -3000, -2600 - 60 * i, NAN, NAN) for i in range(6)]  # eligible before the window
    r = fleet(jobs, ws=0.0, we=3600.0, target=60.0, capacity=64)
    w = read_window(r)
    assert w.waits.size == 0 and math.isnan(lens.primary_value(r))  # no started job: unknown
    assert sorted(w.censored) == [3600 + 2600 + 60 * i for i in range(6)]
    assert (w.met, w.missed, w.known_misses, w.pending) == (0, 0, 6, 0)
    assert w.attained == 0.0  # six known misses: 0 %, not unknown
    median, above = w.km_median()
    assert math.isnan(median) and above == 3600 + 2600 + 300
    assert lens.window_metrics(r)["mean_wait_with_waiting"] == pytest.approx(3600 + 2600 + 150)


def test_without_a_target_attainment_is_unknown_and_waits_still_count():
    w = read_window(example(target=NAN))
    assert math.isnan(w.attained) and (w.met, w.known_misses, w.pending) == (0, 0, 0)
    assert w.mean_wait_lower == pytest.approx(25.0)
