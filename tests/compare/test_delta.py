"""The delta of a comparable pair: primary, phases, guardrails, work, observations,
and the JSON contract, on RunRecords shaped like the seed's examples."""

from __future__ import annotations

import json
import math

import pytest

from factories import fleet_run, inference_run, training_run
from workbench.compare import compare
from workbench.numbers import change, num

CONTRACT = {"lens", "comparable", "refusal", "dimensions", "primary", "phases", "observations", "guardrails", "work"}


def texts(doc):
    return [o["text"] for o in doc["observations"]]


def inference_pair(n=5, queue_c=160.0):
    base = [inference_run(f"b{i}", seed=i, run_id=i) for i in range(1, n + 1)]
    cand = [
        inference_run(f"c{i}", seed=50 + i, queue=queue_c, run_id=50 + i, engine_revision="v0.8.3")
        for i in range(1, n + 1)
    ]
    return base, cand


def test_contract_keys_and_types():
    base, cand = inference_pair()
    doc = compare(base, cand, changes={"engine_revision": ("v0.8.2", "v0.8.3")}).to_json()
    assert CONTRACT <= set(doc)
    assert doc["lens"] == "inference" and doc["comparable"] is True and doc["refusal"] is None
    for d in doc["dimensions"]:
        assert {"name", "state", "baseline", "candidate", "source"} <= set(d)
        assert d["state"] in ("same", "changed", "different", "unknown")
    assert {"metric", "unit", "baseline", "candidate", "delta", "delta_pct", "effect"} <= set(doc["primary"])
    for p in doc["phases"]:
        assert {"name", "baseline_mean", "candidate_mean", "baseline_p95", "candidate_p95", "effect"} <= set(p)
    for o in doc["observations"]:
        assert {"text", "evidence"} <= set(o)
        assert {"runs", "metric", "window", "values"} <= set(o["evidence"])
    for g in doc["guardrails"]:
        assert {"name", "state"} <= set(g) and g["state"] in ("held", "broken", "unknown")
    json.dumps(doc, allow_nan=False)  # unknown is null, never NaN


def test_inference_pair_reads_like_the_seed():
    base, cand = inference_pair()
    result = compare(base, cand, changes={"engine_revision": ("v0.8.2", "v0.8.3")})
    doc = result.to_json()
    p = doc["primary"]
    assert p["metric"] == "ttft_p95" and p["unit"] == "ms"
    assert p["delta"] == pytest.approx(120, abs=2)
    assert p["effect"]["verdict"] == "REGRESSION"
    assert result.regression
    phases = {ph["name"]: ph for ph in doc["phases"]}
    assert phases["queue"]["effect"]["verdict"] == "REGRESSION"
    assert phases["decode"]["in_primary"] is False
    obs = texts(doc)
    assert obs[0].startswith("Queue time grew from 4") and "ms to 16" in obs[0]
    assert obs[1].startswith("Prefill and decode took the same time")
    assert obs[2] == "The added latency happens before the model starts work on the request."
    assert obs[3] == "Error rate held (0 % vs 0 %)."
    assert all(o["kind"] == "observation, not cause" for o in doc["observations"])
    ev = doc["observations"][0]["evidence"]
    assert ev["runs"] == {"baseline": [1, 2, 3, 4, 5], "candidate": [51, 52, 53, 54, 55]}
    assert ev["window"] == "steady" and ev["verdict"] == "REGRESSION"


def test_latency_inside_the_model_is_located_there():
    base = [inference_run(f"b{i}", seed=i, run_id=i) for i in range(1, 6)]
    cand = [inference_run(f"c{i}", seed=50 + i, prefill=120, run_id=50 + i) for i in range(1, 6)]
    obs = texts(compare(base, cand).to_json())
    assert "Prefill time grew" in obs[0]
    # Frontend (before the model, part of TTFT) is not recorded: it may have moved too.
    assert (
        "Frontend was not recorded: whether all the added latency happens while the model works on the request cannot "
        "be established." in obs
    )
    assert not any("before the model" in t for t in obs)
    for r in [*base, *cand]:  # with the frontend recorded (and flat), the location is said
        r.tables["samples"]["frontend_ms"] = r.tables["samples"]["queue_ms"] * 0 + 3.0 + (r.id % 5) * 0.001
    obs = texts(compare(base, cand).to_json())
    assert any("while the model works on the request (prefill)" in t for t in obs)


def test_training_pair_reads_like_the_seed():
    base = [training_run(f"b{i}", seed=i, run_id=i) for i in range(1, 6)]
    cand = [
        training_run(f"c{i}", seed=50 + i, comm=265, eval_loss=2.15, run_id=50 + i, framework="PyTorch 2.4-rc")
        for i in range(1, 6)
    ]
    doc = compare(base, cand, changes={"framework": ("PyTorch 2.3", "PyTorch 2.4-rc")}).to_json()
    p = doc["primary"]
    assert p["baseline"] == pytest.approx(420, abs=1) and p["candidate"] == pytest.approx(570, abs=1)
    assert p["text"] == "420 ms → 570 ms, +150 ms (+35.7 %)"
    obs = texts(doc)
    assert obs[0].startswith("Compute stayed at 260 ms")
    assert obs[0].endswith("communication grew from 115 ms to 265 ms.")
    assert "Evaluation loss held (2.14 vs 2.15)." in obs
    work = doc["work"]
    assert work["same"] is True and work["per_item"]["baseline"] == 256
    # fixed work: a 35.7 % longer step is a 26.3 % lower throughput (1 − 1/1.357)
    assert work["throughput"]["change_pct"] == pytest.approx(100 * (420 / 570 - 1), abs=0.3)


def test_fleet_pair_reads_like_the_seed():
    base = [fleet_run(f"A{i}", run_id=i) for i in range(1, 3)]
    cand = [
        fleet_run(f"B{i}", waits=(85.6,) * 20, running_gangs=(16, 16, 16, 8), waiting_gangs=(16,) * 6, run_id=10 + i)
        for i in range(1, 3)
    ]
    doc = compare(base, cand).to_json()
    assert doc["primary"]["text"].startswith("14.2 s → 85.6 s, +71.4 s")
    metrics = {p["name"]: p for p in doc["phases"]}
    assert (
        metrics["allocated_gpus_end"]["baseline_mean"] == 60 and metrics["allocated_gpus_end"]["candidate_mean"] == 56
    )
    assert metrics["waiting_jobs"]["candidate_mean"] == 6
    blocking = [t for t in texts(doc) if "sat unallocated" in t]
    assert blocking == [
        "8 GPUs sat unallocated while 6 jobs waited, each needing 16 GPUs at once (in 2 of 2 candidate windows)."
    ]  # eligibility recorded in every window: no "without eligibility history" caveat
    assert doc["work"]["unit"] == "GPU-hours"
    assert doc["guardrails"] == []


def test_gang_blocking_only_when_the_gangs_do_not_fit():
    cand = fleet_run("B", running_gangs=(16, 16, 16, 8), waiting_gangs=(4, 16), run_id=2)
    doc = compare([fleet_run("A", run_id=1)], [cand]).to_json()
    assert any(
        "8 GPUs sat unallocated while 2 jobs waited; 1 of them needed more GPUs at once than were free." in t
        for t in texts(doc)
    )


def test_one_run_a_side_gives_no_uncertainty():
    doc = compare([inference_run("b", run_id=1)], [inference_run("c", queue=160, run_id=2)]).to_json()
    effect = doc["primary"]["effect"]
    assert effect["verdict"] is None and "no uncertainty" in effect["note"]
    assert "one run a side" in texts(doc)[0]
    assert texts(doc)[1].endswith(
        "changed by less than 2 % between these two runs (one run a side: no noise estimate "
        "exists, so whether this is beyond noise cannot be said)."
    )
    assert not any("beyond noise)" in t and "no change" in t for t in texts(doc))


def test_work_that_differs_gets_no_timing_only_effect():
    base = [inference_run(f"b{i}", seed=i, run_id=i) for i in range(1, 4)]
    cand = [inference_run(f"c{i}", seed=9 + i, prompt=1024, request_mix="1024/128", run_id=10 + i) for i in range(1, 4)]
    result = compare(base, cand, accepts={"request_mix": "checking the long-prompt tier"})
    doc = result.to_json()
    assert doc["work"]["same"] is False and "never a timing-only effect" in doc["work"]["note"]
    assert doc["primary"]["effect"]["verdict"] is None
    assert "work differs" in doc["primary"]["effect"]["note"]
    assert doc["primary"]["baseline"] is not None  # time is still reported, beside the work
    assert not result.regression


def test_broken_guardrail_counts_as_regression_for_gating():
    base = [inference_run(f"b{i}", seed=i, run_id=i) for i in range(1, 4)]
    cand = [inference_run(f"c{i}", seed=9 + i, failures=10, run_id=10 + i) for i in range(1, 4)]
    result = compare(base, cand)
    g = result.to_json()["guardrails"][0]
    assert g["state"] == "broken" and g["candidate"] == pytest.approx(0.05)
    assert result.regression
    assert any(t.startswith("Error rate broke its guardrail") for t in texts(result.to_json()))


def test_missing_guardrail_value_is_unknown():
    base = [training_run("b", run_id=1, eval_loss=None)]
    cand = [training_run("c", run_id=2)]
    g = compare(base, cand).to_json()["guardrails"][0]
    assert g["state"] == "unknown" and g["baseline"] is None


def test_aa_pair_is_not_a_regression():
    base = [inference_run(f"a{i}", seed=i, run_id=i) for i in range(1, 6)]
    again = [inference_run(f"a'{i}", seed=100 + i, run_id=100 + i) for i in range(1, 6)]
    result = compare(base, again)
    assert result.verdict != "REGRESSION" and not result.regression
    assert not any("grew" in t for t in texts(result.to_json()))


def test_phase_missing_everywhere_is_left_out():
    base, cand = inference_pair(n=2)
    for r in [*base, *cand]:
        del r.samples["decode_ms"]
    names = [p["name"] for p in compare(base, cand, changes={"engine_revision": None}).to_json()["phases"]]
    assert names == ["queue", "prefill"]


@pytest.mark.parametrize(
    "b, c, unit, expected",
    [
        (110, 230, "ms", "110 ms → 230 ms, +120 ms (+109 %)"),
        (420, 570, "ms", "420 ms → 570 ms, +150 ms (+35.7 %)"),
        (14.2, 85.6, "s", "14.2 s → 85.6 s, +71.4 s (+503 %)"),
        (100, 90, "ms", "100 ms → 90 ms, −10 ms (−10 %)"),
        (0, 5, "jobs", "0 jobs → 5 jobs, +5 jobs"),
        (float("nan"), 5, "ms", "unknown → 5 ms"),
    ],
)
def test_change_text(b, c, unit, expected):
    assert change(b, c, unit) == expected


def test_num_never_uses_exponents():
    assert num(123456.7) == "123457" and num(0.000123) == "0.000123" and num(math.nan) == "unknown"


def test_primary_moving_outside_the_recorded_phases_is_said():
    base = [training_run(f"b{i}", seed=i, run_id=i) for i in range(1, 6)]
    cand = [training_run(f"c{i}", seed=50 + i, run_id=50 + i) for i in range(1, 6)]
    for r in cand:
        r.samples["step_ms"] = r.samples["step_ms"] + 80.0  # time outside every recorded phase
    obs = texts(compare(base, cand).to_json())
    assert "Mean step time grew from 420 ms to 500 ms, but none of its recorded phases moved beyond noise." in obs


def test_a_work_unit_from_a_capture_renders_without_control_characters():
    from workbench.compare.render import render_comparison
    from store.records import Work

    base, cand = inference_pair(n=2)
    for r in base + cand:
        r.work = Work("tok\x1b[31m", r.work.amount)
        r.window["duration_s"] = 10.0
    text = render_comparison(compare(base, cand))
    assert "\x1b" not in text
    assert "tok\\x1b[31m:" in text and "tok\\x1b[31m/s" in text  # the work line and the throughput line
