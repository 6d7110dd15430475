"""What a sample means (DESIGN section 9, issue 44 item 1; issue 45 item 5): one check per lens,
the same for every format, with one table of plausible ranges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lenses import builtin_lens
from lenses.bounds import DURATION_BOUND_MS, PLAUSIBLE
from store.records import SAMPLES, RunRecord
from workbench.compare import contract

INFERENCE, TRAINING, FLEET = (builtin_lens(n) for n in ("inference", "training", "fleet"))


def requests(ttft, output, ok=None, **extra) -> RunRecord:
    n = len(ttft)
    cols = {
        "id": np.array([str(i) for i in range(n)]),
        "ttft_ms": np.asarray(ttft, dtype=np.float64),
        "output_tokens": np.asarray(output, dtype=np.float64),
        "prompt_tokens": np.full(n, 512.0),
        "ok": np.asarray(ok if ok is not None else [1.0] * n, dtype=np.float64),
        **{k: np.asarray(v, dtype=np.float64) for k, v in extra.items()},
    }
    return RunRecord(lens="inference", label="r", tables={SAMPLES: cols})


def codes(found) -> list[str]:
    return [f.code for f in found]


def test_a_request_with_no_output_token_is_a_failed_request():
    run = requests([0.0, 120.0, 0.0, 95.0], [0, 8, 0, 8])
    found = INFERENCE.check_samples(run)
    assert codes(found) == ["failed_requests"]
    assert "2 of 4 requests failed or returned nothing (2 with no output token)" in found[0].text
    assert list(run.samples["ok"]) == [0.0, 1.0, 0.0, 1.0]
    assert run.quality["error_rate"] == 0.5
    # out of the latency statistics: p95 over the two requests that produced a token
    assert INFERENCE.primary_value(run) == pytest.approx(np.percentile([120.0, 95.0], 95))


def test_a_request_that_produced_output_with_a_ttft_of_zero_keeps_its_output_but_not_that_ttft():
    run = requests([0.0, 120.0], [8, 8])
    found = INFERENCE.check_samples(run)
    assert codes(found) == ["ttft_zero"] and run.quality["error_rate"] == 0.0
    assert math.isnan(run.samples["ttft_ms"][0]) and run.samples["ok"][0] == 1.0


def test_a_summary_says_its_error_rate_from_completed_and_planned():
    def summary(completed: float, planned: float) -> RunRecord:
        stated = {"requests_completed": completed, "requests_planned": planned}
        return RunRecord(lens="inference", label="s", meta={"summary": stated})

    run = summary(500.0, 500.0)
    assert INFERENCE.check_samples(run) == [] and run.quality["error_rate"] == 0.0
    run = summary(2.0, 200.0)
    (found,) = INFERENCE.check_samples(run)
    assert found.code == "failed_requests" and found.count == 198 and found.of == 200
    assert run.quality["error_rate"] == pytest.approx(0.99)


def test_every_value_outside_its_plausible_range_is_unknown_with_the_reason():
    run = requests([50.0, 1e300, -1.0], [8, 8, 8], e2e_ms=[900.0, 2.0 * DURATION_BOUND_MS, 800.0])
    found = INFERENCE.check_samples(run)
    assert codes(found) == ["implausible", "implausible"]
    assert np.isnan(run.samples["ttft_ms"][1:]).all() and np.isnan(run.samples["e2e_ms"][1])
    assert "samples.ttft_ms: 2 value(s) outside [0, 1e+09] ms" in found[0].text


def test_a_step_of_146_years_or_of_no_time_is_not_a_step():
    # an Nsight kernel ending at 2^62 ns makes such a step; a native step_ms of 1e300 was accepted
    steps = {
        "step": np.array([1.0, 2.0, 3.0, 4.0]),
        "rank": np.zeros(4),
        "step_ms": np.array([100.0, 2.0**62 / 1e6, 0.0, 1e300]),
    }
    run = RunRecord(lens="training", label="t", tables={SAMPLES: steps})
    (found,) = TRAINING.check_samples(run)
    assert found.count == 3 and "(0, 1e+09] ms" in found.text
    assert TRAINING.primary_value(run) == 100.0


def test_samples_without_a_step_number_give_no_per_step_figure():
    trace = {"step": np.array([np.nan]), "rank": np.zeros(1), "step_ms": np.array([6664.85])}
    run = RunRecord(lens="training", label="t", tables={SAMPLES: trace})
    (found,) = TRAINING.check_samples(run)
    assert found.code == "no_step_boundary"
    assert math.isnan(TRAINING.primary_value(run))


def test_allocation_over_capacity_makes_the_capacity_unknown():
    jobs = {
        "job": np.array(["a", "b"]),
        "gpus": np.array([48.0, 30.0]),
        "eligible": np.array([0.0, 0.0]),
        "start": np.array([10.0, 20.0]),
        "end": np.array([500.0, 600.0]),
    }
    pool = {"capacity_gpus": 64, "window_start": 0.0, "window_end": 1000.0}
    run = RunRecord(lens="fleet", label="f", meta={"pool": pool}, tables={SAMPLES: jobs})
    (found,) = FLEET.check_samples(run)
    assert found.code == "over_capacity" and (found.count, found.of) == (78, 64)
    assert run.meta["pool"]["capacity_gpus"] is None and run.meta["pool"]["capacity_stated_gpus"] == 64
    assert "capacity_gpus" not in FLEET.observed_dimensions(run)


def test_jobs_without_times_say_so_and_a_negative_wait_is_unknown():
    run = RunRecord(lens="fleet", label="f", tables={SAMPLES: {"job": np.array(["a"]), "gpus": np.array([8.0])}})
    assert codes(FLEET.check_samples(run)) == ["no_times"]
    jobs = {
        "job": np.array(["a", "b"]),
        "gpus": np.array([8.0, 8.0]),
        "eligible": np.array([100.0, 10.0]),
        "start": np.array([50.0, 20.0]),
        "end": np.array([80.0, 30.0]),
    }
    run = RunRecord(lens="fleet", label="f", tables={SAMPLES: jobs})
    assert codes(FLEET.check_samples(run)) == ["implausible_eligible"]
    assert FLEET.primary_value(run) == 10.0  # the one wait there is


def test_the_bounds_table_covers_every_lens_sample_column():
    for lens in (INFERENCE, TRAINING):
        bounded = set(PLAUSIBLE[lens.name]["samples"])
        assert {p.column for p in lens.phases} <= bounded
    assert {"ttft_ms", "e2e_ms", "prompt_tokens"} <= set(PLAUSIBLE["inference"]["samples"])
    assert {"start", "eligible", "gpus"} <= set(PLAUSIBLE["fleet"]["samples"])


def test_a_guardrail_is_never_held_over_a_population_that_failed():
    base = requests([0.0, 0.0], [0, 0])
    cand = requests([0.0, 0.0], [0, 0])
    for run, rid in ((base, 1), (cand, 2)):
        run.id = rid
        INFERENCE.check_samples(run)
    judged = {g.name: g for g in contract.guardrails(INFERENCE, [base], [cand])}
    assert judged["error_rate"].state == "unknown"  # not "held 100 % vs 100 %"
    assert "every one of the 2 requests of baseline run 1 failed" in judged["error_rate"].note


# A request a capture may hold: (ttft ms, output tokens, ok).
REQUEST = st.tuples(
    st.floats(min_value=1.0, max_value=1e6, allow_nan=False),
    st.integers(min_value=1, max_value=4096),
    st.just(1.0),
)
FAILED = st.one_of(
    st.tuples(st.just(0.0), st.just(0), st.just(1.0)),  # an empty response, no error said
    st.tuples(st.floats(min_value=0.0, max_value=1e6), st.integers(min_value=0, max_value=10), st.just(0.0)),
)


def _run(rows) -> RunRecord:
    ttft, out, ok = zip(*rows)
    run = requests(list(ttft), list(out), list(ok))
    INFERENCE.check_samples(run)
    return run


@settings(max_examples=60, deadline=None)
@given(st.lists(REQUEST, min_size=1, max_size=40), st.lists(FAILED, min_size=1, max_size=40), st.randoms())
def test_adding_failed_requests_never_lowers_the_error_rate_nor_moves_the_other_requests(good, failed, rng):
    before = _run(good)
    mixed = good + failed
    rng.shuffle(mixed)
    after = _run(mixed)
    assert after.quality["error_rate"] >= before.quality["error_rate"]
    assert after.quality["error_rate"] == pytest.approx(len(failed) / len(mixed))
    for name in ("ttft_p95", "ttft_median", "ttft_mean", "ttft_p99"):
        lens = INFERENCE.with_metric(name)
        assert lens.primary_value(after) == pytest.approx(lens.primary_value(before), rel=1e-12)
