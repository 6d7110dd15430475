"""The analysis: guards, flags, orientation, unpaired form, JSON contract, multi-metric gate."""

import json
import math

import numpy as np
import pytest

import workbench.stats as ws
from tests.stats.datasets import AP, A, B, B2


def test_json_contract():
    doc = ws.analyze(A, B, AP, paired=True).to_json()
    for key in (
        "ratio",
        "throughput_ratio",
        "time_change_pct",
        "throughput_change_pct",
        "intervals",
        "aa",
        "verdict",
        "flags",
        "gate",
    ):
        assert key in doc
    assert doc["verdict"] in ws.VERDICTS and doc["gate"] in (ws.PASS, ws.FAIL, ws.RERUN)
    for i in doc["intervals"]:
        assert {"method", "level", "low", "high"} <= set(i)
    boot = [i for i in doc["intervals"] if i["method"].startswith("bootstrap")]
    assert boot and all(
        i["seed"] == 12345 and i["n_boot"] == 10_000 and i["numpy_version"] == np.__version__ for i in boot
    )
    json.dumps(doc, allow_nan=False)  # no NaN/Infinity anywhere


@pytest.mark.parametrize("m", [1, 2])
def test_too_few_rounds_is_never_a_verdict_or_a_pass(m):
    r = ws.analyze([100.0, 100.1][:m], [150.0, 150.2][:m], paired=True)
    assert r.verdict == ws.INCONCLUSIVE and r.gate == ws.RERUN
    assert ws.TOO_FEW_ROUNDS in r.flags


def test_few_rounds_warns():
    r = ws.analyze(A[:4], B[:4], paired=True)
    assert ws.FEW_ROUNDS in r.flags and ws.TOO_FEW_ROUNDS not in r.flags


def test_unstable_session_withholds_the_verdict():
    ap = A * 1.03  # the A/A arm sits 3 % above A: bias or drift in the session
    r = ws.analyze(A, B * 1.2, ap + np.linspace(-0.01, 0.01, 8), paired=True)
    assert ws.UNSTABLE in r.flags
    assert r.verdict == ws.INCONCLUSIVE and r.gate == ws.RERUN
    assert "unstable" in r.reason


def test_no_aa_control_is_flagged():
    r = ws.analyze(A, B, paired=True)
    assert ws.NO_AA_CONTROL in r.flags and r.aa is None and r.to_json()["aa"] is None
    assert r.planning.noise_source.startswith("B vs A")


def test_higher_is_better_inverts_to_time_like():
    thr_a, thr_b = 1000 / A, 1000 / B  # throughput of the D1 runs
    r = ws.analyze(thr_a, thr_b, paired=True, lower_is_better=False, n_boot=0)
    assert r.ratio == pytest.approx(thr_a.mean() / thr_b.mean())
    assert r.ratio > 1 and r.verdict == ws.REGRESSION  # lower throughput is worse
    swapped = ws.analyze(thr_b, thr_a, paired=True, n_boot=0)
    assert (r.ci95.low, r.ci95.high) == (swapped.ci95.low, swapped.ci95.high)


def test_unpaired_uses_welch_fieller_and_mann_whitney():
    r = ws.analyze(A, B[:6], paired=False)
    assert r.ci95.method == "fieller-welch"
    methods = {i.method for i in r.intervals}
    assert {"fieller-welch", "delta-log-welch", "bootstrap-percentile", "bootstrap-expanded-percentile"} <= methods
    assert r.tests.rank_test.name == "mann-whitney-u"
    assert r.planning.counts == "runs per arm" and r.n == {"A": 8, "B": 6}
    full = ws.analyze(A, B, paired=False, n_boot=0)
    assert (full.ci95.low, full.ci95.high) == pytest.approx((1.0204360665, 1.0339667681), abs=1e-10)  # O-R9
    assert full.verdict == ws.REGRESSION


def test_paired_needs_equal_lengths():
    with pytest.raises(ValueError, match="equal lengths"):
        ws.analyze(A, B[:6], paired=True)


@pytest.mark.parametrize("bad", [[1.0, 0.0, 2.0], [1.0, -2.0, 3.0], [1.0, math.nan, 2.0], [], [1.0, math.inf]])
def test_invalid_values_are_refused(bad):
    with pytest.raises(ValueError):
        ws.analyze(bad, [1.0, 2.0, 3.0], paired=False)


def test_unbounded_fieller_is_inconclusive():
    r = ws.analyze([1.0, 100.0, 1.0, 100.0], [2.0, 3.0, 2.0, 3.0], paired=True, n_boot=0)
    assert not r.ci95.bounded and ws.UNBOUNDED_INTERVAL in r.flags
    assert r.verdict == ws.INCONCLUSIVE and r.gate == ws.RERUN
    assert r.to_json()["intervals"][0]["low"] is None


def test_outlier_run_is_flagged_not_dropped():
    b = B.copy()
    b[3] = 140.0
    r = ws.analyze(A, b, paired=True, n_boot=0)
    assert ws.OUTLIER_RUNS in r.flags and 3 in r.outliers["B"]
    assert r.means["B"] == pytest.approx(b.mean())  # still in the estimate


def test_drift_flag():
    m = 12
    drifting = 100 * np.exp(0.004 * np.arange(m)) * (1 + 0.0005 * np.sin(np.arange(m)))
    r = ws.analyze(drifting, drifting * 1.001, paired=True, n_boot=0)
    assert ws.DRIFT in r.flags
    assert r.drift["A"].pct_per_slot == pytest.approx(0.4, abs=0.02)
    steady = ws.analyze(A, B, paired=True, n_boot=0)
    assert ws.DRIFT not in steady.flags


def test_methods_disagree_on_skewed_rounds():
    a = np.array([10.0, 10, 10, 10, 10, 10])
    b = np.array([10.0, 10.1, 9.9, 10.0, 30.0, 10.1])
    r = ws.analyze(a, b, paired=True, n_boot=0)
    assert ws.METHODS_DISAGREE in r.flags


def test_rank_test_states_the_smallest_achievable_p():
    r = ws.analyze(A[:3], B[:3], paired=True, n_boot=0)
    rank = r.tests.rank_test
    assert rank.min_achievable_p == 0.25 and rank.can_reach_alpha is False


def test_inconclusive_gives_rounds_needed():
    r = ws.analyze(A, B2, AP, paired=True, delta=0.005, n_boot=0)
    assert r.verdict == ws.INCONCLUSIVE
    assert r.planning.rounds_needed == ws.rounds_needed(r.aa.noise_floor_sd_log, 0.005) == 8


def test_gate_metrics_uses_holm():
    fail = ws.analyze(A, B, AP, paired=True, delta=0.02, n_boot=0)
    ok = ws.analyze(A, B2, AP, paired=True, delta=0.02, n_boot=0)
    assert ws.gate_metrics([ok, ok]).gate == ws.PASS
    summary = ws.gate_metrics([ok, fail])
    assert summary.gate == ws.FAIL and summary.per_metric == [ws.PASS, ws.FAIL]
    assert summary.holm_p_regression == ws.holm([ok.p_regression, fail.p_regression])
    unresolved = ws.analyze(A, B, AP, paired=True, delta=0.03, n_boot=0)
    assert ws.gate_metrics([ok, unresolved]).gate == ws.RERUN


def test_drift_uses_the_slot_span():
    # The same trend per round, measured on global slots 3 apart (three arms per round):
    # the per-slot slope is a third, the change across the session the same.
    m = 12
    values = 100 * np.exp(0.004 * np.arange(m)) * (1 + 0.0005 * np.sin(np.arange(m)))
    slots = {"A": 3 * np.arange(m), "B": 3 * np.arange(m) + 1}
    r = ws.analyze(values, values * 1.001, paired=True, n_boot=0, slots=slots)
    assert ws.DRIFT in r.flags
    assert r.drift["A"].pct_per_slot == pytest.approx(0.4 / 3, abs=0.01)
    assert r.to_json()["drift"]["A"]["session_change_pct"] == pytest.approx(100 * math.expm1(0.004 * 11), abs=0.3)
