"""Sequential stopping: boundaries against a published table, error rates by simulation,
and a live rerun plan that stops as soon as the data decide."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from workbench.stats.sequential import (
    CONTINUE,
    SequentialDesign,
    boundaries,
    decide_at,
    fixed_rates,
    look,
    simulate,
    spent,
)


def test_obrien_fleming_boundaries_match_the_published_table():
    # One-sided, α = 0.05, O'Brien–Fleming-type spending, 4 equally spaced looks
    # (shared research/sequential-censoring-goodput.md: good to about 1e-3).
    z = boundaries((0.25, 0.5, 0.75, 1.0), 0.05, "obrien-fleming", sides=1)
    assert z == pytest.approx((3.7496, 2.5399, 2.0160, 1.7201), abs=1e-3)
    assert [spent(t, 0.05, "obrien-fleming") for t in (0.25, 0.5, 0.75, 1.0)] == pytest.approx(
        [0.0000886, 0.005575, 0.02363, 0.05], rel=2e-3
    )


def test_one_look_is_the_fixed_design():
    assert boundaries((1.0,), 0.05, "pocock", sides=2)[0] == pytest.approx(1.959964, abs=1e-3)
    assert boundaries((1.0,), 0.05, "obrien-fleming", sides=1)[0] == pytest.approx(1.644854, abs=1e-3)


def test_pocock_boundaries_are_nearly_flat_and_spend_all_alpha():
    z = boundaries(tuple(k / 5 for k in range(1, 6)), 0.05, "pocock", sides=2)
    assert max(z) - min(z) < 0.1 and 2.3 < z[0] < 2.5


def test_repeated_looks_keep_the_false_regression_rate_at_alpha():
    design = SequentialDesign(15)
    rates = simulate(design, effect=0.0, cv=0.03, delta=0.02, sessions=4000, seed=7)
    assert rates["REGRESSION"] <= 0.025 + 0.01  # designed ≤ α/2 per side; simulation margin
    assert rates["IMPROVEMENT"] <= 0.025 + 0.01


def test_naive_looks_would_not_keep_it():
    # The same looks, each at the fixed 95 % level: the error the design exists to prevent.
    rng = np.random.default_rng(3)
    d = rng.normal(0.0, 0.04, (4000, 15))
    crossed = np.zeros(4000, dtype=bool)
    from scipy.stats import t as t_dist

    for n in range(3, 16):
        m, s = d[:, :n].mean(axis=1), d[:, :n].std(axis=1, ddof=1)
        crossed |= np.abs(m / (s / math.sqrt(n))) > t_dist.ppf(0.975, n - 1)
    assert crossed.mean() > 0.1


def test_a_clear_effect_stops_early_and_detects_at_least_as_often_as_fixed():
    # The design's property, on the model alone (the control rule aside: it is the same for both).
    seq = simulate(SequentialDesign(10), effect=0.05, cv=0.02, delta=0.02, sessions=3000, seed=5, widen=False)
    fixed = fixed_rates(10, effect=0.05, cv=0.02, delta=0.02, sessions=3000, seed=5, widen=False)
    assert seq["mean_rounds"] < 10
    assert seq["REGRESSION"] >= fixed["REGRESSION"] - 0.02


def test_the_control_rule_costs_little_power_where_the_model_holds():
    # Lognormal rounds (the model): at this noise the A/A CI90 is often wider than the band, so
    # the rule applies in many looks; it costs a few points of power here and keeps every A/A
    # false alarm rate below the model's. (docs/methods.md section 6 has the measured cost.)
    for design in (SequentialDesign(10), SequentialDesign(10, first_look=10)):
        ruled = simulate(design, effect=0.05, cv=0.02, delta=0.02, sessions=3000, seed=5)
        model = simulate(design, effect=0.05, cv=0.02, delta=0.02, sessions=3000, seed=5, widen=False)
        assert model["REGRESSION"] - 0.06 <= ruled["REGRESSION"] <= model["REGRESSION"]
    aa = simulate(SequentialDesign(20), effect=0.0, cv=0.05, delta=0.02, sessions=3000, seed=5)
    aa_model = simulate(SequentialDesign(20), effect=0.0, cv=0.05, delta=0.02, sessions=3000, seed=5, widen=False)
    assert aa["REGRESSION"] + aa["IMPROVEMENT"] <= aa_model["REGRESSION"] + aa_model["IMPROVEMENT"]
    assert aa["REGRESSION"] + aa["IMPROVEMENT"] <= 0.01


def test_unstable_control_withholds_the_verdict():
    design = SequentialDesign(5)
    mean, sd = np.array([0.2]), np.array([0.001])
    assert decide_at(design, 4, mean, sd, 0.02, unstable=np.array([True]))[0] == CONTINUE
    assert decide_at(design, 5, mean, sd, 0.02, unstable=np.array([True]))[0] == "INCONCLUSIVE"
    assert decide_at(design, 4, mean, sd, 0.02, unstable=np.array([False]))[0] == "REGRESSION"


def test_look_needs_three_rounds():
    assert look(SequentialDesign(10), [0.1, 0.1], 0.02).decision == CONTINUE


def test_bad_designs_are_refused():
    with pytest.raises(ValueError, match="spending"):
        SequentialDesign(10, spending="haybittle")
    with pytest.raises(ValueError, match="at least 3"):
        SequentialDesign(2)


# ------------------------------------------------------------------- a live rerun plan


@pytest.mark.store
@pytest.mark.parametrize("candidate, verdict", [("11", "REGRESSION"), ("10", "EQUIVALENT")])
def test_a_sequential_plan_stops_once_decided(tmp_path, store_url, candidate, verdict):
    from tests.rerun.helpers import fake_bench, wb, write_plan

    bench = fake_bench(tmp_path)
    path = write_plan(
        tmp_path / "p.toml",
        baseline=[str(bench), "10"],
        candidate=[str(bench), candidate],
        rounds=20,
        stopping="sequential",
    )
    code, out, err = wb("rerun", "plan", "--from-file", str(path), "--json", store=store_url)
    assert code == 0, err
    code, out, err = wb("rerun", "run", "p", "--workdir", str(tmp_path / "w"), "--json", store=store_url)
    assert code in (0, 4), err
    doc = json.loads(out)
    seq = doc["sequential"]
    assert doc["verdict"] == verdict == seq["decision"]
    stopped = seq["stopped_at_round"]
    assert 3 <= stopped < 20
    assert len(doc["runs"]) == 3 * stopped and doc["execution"]["status"] == "complete"
    assert doc["plan"]["stopping"] == "sequential" and seq["design"]["max_rounds"] == 20
    assert f"stopped after round {stopped} of 20" in doc["reason"]
    code, text, err = wb("rerun", "report", "p", store=store_url)
    assert "sequential stopping" in text + err


def test_fixed_plans_keep_their_digest():
    from workbench.rerun.plan import Command, Plan

    plan = Plan(name="p", lens="training", baseline=Command(("a",)), candidate=Command(("b",)))
    assert "stopping" not in plan.to_json()
    assert Plan.from_json(plan.to_json()).digest() == plan.digest()
    seq = Plan(name="p", lens="training", baseline=Command(("a",)), candidate=Command(("b",)), stopping="sequential")
    assert seq.to_json()["stopping"] == "sequential" and seq.digest() != plan.digest()
