"""Verify keeps Compare's contract (issue 27 item 1): a rerun reads each arm's dimensions and
work from its captures; a must-match difference refuses, work that differs is judged on
throughput, never on time alone."""

from __future__ import annotations

import json

import pytest

from tests.rerun.helpers import wb, write_plan

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
    doc, text = _run(tmp_path, sqlite_url, arm(bench, "training", 10.0, 32, **dims, effective_batch=32),
                     arm(bench, "training", 9.0, 16, **dims, effective_batch=16))
    assert doc["verdict"] is None
    assert doc["refusal"]["dimension"] == "effective_batch"
    assert "--change effective_batch=FROM:TO" in doc["refusal"]["reason"]
    assert "Verdict: REFUSED" in text and "IMPROVEMENT" not in text


def test_issue_example_declared_batch_change_is_judged_on_throughput(tmp_path, sqlite_url):
    bench = fake_bench(tmp_path)
    dims = BASE_DIMS["training"]
    doc, text = _run(tmp_path, sqlite_url, arm(bench, "training", 10.0, 32, **dims, effective_batch=32),
                     arm(bench, "training", 9.0, 16, **dims, effective_batch=16),
                     change={"effective_batch": ["32", "16"]})
    assert "refusal" not in doc
    assert doc["work"]["same"] is False
    assert doc["basis"]["metric"] == "throughput" and doc["basis"]["unit"] == "samples/s"
    # θ is time-like (> 1 is worse): (32 / 10) / (16 / 9), the candidate's throughput is 1.8x lower.
    assert doc["analysis"]["ratio"] == pytest.approx((32 / 10) / (16 / 9), rel=0.01)
    assert doc["analysis"]["throughput_change_pct"] == pytest.approx(100 * ((16 / 9) / (32 / 10) - 1), abs=1)
    assert doc["verdict"] != "IMPROVEMENT" and doc["verdict"] in ("REGRESSION", "SLOWER_UNRESOLVED")
    assert "work: samples per step: 32 vs 16 (DIFFERENT); time per run: A 10." in text
    assert "judged on throughput (samples/s): A 3" in text and "throughput -44." in text
