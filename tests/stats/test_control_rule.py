"""The control rule (workbench/stats/control.py, docs/methods.md section 6): where the A/A control's
noise floor is above the band, the verdict widens its intervals by what the control shows and a
change must also hold at α/5. On made-up sessions, and on real run times replayed
(bench/data/aa_run_times.json through bench/aa_sessions.py: deterministic, never timed)."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from workbench.stats import analyze, gate_metrics
from workbench.stats.sequential import SequentialDesign, look

BENCH = Path(__file__).resolve().parents[2] / "bench" / "aa_sessions.py"

# A noisy session (the A′ arm scatters ±8 %, the band is ±2 %) where B/A alone clears the band.
A = [105.4, 109.3, 88.0, 99.3, 105.2, 107.0, 103.3, 107.8]
B = [113.6, 119.3, 94.3, 99.9, 107.1, 115.8, 106.6, 122.0]
AP = [116.9, 126.2, 87.8, 110.9, 97.8, 100.2, 104.0, 110.3]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("aa_sessions_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_a_noisy_control_turns_a_regression_into_slower_unresolved():
    r = analyze(A, B, AP, paired=True)
    assert "UNDERPOWERED" in r.flags and "WIDENED" in r.flags
    assert r.ci95.low > 1.02  # the model alone: REGRESSION, gate FAIL
    w = r.widening
    assert (w.model_verdict, w.model_gate) == ("REGRESSION", "FAIL")
    assert r.verdict == "SLOWER_UNRESOLVED" and r.gate == "RERUN"
    # Widened by the scatter the control shows: the RMS of the two ratios' SDs over B/A's.
    sd_ba, sd_aa = r.effect.sd_unit_log, r.aa.effect.sd_unit_log
    assert w.scale == pytest.approx(math.sqrt((sd_aa**2 + sd_ba**2) / 2) / sd_ba)
    half = math.log(r.ratio / r.ci95.low)
    assert math.log(r.ratio / w.ci95.low) == pytest.approx(w.scale * half)
    assert w.alpha == pytest.approx(0.01) and w.strict.level == pytest.approx(0.99) and w.strict.low < 1
    doc = r.to_json()
    assert doc["widened"]["model_verdict"] == "REGRESSION" and "α/5" in doc["reason"]
    assert [i["role"] for i in doc["widened"]["intervals"]] == ["verdict"] * 3
    # A metric the rule judged is not failed by the multi-metric Holm path either.
    assert gate_metrics([r]).gate == "RERUN"


def test_a_quiet_session_is_untouched():
    rng = np.random.default_rng(4)
    a = 100 * np.exp(rng.normal(0, 0.002, 10))
    b, ap = a * 1.05 * np.exp(rng.normal(0, 0.002, 10)), a * np.exp(rng.normal(0, 0.002, 10))
    r = analyze(a, b, ap, paired=True)
    assert r.verdict == "REGRESSION" and r.widening is None and "WIDENED" not in r.flags
    assert "widened" not in r.to_json()


def test_without_a_control_the_model_decides():
    r = analyze(A, B, None, paired=True)
    assert r.verdict == "REGRESSION" and r.widening is None


def test_the_rule_is_said_only_where_it_changes_the_answer():
    rng = np.random.default_rng(9)
    a = 100 * np.exp(rng.normal(0, 0.05, 10))
    b, ap = a * 1.5 * np.exp(rng.normal(0, 0.05, 10)), a * np.exp(rng.normal(0, 0.05, 10))
    r = analyze(a, b, ap, paired=True)  # noisy control, but a 50 % slowdown clears every interval
    assert "UNDERPOWERED" in r.flags and r.verdict == "REGRESSION" and r.widening is None


def test_a_sequential_look_applies_the_same_rule():
    design = SequentialDesign(8, first_look=8)  # one look: the fixed design's t interval
    d = np.log(np.array(B) / np.array(A))
    d_aa = np.log(np.array(AP) / np.array(A))
    ruled, model = look(design, d, 0.02, d_aa), look(design, d, 0.02, d_aa, widen=False)
    assert model.decision == "REGRESSION" and model.widened is None
    assert ruled.decision == "SLOWER_UNRESOLVED" and ruled.widened > 1 and ruled.low95 < model.low95


def test_drifting_aa_sessions_of_real_run_times_are_never_a_regression(bench):
    """A/A sessions replayed from the recorded runs whose arms drift (DRIFT): the model alone
    called some REGRESSION or IMPROVEMENT; with the control rule none is."""
    cells = bench.load_cells()
    rng = np.random.default_rng(51)
    drifting, ours, model = 0, 0, 0
    for i in range(1200):
        s = bench._arms(bench.straight(cells[i % len(cells)], 10, rng), 0.0)
        r = analyze(s.a, s.b, s.ap, paired=True, n_boot=0, rank_test=False)
        if "DRIFT" not in r.flags:
            continue
        drifting += 1
        v, m, _ = bench.fixed_verdicts(s)
        ours += v in bench.FALSE
        model += m in bench.FALSE
    assert drifting >= 200
    assert ours == 0 and model >= 2, (drifting, ours, model)


def test_aa_sessions_of_real_run_times_cry_wolf_at_most_one_percent(bench):
    """The bench's A/A replay, short and on a fixed seed: every workload, load and protocol."""
    ours = model = sessions = 0
    names = ["fixed 5", "fixed 10", "sequential ≤20", "resumed 10"]
    for _cell, _name, _effect, t, m in bench.replay(
        bench.load_cells(), sessions=30, seed=51, effects=(0.0,), names=names
    ):
        ours += t.false_alarms
        model += m.false_alarms
        sessions += t.sessions
    assert sessions == 6 * 4 * 30
    assert ours <= 0.01 * sessions and ours < model, (ours, model, sessions)


def test_the_recorded_run_times_say_where_they_come_from():
    doc = json.loads((BENCH.parent / "data" / "aa_run_times.json").read_text())
    assert doc["format"] == "wb.bench.aa-run-times/1" and doc["machine"]["cores"]
    chunks = [c for s in doc["sessions"] for c in s["chunks"]]
    assert {c["workload"] for c in chunks} == {"cpu", "memory", "sleep"}
    assert {c["load"] for c in chunks} == {"idle", "loaded"}
    assert all(len(c["values_ms"]) == len(c["t_s"]) and c["loadavg_before"] for c in chunks)
