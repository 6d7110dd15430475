"""Fleet comparisons keep the jobs still waiting at a window's end (right-censored)."""

from __future__ import annotations

import pytest

from factories import fleet_run
from workbench.compare import compare


def test_a_window_where_nobody_started_still_has_a_headline():
    base = [fleet_run("A", waits=(14.0,) * 20, run_id=1)]
    cand = [fleet_run("B", waits=(), waiting_gangs=(16,) * 6, run_id=2)]  # eligible 200 s before the end
    doc = compare(base, cand).to_json()
    assert doc["primary"]["candidate"] is None  # no job started: the mean of started waits is unknown
    m = {p["name"]: p for p in doc["phases"]}
    assert m["service_attainment"]["candidate_mean"] == 0.0  # six known misses, not unknown
    assert m["mean_wait_with_waiting"]["candidate_mean"] == pytest.approx(200.0)
    assert m["km_median_wait"]["candidate_mean"] is None
    texts = [o["text"] for o in doc["observations"]]
    censored = [t for t in texts if "still waiting at the end" in t]
    assert censored == [
        "No job started in the candidate window: the mean queue wait is unknown there; 6 jobs in the "
        "candidate window were still waiting at the end, after at least 200 s (right-censored waits: lower "
        "bounds, not in the mean queue wait); all already past the 60 s target: known misses in the service "
        "attainment; more than half may still be waiting: the median wait (Kaplan–Meier) exceeds 200 s."
    ]
    assert not any("unknown to unknown" in t or "None" in t or "nan" in t for t in texts)
    assert doc["primary"]["censored"] == {
        "baseline": {"jobs": 0, "min_elapsed_s": None, "max_elapsed_s": None},
        "candidate": {"jobs": 6, "min_elapsed_s": 200.0, "max_elapsed_s": 200.0, "mean_at_least_s": 200.0},
    }
    from workbench.compare.render import render_comparison

    text = " ".join(render_comparison(compare(base, cand)).split())
    assert (
        "still waiting at the end (right-censored, not in this mean): baseline none; candidate 6 jobs, waiting 200 s "
        "so far" in text
    )
    # the headline gives the lower bound, never "14 s → unknown" (issue 44)
    assert "mean queue wait: 14 s → ≥ 200 s (6 jobs still waiting, none started), at least +186 s" in text


def test_pending_jobs_give_attainment_bounds():
    base = [fleet_run("A", waits=(14.0,) * 20, run_id=1)]
    cand = [fleet_run("B", waits=(14.0,) * 20, waiting_gangs=(16, 16), wait_target=600.0, run_id=2)]
    doc = compare(base, cand).to_json()
    text = next(o["text"] for o in doc["observations"] if "still waiting" in o["text"])
    # 20 met; 2 waiting for 200 s < 600 s: pending; attainment in [20/22, 22/22].
    assert "2 still within the 600 s target: pending, so attainment lies between 90.9 % and 100 %" in text
