"""The rules of the one contract (workbench.compare.contract), metamorphic, for every lens
(issue 27): a side agrees with itself; an unpinned identity is unknown; a stated guardrail
that cannot be judged withholds IMPROVEMENT; work that differs gives no timing-only verdict."""

from __future__ import annotations

import pytest

from factories import fleet_run, inference_run, training_run
from lenses.base import GuardrailSpec
from workbench.compare import compare
from workbench.compare.contract import unpinned
from workbench.compare.way_out import way_out

MAKERS = {"inference": inference_run, "training": training_run, "fleet": fleet_run}
LENSES = tuple(MAKERS)
# Per lens: a must-match dimension and another value; an also-recorded one and another value.
MUST = {"inference": ("hardware", "1x A100"), "training": ("model", "gpt-2.7b"), "fleet": ("pool", "pool-b")}
ALSO = {
    "inference": ("engine_revision", "v0.8.3"),
    "training": ("framework", "PyTorch 2.4"),
    "fleet": ("workload_mix", "training only"),
}
# Per lens: a candidate that is faster on the primary metric.
FASTER = {"inference": {"queue": 20.0}, "training": {"compute": 200.0}, "fleet": {"waits": (7.0,) * 20}}


def side(lens, label, ids, **kw):
    return [MAKERS[lens](label, run_id=i, seed=i, **kw) for i in ids]


def row(result, name):
    return next(r for r in result.to_json()["dimensions"] if r["name"] == name)


@pytest.mark.parametrize("lens", LENSES)
def test_a_side_that_disagrees_on_a_must_match_dimension_is_refused_naming_its_runs(lens):
    dim, other = MUST[lens]
    base = side(lens, "b", (1, 2)) + side(lens, "b", (3,), **{dim: other})
    result = compare(base, side(lens, "c", (4, 5)))
    assert not result.comparable and result.refusal.dimension == dim
    assert "disagrees with itself" in result.refusal.reason
    assert "run 1, run 2 have" in result.refusal.reason and "run 3 has" in result.refusal.reason
    assert result.primary is None  # no delta at all


@pytest.mark.parametrize("lens", LENSES)
def test_a_side_that_disagrees_on_the_declared_change_is_refused(lens):
    """The issue's example: baseline runs of two framework versions, framework declared as the change."""
    dim, other = ALSO[lens]
    base = side(lens, "b", (1, 2)) + side(lens, "b", (3,), **{dim: other})
    cand = side(lens, "c", (4, 5), **{dim: other})
    result = compare(base, cand, changes={dim: (None, other)})
    assert not result.comparable and result.refusal.dimension == dim
    assert "is the declared change, but a side disagrees with itself" in result.refusal.reason
    assert "run 3 has" in result.refusal.reason
    ways = way_out(result, [1, 2, 3], [4, 5], ["wb", "compare"], [*base, *cand])
    assert ways.accept == "" and ways.disagree and "run 3 has" in ways.disagree[0]  # no acceptance resolves it
    # Without the runs that disagree, the same change is compared.
    assert compare(base[:2], cand, changes={dim: (None, other)}).comparable


@pytest.mark.parametrize("lens", LENSES)
def test_a_side_that_disagrees_on_another_dimension_is_mixed(lens):
    dim, other = ALSO[lens]
    base = side(lens, "b", (1, 2)) + side(lens, "b", (3,), **{dim: other})
    result = compare(base, side(lens, "c", (4, 5)))
    assert result.comparable
    r = row(result, dim)
    assert r["state"] == "mixed" and "run 3 has" in r["note"]


@pytest.mark.parametrize("lens", LENSES)
def test_a_stated_guardrail_that_cannot_be_judged_withholds_improvement(lens):
    base, cand = side(lens, "b", (1, 2, 3)), side(lens, "c", (4, 5, 6), **FASTER[lens])
    assert compare(base, cand).verdict == "IMPROVEMENT"
    guard = GuardrailSpec("accuracy", "Accuracy", "accuracy", "max_increase", 0.01)
    result = compare(base, cand, guardrails=[guard])
    assert result.verdict == "FASTER_UNRESOLVED"
    assert "guardrail accuracy cannot be judged" in result.effect.reason
    # Once both sides report it, the improvement stands.
    for r in base + cand:
        r.quality["accuracy"] = 0.9
    assert compare(base, cand, guardrails=[guard]).verdict == "IMPROVEMENT"


@pytest.mark.parametrize("lens", ["inference", "training"])  # fleet windows have no work per item
def test_half_the_work_in_less_time_gives_no_timing_verdict(lens):
    if lens == "training":
        base = side(lens, "b", (1, 2, 3))
        cand = side(lens, "c", (4, 5, 6), batch_per_rank=16, effective_batch=128, compute=200.0)
        change = {"effective_batch": (None, None)}
    else:
        base = side(lens, "b", (1, 2, 3))
        cand = side(lens, "c", (4, 5, 6), prompt=256, request_mix="256 prompt / 128 output tokens", queue=30.0)
        change = {"request_mix": (None, None)}
    result = compare(base, cand, changes=change)
    assert result.comparable and result.work.same is False
    assert result.verdict is None  # never IMPROVEMENT from time alone


@pytest.mark.parametrize(
    "value",
    [
        "meta-llama/Llama-3.1-8B-Instruct (hub, revision not pinned)",
        "latest",
        "vllm/vllm-openai:latest",
        "nvcr.io/nvidia/pytorch:24.05-py3",
        "PyTorch latest",
    ],
)
def test_unpinned_identities(value):
    assert unpinned(value)


@pytest.mark.parametrize(
    "value",
    [
        "sha256:4f1c",
        "meta-llama/Llama-3.1-8B@5f0b02c",
        "v0.8.2",
        "PyTorch 2.3",
        "nvcr.io/nvidia/pytorch@sha256:abcd",
        "1x H100 SXM5 80GB",
        "latest-ish build 7",
    ],
)
def test_pinned_values(value):
    assert not unpinned(value)


@pytest.mark.parametrize("lens", LENSES)
def test_an_unpinned_identity_on_both_sides_is_unknown_not_same(lens):
    dim = {"inference": "weights", "training": "framework", "fleet": "scheduler_policy"}[lens]
    value = {
        "inference": "Llama 3.1 8B (hub, revision not pinned)",
        "training": "nvcr.io/nvidia/pytorch:24.05-py3",
        "fleet": "latest",
    }[lens]
    result = compare(side(lens, "b", (1,), **{dim: value}), side(lens, "c", (2,), **{dim: value}))
    r = row(result, dim)
    assert r["state"] == "unknown" and "not pinned" in r["note"]
    assert result.comparable == (not r["must_match"])
