"""Every value the options allow works (issue 45, item 4): the analysis at its documented maxima.

`wb stats` up to 10,000 values per arm (it failed above 1,023: the smallest achievable
rank-test p, 2/2^n and 2/C(2n, n), overflowed a float), `--n-boot` at its maximum, the
bootstrap in bounded memory, and a sequential design of the largest plan (10,000 rounds).
"""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from workbench.cli import main
from workbench.stats import analyze
from workbench.stats import intervals as iv
from workbench.stats.rank_tests import mwu_min_p, wilcoxon_min_p
from workbench.stats.sequential import MAX_LOOKS, SequentialDesign, look
from workbench.limits import MAX_ROUNDS

MAX_VALUES = 10_000  # per arm: what `wb stats` promises (docs/methods.md section 10)


def _values(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = 100 * np.exp(rng.normal(0, 0.02, n))
    return a, a * 1.01 * np.exp(rng.normal(0, 0.01, n)), a * np.exp(rng.normal(0, 0.01, n))


def _text(x: np.ndarray) -> str:
    return ",".join(f"{v:.6f}" for v in x)


def _stats(*args: str) -> tuple[int, str]:
    """``wb stats ARGS`` in this process, as the command line runs it: (exit code, stdout + stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["stats", *args])
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue() + err.getvalue()


def test_smallest_rank_test_p_is_a_number_for_any_count():
    assert wilcoxon_min_p(3) == 0.25 and mwu_min_p(3, 3) == pytest.approx(0.1)
    assert wilcoxon_min_p(1024) == pytest.approx(2.0**-1023)  # 2.0 / 2**1024 raised OverflowError
    assert wilcoxon_min_p(MAX_VALUES) == 0.0 and mwu_min_p(MAX_VALUES, MAX_VALUES) == 0.0
    assert 0 < mwu_min_p(515, 515) < 1e-300  # C(1030, 515) > 1.8e308: the float of it overflowed


@pytest.mark.parametrize("paired", [True, False])
def test_wb_stats_at_10000_values_per_arm(paired):
    a, b, ap = _values(MAX_VALUES)
    mode = [] if paired else ["--unpaired"]
    code, out = _stats("-a", _text(a), "-b", _text(b), "--a-prime", _text(ap), "--json", *mode)
    assert code == 0, out
    doc = json.loads(out)
    assert doc["n"] == {"A": MAX_VALUES, "B": MAX_VALUES, "A'": MAX_VALUES}
    assert doc["ratio"] == pytest.approx(float(b.mean() / a.mean()))
    assert doc["tests"]["rank_test"]["min_achievable_p"] == 0.0
    boot = [i for i in doc["intervals"] if i["method"] == "bootstrap-percentile" and i["level"] == 0.95]
    assert boot and boot[0]["n_boot"] == 10_000 and boot[0]["low"] < doc["ratio"] < boot[0]["high"]


def test_wb_stats_at_1024_values_the_old_edge():
    a, b, ap = _values(1024)
    for mode in ([], ["--unpaired"]):
        code, out = _stats("-a", _text(a), "-b", _text(b), "--a-prime", _text(ap), "--json", *mode)
        assert code == 0, out


def test_n_boot_at_its_maximum_and_a_bootstrap_over_the_budget_is_one_line():
    a, b, ap = _values(100)
    code, out = _stats("-a", _text(a), "-b", _text(b), "--a-prime", _text(ap), "--n-boot", "1000000", "--json")
    assert code == 0, out
    boot = [i for i in json.loads(out)["intervals"] if i["method"] == "bootstrap-percentile"]
    assert boot[0]["n_boot"] == 1_000_000
    a, b, _ = _values(MAX_VALUES)
    code, out = _stats("-a", _text(a), "-b", _text(b), "--n-boot", "1000000")
    assert code == 2 and "over the limit of 100,000,000" in out and "at most 10,000 here" in out
    assert "Traceback" not in out and len(out.strip().splitlines()) == 1


def test_delta_just_under_one_and_a_large_seed():
    a, b, ap = _values(20)
    code, out = _stats(
        "-a", _text(a), "-b", _text(b), "--a-prime", _text(ap), "--delta", "0.999", "--seed", str(2**53 - 1), "--json"
    )
    assert code == 0, out
    assert json.loads(out)["verdict"] == "EQUIVALENT"


@pytest.mark.parametrize("paired", [True, False])
def test_bootstrap_in_chunks_draws_the_same_resamples_as_one_matrix(monkeypatch, paired):
    """Bounded memory without a different answer: the chunked draw is the whole matrix, row for row."""
    a, b, ap = _values(37)
    whole = analyze(a, b, ap, paired=paired, seed=7, n_boot=501)
    monkeypatch.setattr(iv, "CHUNK_VALUES", 37 * 5 + 3)  # 5 rows a chunk: chunk ends fall mid-stream
    chunked = analyze(a, b, ap, paired=paired, seed=7, n_boot=501)
    for x, y in zip(whole.intervals + whole.aa.effect.intervals, chunked.intervals + chunked.aa.effect.intervals):
        assert (x.method, x.level, x.low, x.high) == (y.method, y.level, y.low, y.high)
    rng = np.random.Generator(np.random.PCG64(7))
    idx = rng.integers(0, 37, size=(501, 37))
    expected = b[idx].mean(axis=1) / a[idx].mean(axis=1)
    assert np.array_equal(iv.bootstrap_ratios(a, b, paired=True, seed=7, n_boot=501), expected)


def test_a_sequential_design_of_the_largest_plan():
    design = SequentialDesign(MAX_ROUNDS)
    assert len(design.looks) == MAX_LOOKS and design.looks[0] == 3 and design.looks[-1] == MAX_ROUNDS
    z = design.z(0.05)
    # As many looks as a plan of 102 rounds, so nearly its last boundary (the continuous limit
    # of O'Brien–Fleming spending is 2.24: P(max |W(t)| ≥ c on [0, 1]) = 0.05).
    every_round = SequentialDesign(3 + MAX_LOOKS - 1).z(0.05)
    assert 1.96 < z[MAX_ROUNDS] < 2.25 and z[MAX_ROUNDS] == pytest.approx(every_round[3 + MAX_LOOKS - 1], abs=0.05)
    x = np.random.default_rng(2).normal(0.0, 0.01, MAX_ROUNDS)
    final = look(design, x, 0.02, x * 0.5)
    assert final.round == MAX_ROUNDS and final.decision == "EQUIVALENT"
    between = look(design, x[:150], 0.02)
    assert between.round == design.last_look(150) and between.round < 150


def test_small_designs_look_after_every_round():
    assert SequentialDesign(20).looks == tuple(range(3, 21))
    assert SequentialDesign(3 + MAX_LOOKS - 1).looks == tuple(range(3, 3 + MAX_LOOKS))
