"""`compare(..., control=A′ runs)`: the A/A noise floor of stored runs, with the rerun
harness's guards (UNSTABLE withholds the verdict, UNDERPOWERED flags it)."""

from __future__ import annotations

import pytest

from factories import fleet_run, inference_run, training_run
from workbench.compare import compare
from workbench.errors import UsageError

CHANGE = {"engine_revision": ("v0.8.2", "v0.8.3")}


def side(n, first_seed, run_id=None, **kw):
    return [
        inference_run(f"r{first_seed + i}", seed=first_seed + i, run_id=None if run_id is None else run_id + i, **kw)
        for i in range(n)
    ]


def base_cand():
    return side(5, 0, 1), side(5, 10, 11, queue=120.0, engine_revision="v0.8.3")


def test_without_a_control_nothing_changes_and_the_flag_says_so():
    base, cand = base_cand()
    doc = compare(base, cand, changes=CHANGE).to_json()
    assert "control" not in doc["runs"]
    assert "NO_AA_CONTROL" in doc["primary"]["effect"]["flags"]
    assert doc["primary"]["effect"]["aa"] is None
    assert "control" not in doc["primary"]["per_run"]


def test_a_quiet_control_gives_every_effect_its_noise_floor():
    base, cand = base_cand()
    control = side(5, 20, 21)
    doc = compare(base, cand, changes=CHANGE, control=control).to_json()
    assert doc["runs"]["control"] == [21, 22, 23, 24, 25]
    effect = doc["primary"]["effect"]
    assert "NO_AA_CONTROL" not in effect["flags"] and "UNSTABLE" not in effect["flags"]
    assert effect["verdict"] == "REGRESSION"
    assert effect["runs"] == {"baseline": 5, "candidate": 5, "control": 5}
    assert effect["aa"]["ratio"] == pytest.approx(1.0, abs=0.01)
    assert effect["planning"]["noise_source"] == "A/A (A' vs A)"
    assert len(doc["primary"]["per_run"]["control"]) == 5
    for phase in doc["phases"]:  # the phases get the same control
        assert phase["effect"]["aa"] is not None and "NO_AA_CONTROL" not in phase["effect"]["flags"]
    guard = doc["guardrails"][0]
    assert guard["control_state"] == "held" and guard["control"] == pytest.approx(0.0)


def test_a_control_that_moved_on_its_own_withholds_the_verdict():
    """A′ 10 % slower than A at the same setup: the session is unstable (rerun rule)."""
    base, cand = base_cand()
    control = side(5, 20, 21, queue=55.0)
    effect = compare(base, cand, changes=CHANGE, control=control).to_json()["primary"]["effect"]
    assert "UNSTABLE" in effect["flags"]
    assert effect["verdict"] == "INCONCLUSIVE"
    assert "unstable" in effect["reason"]


def test_a_noisy_control_flags_underpowered():
    base, cand = base_cand()
    control = [
        inference_run(f"c{i}", seed=30 + i, queue=q, run_id=31 + i)
        for i, q in enumerate((30.0, 50.0, 36.0, 46.0, 40.0))
    ]
    effect = compare(base, cand, changes=CHANGE, control=control).to_json()["primary"]["effect"]
    assert "UNDERPOWERED" in effect["flags"]
    assert effect["aa"]["underpowered"] is True


def test_one_control_run_is_no_noise_floor_and_says_why():
    base, cand = base_cand()
    effect = compare(base, cand, changes=CHANGE, control=side(1, 20, 21)).to_json()["primary"]["effect"]
    assert "NO_AA_CONTROL" in effect["flags"]
    assert "two or more" in effect["control_note"]


def test_a_control_is_the_baseline_again_or_refused():
    base, cand = base_cand()
    with pytest.raises(UsageError, match="engine_revision differs .*baseline v0.8.2, control v0.8.3"):
        compare(base, cand, changes=CHANGE, control=side(3, 20, 21, engine_revision="v0.8.3"))
    with pytest.raises(UsageError, match="hardware differs"):
        compare(base, cand, changes=CHANGE, control=side(3, 20, 21, hardware="1x A100"))
    with pytest.raises(UsageError, match="run 3 is also compared"):
        compare(base, cand, changes=CHANGE, control=[base[2]])
    with pytest.raises(UsageError, match="different lenses|cannot read it"):
        compare(base, cand, changes=CHANGE, control=[training_run("t", run_id=40)])


def test_an_accepted_dimension_also_covers_the_control():
    base, cand = base_cand()
    control = side(3, 20, 21, power_policy="capped")
    with pytest.raises(UsageError, match="power_policy differs"):
        compare(base, cand, changes=CHANGE, control=control)
    doc = compare(base, cand, changes=CHANGE, control=control, accepts={"power_policy": "site-wide cap"}).to_json()
    assert doc["runs"]["control"] == [21, 22, 23]


def test_fleet_window_metrics_take_the_control():
    base = [fleet_run(f"A{i}", waits=(10.0 + i,) * 20, run_id=i) for i in range(1, 4)]
    cand = [fleet_run(f"B{i}", waits=(40.0 + i,) * 20, run_id=10 + i) for i in range(1, 4)]
    control = [fleet_run(f"A'{i}", waits=(10.5 + i,) * 20, run_id=20 + i) for i in range(1, 4)]
    doc = compare(base, cand, control=control).to_json()
    assert doc["primary"]["effect"]["aa"] is not None
    attainment = next(p for p in doc["phases"] if p["name"] == "allocated_gpus")
    assert attainment["effect"]["runs"]["control"] == 3


def test_the_report_shows_the_control():
    from workbench.compare.render import render_comparison

    base, cand = base_cand()
    text = render_comparison(compare(base, cand, changes=CHANGE, control=side(5, 20, 21)))
    assert "control (A′, baseline again): 21, 22, 23, 24, 25" in text
    assert "5 A′ control runs" in text and "A/A control: A′/A" in text
    assert "NO_AA_CONTROL" not in text


def test_an_unstable_control_is_named_in_the_observations():
    base, cand = base_cand()
    control = side(5, 20, 21, queue=55.0)
    texts = [o["text"] for o in compare(base, cand, changes=CHANGE, control=control).to_json()["observations"]]
    assert any("the A/A control moved on its own (UNSTABLE)" in t for t in texts), texts
