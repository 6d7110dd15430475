"""ComparisonParameters: the one decoder of a stored comparison's parameters."""

from __future__ import annotations

import json

import msgspec
import pytest

from workbench.compare.parameters import ComparisonParameters

STORED = [
    {
        "lens": "inference",
        "changes": {"engine_revision": ["v0.8.2", "v0.8.3"]},
        "accepts": {},
        "control": [6, 7, 8, 9, 10],
    },
    {"lens": "training", "changes": {"framework": []}, "accepts": {"hardware": "same job script"}},
    {"lens": "fleet", "changes": {}, "accepts": {}},
    {
        "lens": "inference",
        "changes": {"x": [None, "b"]},
        "accepts": {},
        "control": ["run/6", "run/7"],
    },  # an imported bundle's
]


@pytest.mark.parametrize("doc", STORED)
def test_lossless_json_round_trip(doc):
    params = ComparisonParameters.from_json(json.loads(json.dumps(doc)))
    assert params.to_json() == doc
    assert json.dumps(params.to_json()) == json.dumps(doc)  # same key order, same bytes
    assert ComparisonParameters.from_json(params.to_json()) == params


def test_engine_arguments():
    params = ComparisonParameters.from_json(STORED[0])
    assert params.engine_arguments() == {
        "lens": "inference",
        "changes": {"engine_revision": ("v0.8.2", "v0.8.3")},
        "accepts": {},
    }
    assert params.control == (6, 7, 8, 9, 10)


def test_frozen():
    with pytest.raises(AttributeError):
        ComparisonParameters.from_json(STORED[2]).lens = "training"  # type: ignore[misc]


def test_a_wrong_shape_names_the_place():
    with pytest.raises(msgspec.ValidationError, match=r"\$\.accepts"):
        ComparisonParameters.from_json({"lens": "inference", "changes": {}, "accepts": {"hardware": 3}})
