"""A bundle is read as JSON and narrowed where it is read: an odd shape in a resealed
bundle is a failed check naming it, never a crash (``reader.obj`` / ``array`` / ``listed``)."""

from __future__ import annotations

import copy

import pytest

from tests.bundle.helpers import sample_bundle
from tests.investigations.fakes import fake_compare
from workbench.bundle.export import reseal_digests, seal
from workbench.bundle.reader import array, content, listed, obj
from workbench.bundle.recompute import rebuild_runs
from workbench.bundle.verify import verify_bundle


@pytest.fixture(scope="module")
def honest() -> dict:
    return sample_bundle()


def test_the_readers_raise_what_get_and_iteration_raised():
    assert obj({"a": 1}) == {"a": 1}
    with pytest.raises(AttributeError, match="'list' object has no attribute 'get'"):
        obj([1])
    assert array(None) == [] and array([]) == [] and array([1]) == [1]
    with pytest.raises(TypeError):
        array({"a": 1})
    assert listed({}, "k") == [] and listed({"k": [2]}, "k") == [2]
    with pytest.raises(TypeError):
        listed({"k": None}, "k")  # no ``or []``: a null is not an empty list
    assert content({"recipe": {"content": {"x": 1}}}, "recipe") == {"x": 1}
    with pytest.raises(TypeError):
        content({"recipe": []}, "recipe")
    with pytest.raises(KeyError):
        content({}, "recipe")


def test_a_run_field_of_another_type_is_not_rebuilt(honest):
    doc = copy.deepcopy(honest)
    assert set(rebuild_runs(doc)) == {entry["ref"] for entry in doc["runs"]}
    doc["runs"][0]["lens"] = 7
    with pytest.raises(TypeError, match="lens"):
        rebuild_runs(doc)
    report = verify_bundle(seal(doc), recompute=True, engine=fake_compare)
    assert report.mismatched == ["runs[0].lens", "recompute"]  # refused by the typed reader, with its place
    assert "not the shape wb writes" in report.checks[-1].detail


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.__setitem__("hypotheses", "not a list"),
        lambda d: d.__setitem__("hypotheses", [["not", "an", "object"]]),
        lambda d: d["results"]["content"].__setitem__("verdicts", [17]),
        lambda d: d["recipe"]["content"].__setitem__("bisections", [{"ref": "bisection/1", "state": "x"}]),
    ],
)
def test_an_odd_record_is_a_failed_check_not_a_crash(honest, edit):
    doc = copy.deepcopy(honest)
    edit(doc)
    report = verify_bundle(reseal_digests(doc), recompute=True, engine=fake_compare)
    assert not report.ok
    assert any(not c.ok for c in report.recompute)
