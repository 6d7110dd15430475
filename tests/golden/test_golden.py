"""Golden outputs: ``wb compare/inspect/investigate show/diagnose --json`` and exported
bundles for the demo and real captures stay the same, compared by structure (every key,
string, integer and list length exactly; floats within a relative 1e-9; digests over
computed floats re-derived and verified): tests/golden/structural.py says what and why.

A change meant to alter an output regenerates them with one command and shows the diff:
``.venv/bin/python -m tests.golden.regen`` (see tests/golden/cases.py for what is normalised).
"""

from __future__ import annotations

import json

import pytest

from tests.golden.cases import CASES, Stores, golden_path, produce
from tests.golden.structural import differences, rederived_digests


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    return Stores(tmp_path_factory.mktemp("golden"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(stores, name):
    path = golden_path(name)
    assert path.is_file(), f"no golden for {name}: run python -m tests.golden.regen"
    expected = json.loads(path.read_text(encoding="utf-8"))
    actual = json.loads(produce(stores, name))
    rederived = rederived_digests(actual) if name.startswith("demo_bundle") else frozenset()
    found = list(differences(expected, actual, rederived=rederived))
    if found:
        shown = "\n".join(found[:40]) + (f"\n... and {len(found) - 40} more" if len(found) > 40 else "")
        pytest.fail(f"{name} differs from its golden {path.name} (python -m tests.golden.regen if meant):\n{shown}")


def test_every_golden_has_a_case():
    names = {p.stem for p in golden_path("x").parent.glob("*.json")}
    assert names == set(CASES), f"stale or missing goldens: {sorted(names ^ set(CASES))}"


def test_normalise_touches_only_volatile_fields(tmp_path):
    from tests.golden.cases import normalise, set_paths

    set_paths(tmp_path)
    doc = {
        "created_at": "2026-12-01T00:00:00Z",
        "store": f"sqlite:///{tmp_path}/x.sqlite",
        "ratio": 1.25,
        "label": "2026-12-01T00:00:00Z",
        "version": "9.9.9",
    }
    assert normalise(doc) == {
        "created_at": "<TIME>",
        "store": "sqlite:///<TMP>/x.sqlite",
        "ratio": 1.25,
        "label": "2026-12-01T00:00:00Z",
        "version": "9.9.9",
    }


def test_structural_comparison_sees_what_the_code_decides():
    golden = {"verdict": "REGRESSION", "runs": 5, "ratio": 1.1510000000000002, "ok": True, "ids": [1, 2], "note": None}
    assert not list(differences(golden, {**golden, "ratio": 1.1510000000000004}))  # last bits: another CPU
    assert not list(differences({"x": 0.0}, {"x": 1e-15}))  # near zero: absolute tolerance
    for changed in (
        {"verdict": "IMPROVEMENT"},
        {"runs": 6},
        {"ratio": 1.152},
        {"ok": False},
        {"ids": [1]},
        {"ids": [1, 3]},
        {"note": "x"},
        {"runs": 5.0},
        {"ok": 1},
    ):
        assert list(differences(golden, {**golden, **changed})), changed
    assert list(differences(golden, {k: v for k, v in golden.items() if k != "note"}))
    assert list(differences(golden, {**golden, "extra": 1}))
    assert list(differences(golden, dict(reversed(list(golden.items())))))  # key order is part of the output


def test_rederived_digests_are_only_those_over_floats():
    bundle = {
        "recipe": {"digest": {"sha256": "a" * 64}, "content": {"changes": {"x": ["1", "2"]}}},
        "results": {"digest": {"sha256": "b" * 64}, "content": {"ratio": 1.5}},
        "subject": [{"digest": {"sha256": "c" * 64}}],
        "checksum": {"value": "d" * 64, "parts": {"recipe": "e" * 64, "results": "f" * 64}},
    }
    paths = rederived_digests(bundle)
    assert paths == {"$.results.digest.sha256", "$.checksum.value", "$.checksum.parts.results"}
    other = {**bundle, "results": {"digest": {"sha256": "0" * 64}, "content": {"ratio": 1.5}}}
    assert not list(differences(bundle, other, rederived=paths))  # re-derived: any digest value
    forged = {**bundle, "recipe": {**bundle["recipe"], "digest": {"sha256": "0" * 64}}}
    assert list(differences(bundle, forged, rederived=paths))  # a digest over no floats stays exact
    assert list(
        differences(
            bundle, {**other, "results": {"digest": {"sha256": "nope"}, "content": {"ratio": 1.5}}}, rederived=paths
        )
    )
