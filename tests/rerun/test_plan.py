"""Plans: TOML files, validation, digests, artifact pinning and the arm schedule."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from workbench.errors import BadInput, UsageError
from workbench.rerun.plan import ARMS, Plan, build_plan, load_plan_file, schedule

from .helpers import write_plan


def _data(**over):
    base = {
        "name": "p",
        "lens": "training",
        "baseline": {"argv": ["./bench", "--old"]},
        "candidate": {"argv": ["./bench", "--new"]},
        "seed": 3,
    }
    base.update(over)
    return base


def test_toml_plan_resolves_relative_paths_and_pins_artifacts(tmp_path):
    (tmp_path / "bench.bin").write_bytes(b"binary v1")
    plan = load_plan_file(
        write_plan(
            tmp_path / "plan.toml",
            baseline=["./bench.bin"],
            candidate=["./bench.bin", "-x"],
            artifacts=["bench.bin"],
            rounds=6,
        )
    )
    assert plan.rounds == 6 and plan.order == "random" and plan.lens == "training"
    (art,) = plan.artifacts
    assert art.path == str((tmp_path / "bench.bin").resolve())
    assert art.sha256 == hashlib.sha256(b"binary v1").hexdigest() and art.size == 9
    assert plan.metric == "step_ms" and plan.statistic == "mean"
    # The lens's own guardrail is copied into the plan, so the plan says what is checked.
    assert [g.source for g in plan.guardrails] == ["lens:training"]


def test_defaults_and_round_limits():
    plan = build_plan(_data())
    assert plan.rounds == 10 and plan.timeout_s == 600 and plan.delta == 0.02
    assert not any("rounds is few" in w for w in plan.warnings())
    assert any("4 rounds is few" in w for w in build_plan(_data(rounds=4)).warnings())
    with pytest.raises(UsageError, match="too few"):
        build_plan(_data(rounds=2))


def test_seed_is_drawn_and_recorded_when_not_given():
    a = build_plan({k: v for k, v in _data().items() if k != "seed"})
    assert isinstance(a.seed, int) and Plan.from_json(a.to_json()).seed == a.seed


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"lens": "bogus"}, "lens"),
        ({"baseline": {"argv": []}}, "baseline.argv"),
        ({"candidate": {"argv": ["x"], "env": {"WB_CAPTURE_OUT": "/tmp/x"}}}, "set by the harness"),
        ({"order": "zigzag"}, "order"),
        ({"statistic": "min"}, "statistic"),
        ({"delta": 2}, "delta"),
        ({"bogus_key": 1}, "unknown plan key"),
        ({"guardrails": [{"metric": "loss", "rule": "smaller", "limit": 1}]}, "rule"),
        ({"name": "42"}, "name"),
    ],
)
def test_invalid_plans_are_refused_with_the_field_named(over, match):
    with pytest.raises((BadInput, UsageError), match=match):
        build_plan(_data(**over))


def test_stated_artifact_digest_must_match(tmp_path):
    f = tmp_path / "model.bin"
    f.write_bytes(b"weights")
    good = hashlib.sha256(b"weights").hexdigest()
    assert build_plan(_data(artifacts=[{"path": str(f), "sha256": f"sha256:{good}"}])).artifacts[0].sha256 == good
    with pytest.raises(BadInput, match="model.bin has SHA-256"):
        build_plan(_data(artifacts=[{"path": str(f), "sha256": "0" * 64}]))
    with pytest.raises(BadInput, match="does not exist"):
        build_plan(_data(artifacts=[str(tmp_path / "missing.bin")]))


def test_bad_toml_is_one_line_naming_the_file(tmp_path):
    bad = tmp_path / "plan.toml"
    bad.write_text("name = \n")
    with pytest.raises(BadInput, match="plan.toml: not valid TOML"):
        load_plan_file(bad)


def test_digest_is_stable_and_changes_with_the_plan():
    a, b = build_plan(_data()), build_plan(_data())
    assert a.digest() == b.digest() and len(a.digest()) == 64
    assert build_plan(_data(rounds=11)).digest() != a.digest()
    assert Plan.from_json(a.to_json()) == a


def test_random_schedule_runs_every_arm_once_per_round_reproducibly():
    plan = build_plan(_data(rounds=40, seed=5))
    slots = schedule(plan)
    assert len(slots) == 120 and slots == schedule(plan)
    for r in range(1, 41):
        assert sorted(arm for k, arm in slots if k == r) == sorted(ARMS)
    # RMIT: every arm appears in every position (no fixed order).
    first = Counter(slots[i][1] for i in range(0, 120, 3))
    assert set(first) == set(ARMS)
    assert schedule(build_plan(_data(rounds=40, seed=6))) != slots


def test_abba_schedule_alternates():
    slots = schedule(build_plan(_data(rounds=4, order="abba")))
    assert [a for _, a in slots] == ["A", "B", "A'", "A'", "B", "A", "A", "B", "A'", "A'", "B", "A"]


def test_a_sequential_report_before_its_first_look_has_unknown_bounds_not_nan():
    """Two complete rounds of a sequential plan (the first look is after round 3): the live
    report says so, and its interval is null (unknown) so `--json` stays valid JSON."""
    import json

    from workbench.rerun.comparison import PlanInfo
    from workbench.rerun.execute import Outcome
    from workbench.rerun.plan import Warmup
    from workbench.rerun.report import _sequential_section, look_over

    values = [(1, "A", 10.0), (1, "B", 11.0), (1, "A'", 10.1), (2, "A", 10.0), (2, "B", 11.1), (2, "A'", 9.9)]
    runs = [Outcome(k, arm, i, "ok", statistic=v) for i, (k, arm, v) in enumerate(values)]
    seq = look_over(runs, rounds=8, delta=0.02, higher_is_better=False, spending="obrien-fleming")
    plan = PlanInfo(
        id=1,
        name="s",
        digest="d",
        lens="training",
        metric="step_ms",
        statistic="mean",
        higher_is_better=False,
        rounds=8,
        order="random",
        seed=1,
        delta=0.02,
        warmup=Warmup(),
        stopping="sequential",
        spending="obrien-fleming",
    )
    section = _sequential_section(plan, seq, "running")
    assert section.repeated_ci95 == (None, None) and section.verdict is None
    assert "the first look is after round 3" in section.why
    json.dumps(section.to_json(), allow_nan=False)
