"""Verify keeps Compare's contract (issue 27 item 1): a rerun reads each arm's dimensions and
work from its captures; a must-match difference refuses, work that differs is judged on
throughput, never on time alone."""

from __future__ import annotations

import json

import pytest

from tests.rerun.helpers import wb, write_plan
from workbench.rerun.report import reanalyze

from .fakes import BASE_DIMS, arm, fake_bench


def _run(tmp_path, store, baseline, candidate, *, lens="training", name="p", control=None, **top):
    top.setdefault("metric", "step_ms" if lens == "training" else "ttft_ms")
    top.setdefault("statistic", "mean")
    path = write_plan(tmp_path / f"{name}.toml", baseline=baseline, candidate=candidate, name=name, lens=lens, **top)
    if control is not None:
        with path.open("a") as f:
            f.write(f"\n[control]\nargv = {json.dumps(control)}\n")
    code, out, err = wb("rerun", "plan", "--from-file", str(path), "--json", store=store)
    assert code == 0, err
    code, out, err = wb("rerun", "run", name, "--workdir", str(tmp_path / "w"), "--json", store=store)
    assert code == 0, err
    _, text, _ = wb("rerun", "report", name, store=store)
    return json.loads(out), text


def test_issue_example_half_the_batch_is_refused(tmp_path, sqlite_url):
    """32 samples/step in 10 ms against 16 samples/step in 9 ms, effective_batch 32 and 16
    declared: the released tool said IMPROVEMENT +10.99 %."""
    bench = fake_bench(tmp_path)
    dims = BASE_DIMS["training"]
    doc, text = _run(
        tmp_path,
        sqlite_url,
        arm(bench, "training", 10.0, 32, **dims, effective_batch=32),
        arm(bench, "training", 9.0, 16, **dims, effective_batch=16),
    )
    assert doc["verdict"] is None
    assert doc["refusal"]["dimension"] == "effective_batch"
    assert "--change effective_batch=FROM:TO" in doc["refusal"]["reason"]
    assert "Verdict: REFUSED" in text and "IMPROVEMENT" not in text
    assert reanalyze(doc) == {"analysis": None, "verdict": None, "flags": []}  # --recompute keeps the refusal


def test_issue_example_declared_batch_change_is_judged_on_throughput(tmp_path, sqlite_url):
    bench = fake_bench(tmp_path)
    dims = BASE_DIMS["training"]
    doc, text = _run(
        tmp_path,
        sqlite_url,
        arm(bench, "training", 10.0, 32, **dims, effective_batch=32),
        arm(bench, "training", 9.0, 16, **dims, effective_batch=16),
        change={"effective_batch": ["32", "16"]},
    )
    assert "refusal" not in doc
    assert doc["work"]["same"] is False
    assert doc["basis"]["metric"] == "throughput" and doc["basis"]["unit"] == "samples/s"
    # θ is time-like (> 1 is worse): (32 / 10) / (16 / 9), the candidate's throughput is 1.8x lower.
    assert doc["analysis"]["ratio"] == pytest.approx((32 / 10) / (16 / 9), rel=0.01)
    assert doc["analysis"]["throughput_change_pct"] == pytest.approx(100 * ((16 / 9) / (32 / 10) - 1), abs=1)
    assert doc["verdict"] != "IMPROVEMENT" and doc["verdict"] in ("REGRESSION", "SLOWER_UNRESOLVED")
    assert "work: samples per step: 32 vs 16 (DIFFERENT); time per run: A 10." in text
    assert "judged on throughput (samples/s): A 3" in text and "throughput -44." in text
    again = reanalyze(doc)  # --recompute derives the same throughput verdict from the stored per-run values
    assert again["verdict"] == doc["verdict"] and again["analysis"]["ratio"] == pytest.approx(doc["analysis"]["ratio"])


# ---------------------------------------------------------------- metamorphic, every rerun lens

LENSES = ("training", "inference")
# A must-match dimension each lens states in its captures, and a value it can take instead.
MUST_MATCH = {"training": ("model", "resnet101"), "inference": ("hardware", "1x A100")}
# The work per item that the fake sets: samples per step, prompt tokens per request.
WORK = {"training": 32, "inference": 512}
WORK_CHANGE = {"training": "effective_batch", "inference": "request_mix"}


def _arm(bench, lens, ms=10.0, work=None, **dims):
    return arm(bench, lens, ms, WORK[lens] if work is None else work, **{**BASE_DIMS[lens], **dims})


@pytest.mark.parametrize("lens", LENSES)
def test_a_must_match_difference_in_one_arm_is_refused(tmp_path, sqlite_url, lens):
    bench = fake_bench(tmp_path)
    dim, other = MUST_MATCH[lens]
    doc, text = _run(tmp_path, sqlite_url, _arm(bench, lens), _arm(bench, lens, 9.0, **{dim: other}), lens=lens)
    assert doc["refusal"]["dimension"] == dim and doc["verdict"] is None and doc["analysis"] is None
    assert "Verdict: REFUSED" in text
    # The same runs with that dimension declared as the change: a verdict again.
    doc, _ = _run(
        tmp_path,
        sqlite_url,
        _arm(bench, lens),
        _arm(bench, lens, 9.0, **{dim: other}),
        lens=lens,
        name="q",
        change={dim: []},
    )
    assert "refusal" not in doc and doc["verdict"] == "IMPROVEMENT"


@pytest.mark.parametrize("lens", LENSES)
def test_half_the_work_in_ten_percent_less_time_is_never_an_improvement(tmp_path, sqlite_url, lens):
    bench = fake_bench(tmp_path)
    doc, _ = _run(
        tmp_path,
        sqlite_url,
        _arm(bench, lens),
        _arm(bench, lens, 9.0, WORK[lens] / 2),
        lens=lens,
        change={WORK_CHANGE[lens]: []},
    )
    assert doc["work"]["same"] is False and doc["basis"]["metric"] == "throughput"
    assert doc["analysis"]["throughput_change_pct"] < -20
    assert doc["verdict"] in ("REGRESSION", "SLOWER_UNRESOLVED")


@pytest.mark.parametrize("lens", LENSES)
def test_an_arm_that_disagrees_with_itself_is_refused_naming_the_runs(tmp_path, sqlite_url, lens):
    bench = fake_bench(tmp_path)
    dim, other = MUST_MATCH[lens]
    doc, _ = _run(tmp_path, sqlite_url, _arm(bench, lens), _arm(bench, lens, 9.0, _round1={dim: other}), lens=lens)
    assert doc["refusal"]["dimension"] == dim and doc["verdict"] is None
    assert "disagrees with itself" in doc["refusal"]["reason"] and "runs disagree: run " in doc["refusal"]["reason"]


@pytest.mark.parametrize("lens", LENSES)
def test_a_control_that_is_not_the_baseline_again_makes_the_session_unstable(tmp_path, sqlite_url, lens):
    bench = fake_bench(tmp_path)
    doc, text = _run(
        tmp_path,
        sqlite_url,
        _arm(bench, lens),
        _arm(bench, lens, 9.0),
        lens=lens,
        control=_arm(bench, lens, topology="2 GPUs"),
    )
    assert doc["verdict"] == "INCONCLUSIVE" and "UNSTABLE" in doc["flags"]
    assert "topology" in doc["control_mismatch"] and "UNSTABLE" in text
    again = reanalyze(doc)
    assert again["verdict"] == "INCONCLUSIVE" and "UNSTABLE" in again["flags"]


@pytest.mark.parametrize("lens", LENSES)
def test_a_stated_guardrail_that_cannot_be_judged_withholds_improvement(tmp_path, sqlite_url, lens):
    bench = fake_bench(tmp_path)
    guard = [{"metric": "accuracy", "rule": "max_increase", "limit": 0.01}]
    doc, _ = _run(tmp_path, sqlite_url, _arm(bench, lens), _arm(bench, lens, 9.0), lens=lens, guardrails=guard)
    assert doc["verdict"] == "FASTER_UNRESOLVED" and "guardrail accuracy cannot be judged" in doc["reason"]
    assert reanalyze(doc)["verdict"] == "FASTER_UNRESOLVED"
    # Once both arms report it, the same runs give their improvement.
    q = {"_quality": {"accuracy": 0.9}}
    doc, _ = _run(
        tmp_path, sqlite_url, _arm(bench, lens, **q), _arm(bench, lens, 9.0, **q), lens=lens, name="q", guardrails=guard
    )
    assert doc["verdict"] == "IMPROVEMENT"
