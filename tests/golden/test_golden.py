"""Golden outputs: ``wb compare/inspect/investigate show/diagnose --json`` and exported
bundles (digests and checksum included) for the demo and real captures stay identical.

A change meant to alter an output regenerates them with one command and shows the diff:
``.venv/bin/python -m tests.golden.regen`` (see tests/golden/cases.py for what is normalised).
"""

from __future__ import annotations

import difflib

import pytest

from tests.golden.cases import CASES, Stores, golden_path, produce


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    return Stores(tmp_path_factory.mktemp("golden"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(stores, name):
    path = golden_path(name)
    assert path.is_file(), f"no golden for {name}: run python -m tests.golden.regen"
    expected = path.read_text(encoding="utf-8")
    actual = produce(stores, name)
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), str(path), "now", n=2))
        pytest.fail(f"{name} differs from its golden (python -m tests.golden.regen if meant):\n{diff[:6000]}")


def test_every_golden_has_a_case():
    names = {p.stem for p in golden_path("x").parent.glob("*.json")}
    assert names == set(CASES), f"stale or missing goldens: {sorted(names ^ set(CASES))}"


def test_normalise_touches_only_volatile_fields(tmp_path):
    from tests.golden.cases import normalise, set_paths

    set_paths(tmp_path)
    doc = {"created_at": "2026-12-01T00:00:00Z", "store": f"sqlite:///{tmp_path}/x.sqlite", "ratio": 1.25,
           "label": "2026-12-01T00:00:00Z", "version": "9.9.9"}
    assert normalise(doc) == {"created_at": "<TIME>", "store": "sqlite:///<TMP>/x.sqlite", "ratio": 1.25,
                              "label": "2026-12-01T00:00:00Z", "version": "9.9.9"}
