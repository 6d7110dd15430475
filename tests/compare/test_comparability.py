"""Comparability first: for every must-match dimension of every lens, refused when
different, refused when unknown, accepted when declared as the change, accepted with a
recorded --accept; labels checked against the data."""

from __future__ import annotations

import json

import numpy as np
import pytest

from factories import fleet_run, inference_run, training_run
from lenses import LENS_NAMES, builtin_lens
from store.records import Dimension
from workbench.compare import compare, parse_change
from workbench.errors import UsageError

MAKERS = {"inference": inference_run, "training": training_run, "fleet": fleet_run}


def base_run(lens: str, **kw):
    return MAKERS[lens](f"{lens}-base", run_id=1, **kw)


def different(lens: str, dim: str):
    """A candidate whose ``dim`` differs from the baseline's, in its label and its data."""
    make = MAKERS[lens]
    if dim == "request_mix":
        return make("cand", run_id=2, prompt=1024, request_mix="1024 prompt / 128 output tokens")
    if dim == "rank_count":
        return make("cand", run_id=2, ranks=4, batch_per_rank=64, rank_count=4)
    if dim == "effective_batch":
        return make("cand", run_id=2, batch_per_rank=64, effective_batch=512)
    if dim == "window":
        return make("cand", run_id=2, window="startup")
    if dim == "capacity_gpus":
        return make("cand", run_id=2, capacity=128)
    if dim == "eligibility_history":
        r = make("cand", run_id=2, eligibility_history="partial")
        r.samples["eligible"][0] = np.nan
        return r
    return make("cand", run_id=2, **{dim: "something else"})


def unknown(lens: str, dim: str):
    """A candidate that says nothing about ``dim``: no label and no data that could."""
    make = MAKERS[lens]
    if dim == "window":
        return make("cand", run_id=2, window="unknown")
    if dim == "capacity_gpus":
        r = make("cand", run_id=2)
        del r.meta["pool"]["capacity_gpus"]
        return r
    if dim == "eligibility_history":
        return make("cand", run_id=2, eligibility=False, eligibility_history=None)
    r = make("cand", run_id=2, **{dim: None})
    drop = {"request_mix": ("prompt_tokens", "output_tokens"), "rank_count": ("rank",), "effective_batch": ("samples",)}
    for col in drop.get(dim, ()):
        del r.samples[col]
    return r


CASES = [(lens, dim) for lens in LENS_NAMES for dim in builtin_lens(lens).must_match]


def state_of(result, dim):
    return next(d for d in result.to_json()["dimensions"] if d["name"] == dim)


@pytest.mark.parametrize("lens, dim", CASES)
def test_refused_when_different(lens, dim):
    result = compare([base_run(lens)], [different(lens, dim)])
    assert not result.comparable
    assert result.refusal.dimension == dim
    row = state_of(result, dim)
    assert row["state"] == "different"
    assert dim in result.refusal.reason and "differs" in result.refusal.reason
    assert str(row["baseline"]) in result.refusal.reason
    doc = result.to_json()
    assert doc["primary"] is None and doc["phases"] is None  # no delta at all


@pytest.mark.parametrize("lens, dim", CASES)
def test_refused_when_unknown(lens, dim):
    result = compare([base_run(lens)], [unknown(lens, dim)])
    assert not result.comparable
    assert result.refusal.dimension == dim
    assert state_of(result, dim)["state"] == "unknown"
    assert "unknown" in result.refusal.reason
    assert result.to_json()["primary"] is None


@pytest.mark.parametrize("lens, dim", CASES)
def test_accepted_when_declared_as_the_change(lens, dim):
    result = compare([base_run(lens)], [different(lens, dim)], changes={dim: None})
    if dim == "window":
        # A window kind is never the change under test: steady vs startup cannot isolate one.
        assert not result.comparable and result.refusal.dimension == "window"
        assert "cannot be the change" in result.refusal.reason
        return
    assert result.comparable, result.refusal
    assert state_of(result, dim)["state"] == "changed"
    assert result.to_json()["primary"] is not None


@pytest.mark.parametrize("lens, dim", CASES)
def test_accepted_with_a_recorded_reason(lens, dim):
    why = "the site changed it for every job; we compare anyway"
    result = compare([base_run(lens)], [different(lens, dim)], accepts={dim: why})
    assert result.comparable
    doc = result.to_json()
    row = state_of(result, dim)
    assert row["state"] == "different" and row["accepted"] == {"why": why}
    assert doc["accepted"] == [{"dimension": dim, "why": why}]
    assert doc["refusal"] is None and doc["primary"] is not None


def test_label_that_disagrees_with_the_data_is_different():
    base = inference_run("b", run_id=1)
    # Labelled 512/128, but the requests are 1024/128.
    cand = inference_run("c", run_id=2, prompt=1024, request_mix="512 prompt / 128 output tokens")
    result = compare([base], [cand])
    row = state_of(result, "request_mix")
    assert row["state"] == "different"
    assert (
        "the label says '512 prompt / 128 output tokens' but the data show '1024 prompt / 128 output tokens (median)'"
        in row["note"]
    )
    assert not result.comparable and result.refusal.dimension == "request_mix"


def test_label_wrong_on_both_sides_is_still_different():
    runs = [inference_run(f"r{i}", run_id=i, prompt=1024, request_mix="512/128") for i in (1, 2)]
    result = compare([runs[0]], [runs[1]])
    assert state_of(result, "request_mix")["state"] == "different"


def test_data_checked_rank_count_and_batch():
    base = training_run("b", run_id=1)
    cand = training_run("c", run_id=2, ranks=4)  # label says 8 ranks, effective batch 256
    result = compare([base], [cand])
    assert state_of(result, "rank_count")["state"] == "different"
    assert state_of(result, "effective_batch")["state"] == "different"
    assert "the data show 4" in state_of(result, "rank_count")["note"]


def test_measured_dimension_from_an_importer_is_trusted():
    base, cand = training_run("b", run_id=1), training_run("c", run_id=2)
    for r in (base, cand):
        r.dimensions["rank_count"] = Dimension(16, "measured")  # world size from the trace
    result = compare([base], [cand])
    row = state_of(result, "rank_count")
    assert row["state"] == "same" and row["baseline"] == 16 and row["source"] == "measured"


def test_steady_against_startup_is_refused():
    result = compare([inference_run("b", run_id=1)], [inference_run("c", run_id=2, window="startup")])
    assert result.refusal.dimension == "window"
    assert "'steady'" in result.refusal.reason and "'startup'" in result.refusal.reason


def test_declared_change_that_did_not_happen_is_reported():
    result = compare(
        [inference_run("b", run_id=1)],
        [inference_run("c", run_id=2)],
        changes={"engine_revision": ("v0.8.2", "v0.8.3")},
    )
    assert result.comparable
    row = state_of(result, "engine_revision")
    assert row["state"] == "same" and "did not happen" in row["note"]
    doc = result.to_json()
    assert doc["changes_not_made"] == ["engine_revision"]
    assert doc["observations"][0]["text"].startswith("Declared change that did not happen: engine_revision")


def test_declared_change_with_other_values_is_different():
    cand = inference_run("c", run_id=2, engine_revision="v0.9.0")
    result = compare([inference_run("b", run_id=1)], [cand], changes={"engine_revision": ("v0.8.2", "v0.8.3")})
    row = state_of(result, "engine_revision")
    assert row["state"] == "different" and "declared 'v0.8.2' → 'v0.8.3'" in row["note"]
    assert result.comparable  # also-recorded: reported, not refused


def test_also_recorded_difference_is_reported_not_refused():
    result = compare([inference_run("b", run_id=1)], [inference_run("c", run_id=2, precision="fp8")])
    assert result.comparable
    assert state_of(result, "precision")["state"] == "different"


def test_runs_of_one_side_that_disagree():
    base = [inference_run("b1", run_id=1), inference_run("b2", run_id=3, hardware="1x A100")]
    result = compare(base, [inference_run("c", run_id=2)])
    row = state_of(result, "hardware")
    assert row["state"] == "different" and "runs disagree" in row["note"]
    assert not result.comparable


def test_dimension_missing_on_one_run_of_a_side_is_unknown():
    base = [inference_run("b1", run_id=1), inference_run("b2", run_id=3, weights=None)]
    result = compare(base, [inference_run("c", run_id=2)])
    assert state_of(result, "weights")["state"] == "unknown"
    assert "run 3" in state_of(result, "weights")["note"]


def test_extra_dimensions_of_the_runs_are_reported():
    b, c = inference_run("b", run_id=1), inference_run("c", run_id=2)
    b.dimensions["driver"] = Dimension("550.54")
    c.dimensions["driver"] = Dimension("555.42")
    result = compare([b], [c], changes={"driver": ("550.54", "555.42")})
    row = state_of(result, "driver")
    assert row["state"] == "changed" and row["must_match"] is False


def test_all_four_states_spelled_in_json():
    cand = inference_run("c", run_id=2, engine_revision="v0.8.3", precision="fp8", power_policy=None)
    doc = compare([inference_run("b", run_id=1)], [cand], changes={"engine_revision": None}).to_json()
    states = {d["name"]: d["state"] for d in doc["dimensions"]}
    assert {states["model"], states["engine_revision"], states["precision"], states["power_policy"]} == {
        "same",
        "changed",
        "different",
        "unknown",
    }
    json.dumps(doc, allow_nan=False)


def test_usage_errors():
    b, c = [inference_run("b", run_id=1)], [inference_run("c", run_id=2)]
    with pytest.raises(UsageError, match="no such dimension"):
        compare(b, c, changes={"modle": None})
    with pytest.raises(UsageError, match="needs a reason"):
        compare(b, c, accepts={"model": "  "})
    with pytest.raises(UsageError, match="is a training run"):
        compare(b, [training_run("t", run_id=3)], lens="inference")
    with pytest.raises(UsageError, match="is an inference run"):
        compare([training_run("t", run_id=3)], b, lens="training")
    with pytest.raises(UsageError, match="different lenses"):
        compare(b, [training_run("t", run_id=3)])


@pytest.mark.parametrize(
    "text, expected",
    [
        ("engine_revision", ("engine_revision", None)),
        ("engine_revision=v0.8.2:v0.8.3", ("engine_revision", ("v0.8.2", "v0.8.3"))),
        ("weights=sha256:a->sha256:b", ("weights", ("sha256:a", "sha256:b"))),
        ("framework=:2.4", ("framework", (None, "2.4"))),
    ],
)
def test_parse_change(text, expected):
    assert parse_change(text) == expected


def test_parse_change_ambiguous():
    with pytest.raises(UsageError, match="->"):
        parse_change("weights=sha256:a:sha256:b")


def test_change_values_from_stored_parameters():
    """Callers that stored a change as a list (investigations, bundles) get the same result."""
    b, c = inference_run("b", run_id=1), inference_run("c", run_id=2, engine_revision="v0.8.3")
    for change in (["v0.8.2", "v0.8.3"], ("v0.8.2", "v0.8.3"), [], None):
        assert state_of(compare([b], [c], changes={"engine_revision": change}), "engine_revision")["state"] == "changed"
    with pytest.raises(UsageError, match="expected no values or FROM and TO"):
        compare([b], [c], changes={"engine_revision": ["v0.8.3"]})
