"""Lens contracts and the run-level numbers each lens reads from a run."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from lenses import LENS_NAMES, builtin_lens
from lenses.base import GuardrailSpec, as_number
from lenses.fleet import read_window
from lenses.inference import mix_equal, parse_mix
from store.records import Dimension, RunRecord


def run(lens: str, samples: dict, **kw) -> RunRecord:
    return RunRecord(
        lens=lens, label="r", tables={"samples": {k: np.asarray(v, dtype=float) for k, v in samples.items()}}, **kw
    )


# ---------------------------------------------------------------- contracts


def test_contracts_follow_the_design_table():
    inf, tr, fl = (builtin_lens(n) for n in LENS_NAMES)
    assert set(inf.must_match) == {"model", "weights", "hardware", "topology", "request_mix", "window"}
    assert {"precision", "engine_revision", "power_policy", "engine_config"} <= set(inf.also_recorded)
    assert (inf.primary.name, inf.primary.unit) == ("ttft_p95", "ms")
    assert {p.name: p.in_primary for p in inf.phases} == {
        "frontend": True,
        "queue": True,
        "prefill": True,
        "decode": False,
    }
    assert set(tr.must_match) == {
        "model",
        "objective",
        "hardware",
        "topology",
        "rank_count",
        "effective_batch",
        "window",
    }
    assert (tr.primary.name, tr.work_unit) == ("mean_step_time", "samples")
    assert [p.name for p in tr.phases] == ["input", "compute", "communication", "checkpoint"]
    assert not tr.phases_additive and not inf.phases_additive
    assert {"pool", "device_types", "scheduler_policy", "eligibility_history"} <= set(fl.must_match)
    assert fl.also_recorded == ("workload_mix",)
    assert (fl.primary.name, fl.primary.unit, fl.work_unit) == ("mean_queue_wait", "s", "GPU-hours")
    assert [g.name for g in inf.guardrails] == ["error_rate"]
    assert [g.name for g in tr.guardrails] == ["eval_loss"]
    assert fl.guardrails == ()


def test_lenses_never_import_workbench_or_the_database():
    code = (
        "import sys, lenses, lenses.inference, lenses.training, lenses.fleet, lenses.extensions\n"
        "bad = [m for m in sys.modules if m.startswith(('workbench', 'sqlmodel', 'sqlalchemy', 'store.api', "
        "'textual'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- inference


def test_ttft_p95_over_successful_requests_only():
    lens = builtin_lens("inference")
    ttft = np.arange(1.0, 101.0)
    ok = np.ones(100)
    ok[-1] = 0  # the slowest request failed: it counts for the error rate, not latency
    r = run("inference", {"ttft_ms": ttft, "ok": ok})
    assert lens.primary_value(r) == pytest.approx(np.quantile(np.arange(1.0, 100.0), 0.95))
    assert lens.error_rate(r) == pytest.approx(0.01)


def test_ttft_from_phases_needs_the_frontend_too():
    lens = builtin_lens("inference")
    q, p = np.full(50, 40.0), np.full(50, 70.0)
    without = run("inference", {"queue_ms": q, "prefill_ms": p})
    assert math.isnan(lens.primary_value(without))  # unknown, never queue + prefill posing as TTFT
    with_frontend = run("inference", {"frontend_ms": np.full(50, 2.0), "queue_ms": q, "prefill_ms": p})
    assert lens.primary_value(with_frontend) == pytest.approx(112.0)


def test_request_mix_is_read_from_the_token_lengths():
    lens = builtin_lens("inference")
    r = run("inference", {"prompt_tokens": [1020, 1024, 1030], "output_tokens": [128, 128, 127]})
    assert lens.observed_dimensions(r)["request_mix"] == Dimension(
        "1024 prompt / 128 output tokens (median)", "derived"
    )
    assert parse_mix("512 prompt / 128 output tokens") == (512, 128)
    assert parse_mix("512/128") == (512, 128)
    assert parse_mix({"prompt_tokens": 512, "output_tokens": 128}) == (512, 128)
    assert parse_mix("sharegpt") is None
    assert mix_equal("512 prompt / 128 output tokens", "1024 prompt / 128 output tokens") is False
    assert mix_equal("512/128", "520 prompt / 126 output tokens") is True
    assert mix_equal("sharegpt", "512/128") is None  # cannot tell: not a conflict


def test_missing_phase_column_is_absent_not_zero():
    lens = builtin_lens("inference")
    r = run("inference", {"queue_ms": [1.0, np.nan, 3.0], "prefill_ms": [np.nan] * 3})
    summary = lens.phase_summary(r)
    assert "decode" not in summary
    assert summary["queue"]["mean"] == pytest.approx(2.0)
    assert math.isnan(summary["prefill"]["mean"])


# ---------------------------------------------------------------- training


def test_mean_step_time_weighs_steps_equally_and_reads_ranks_and_batch():
    lens = builtin_lens("training")
    r = run(
        "training",
        {
            "step": [0, 0, 1, 1, 2],  # step 2 lost a rank: still one step
            "rank": [0, 1, 0, 1, 0],
            "step_ms": [100, 110, 200, 210, 300],
            "samples": [16, 16, 16, 16, 16],
        },
        quality={"eval_loss": 2.5},
    )
    assert lens.primary_value(r) == pytest.approx((105 + 205 + 300) / 3)
    observed = lens.observed_dimensions(r)
    assert observed["rank_count"].value == 2
    assert as_number(observed["effective_batch"].value) == 32
    assert lens.guardrail_value(r, "eval_loss") == 2.5
    assert lens.work_per_item(r).value == 32
    assert lens.throughput(r)[0] == pytest.approx(32 / (lens.primary_value(r) / 1000))


def test_a_step_with_a_rank_missing_its_batch_has_an_unknown_total_not_a_smaller_one():
    lens = builtin_lens("training")
    r = run(
        "training",
        {
            "step": [0, 0, 1, 1, 2, 2],
            "rank": [0, 1, 0, 1, 0, 1],
            "step_ms": [100, 110, 200, 210, 300, 310],
            "samples": [16, 16, 16, np.nan, 16, np.nan],  # rank 1 silent on steps 1 and 2
        },
    )
    assert as_number(lens.observed_dimensions(r)["effective_batch"].value) == 32  # step 0, not median(32, 16, 16)


def test_eval_loss_absent_is_unknown():
    lens = builtin_lens("training")
    assert math.isnan(lens.guardrail_value(run("training", {"step_ms": [1.0]}), "eval_loss"))


# ---------------------------------------------------------------- fleet


def fleet(jobs, capacity=16, ws=0.0, we=1000.0, target=60.0, **kw):
    cols = ("gpus", "submit", "eligible", "start", "end")
    samples = {c: [j[i] for j in jobs] for i, c in enumerate(cols)}
    return run(
        "fleet",
        samples,
        meta={"pool": {"capacity_gpus": capacity, "window_start": ws, "window_end": we, "wait_target_s": target}},
        **kw,
    )


NAN = float("nan")


def test_fleet_window_metrics_by_their_definitions():
    lens = builtin_lens("fleet")
    r = fleet(
        [
            # gpus submit eligible start end
            (8, -100, -90, -50, NAN),  # running all window: 8 GPUs
            (4, 0, 10, 40, 540),  # wait 30 s, 4 GPUs for half the window
            (2, 90, 100, 200, 300),  # wait 100 s (misses the 60 s target), 2 GPUs for 100 s
            (8, 800, 900, NAN, NAN),  # eligible, waiting at the end: gang of 8
            (8, 800, NAN, NAN, NAN),  # submitted, never eligible: not waiting
            (1, 500, 510, 1500, 1600),  # starts after the window: waiting at the end
        ]
    )
    w = read_window(r)
    assert sorted(w.waits) == [30, 100]
    assert lens.primary_value(r) == pytest.approx(65.0)
    # Met: the 30 s wait; missed: the 100 s wait; two jobs still waiting at the end, for
    # 1000 − 900 = 100 s and 1000 − 510 = 490 s, both past the 60 s target: known misses.
    assert sorted(w.censored) == [100, 490]
    assert (w.met, w.missed, w.known_misses, w.pending) == (1, 1, 2, 0)
    assert w.attained == pytest.approx(1 / 4)
    assert w.allocated_mean == pytest.approx((8 * 1000 + 4 * 500 + 2 * 100) / 1000)
    assert w.allocated_end == 8
    assert sorted(w.waiting_gangs) == [1, 8]
    assert w.idle_end == 8
    m = lens.window_metrics(r)
    assert m["service_attainment"] == pytest.approx(25.0)
    assert m["mean_wait_with_waiting"] == pytest.approx((30 + 100 + 100 + 490) / 4)
    assert m["waiting_jobs"] == 2


def test_fleet_allocation_is_unknown_when_a_running_gang_size_is():
    jobs = [(8, -100, -90, -50, NAN), (NAN, 0, 10, 40, 540)]  # the second job's GPU count is unknown
    w = read_window(fleet(jobs))
    assert math.isnan(w.allocated_mean)  # not 8: the unknown job held GPUs for half the window
    w = read_window(fleet([*jobs[:1], (NAN, 0, 10, 40, 300)]))  # it ended before the window did
    assert math.isnan(w.allocated_mean) and w.allocated_end == 8


def test_fleet_without_eligibility_history_has_unknown_waits():
    lens = builtin_lens("fleet")
    r = fleet([(4, 0, NAN, 40, 540), (2, 90, NAN, 200, 300)])
    assert math.isnan(lens.primary_value(r))
    assert "eligibility_history" not in lens.observed_dimensions(r)
    r.dimensions["eligibility_history"] = Dimension("recorded")
    assert lens.observed_dimensions(r)["eligibility_history"].value == "none in the data"
    partial = fleet([(4, 0, 10, 40, 540), (2, 90, NAN, 200, 300)])
    assert lens.observed_dimensions(partial)["eligibility_history"].value.startswith("partial")


def test_fleet_iso_window_times():
    r = fleet([(4, 0, 10, 40, 540)], ws="1970-01-01T00:00:00Z", we="1970-01-01T00:16:40+00:00")
    assert read_window(r).end == 1000.0


# ---------------------------------------------------------------- guardrails


@pytest.mark.parametrize(
    "rule, limit, base, cand, expected",
    [
        ("max", 0.05, 0.0, 0.04, "held"),
        ("max", 0.05, 0.0, 0.06, "broken"),
        ("min", 0.9, 1.0, 0.8, "broken"),
        ("max_increase", 0.01, 0.01, 0.015, "held"),
        ("max_increase", 0.01, 0.01, 0.03, "broken"),
        ("max_increase_pct", 1.0, 2.14, 2.15, "held"),
        ("max_increase_pct", 1.0, 2.14, 2.20, "broken"),
        ("within", 0.1, 1.0, 0.85, "broken"),
        ("within_pct", 5.0, 100.0, 96.0, "held"),
        ("max_increase", 0.01, NAN, 0.0, "unknown"),
        ("max", 0.05, NAN, NAN, "unknown"),
    ],
)
def test_guardrail_rules(rule, limit, base, cand, expected):
    assert GuardrailSpec("g", "G", "m", rule, limit).judge(base, cand) == expected


def test_unknown_guardrail_rule_is_refused():
    with pytest.raises(ValueError, match="unknown rule"):
        GuardrailSpec("g", "G", "m", "about", 1.0)


def test_summary_only_inference_run_uses_reported_figures():
    lens = builtin_lens("inference")
    r = RunRecord(
        lens="inference",
        label="guidellm",
        meta={
            "summary": {
                "ttft_ms": {"p95": 123.0, "mean": 80.0},
                "prompt_tokens": {"median": 512},
                "output_tokens": {"median": 128},
            }
        },
    )
    assert lens.primary_value(r) == 123.0
    assert lens.observed_dimensions(r)["request_mix"].value == "512 prompt / 128 output tokens (median)"
    assert math.isnan(
        lens.primary_value(RunRecord(lens="inference", label="empty", meta={"summary": {"ttft_ms": {"mean": 80.0}}}))
    )
