"""The one record base and the shared words (workbench/vocabulary.py)."""

import math
from typing import ClassVar, Literal

import msgspec
import pytest
from msgspec import UNSET, UnsetType

from workbench.vocabulary import NULL_REASON, NonFinite, Record, Side, from_jsonable, jsonable


class Sample(Record, frozen=True, kw_only=True, omit_defaults=True):
    name: str
    value: float | None
    side: Side = Side.BASELINE
    status: Literal["found", "not_found", "undecided"] = "undecided"
    note: str | UnsetType = UNSET
    refs: tuple[int | str, ...] = ()


class Kept(Record, frozen=True, kw_only=True):
    json_nonfinite: ClassVar[NonFinite] = "keep"
    value: float


def test_a_record_round_trips_in_field_order_leaving_unset_out():
    r = Sample(name="x", value=1.5, side=Side.CONTROL, status="found", refs=(3, "run/6"))
    doc = r.to_json()
    assert list(doc) == ["name", "value", "side", "status", "refs"]
    assert doc["refs"] == [3, "run/6"] and doc["side"] == "control"
    assert Sample.from_json(doc) == r


def test_nonfinite_is_null_with_its_reason_and_reads_back():
    doc = Sample(name="x", value=math.nan).to_json()
    assert doc["value"] is None and "NaN" in doc[f"value{NULL_REASON}"]
    back = Sample.from_json(doc)
    assert math.isnan(back.value)
    assert back.to_json() == doc


def test_the_encoding_option_is_a_parameter_and_a_class_default():
    assert math.isinf(Kept(value=math.inf).to_json()["value"])  # the class says "keep"
    assert Kept(value=math.inf).to_json(nonfinite="null") == {
        "value": None,
        f"value{NULL_REASON}": "+infinity: not a finite number",
    }
    assert math.isinf(Sample(name="x", value=math.inf).to_json(nonfinite="keep")["value"])


@pytest.mark.parametrize("field,value", [("side", "both"), ("status", "maybe")])
def test_allowed_values_are_checked_on_decode_naming_the_place(field, value):
    with pytest.raises(msgspec.ValidationError, match=rf"\$\.{field}"):
        Sample.from_json({"name": "x", "value": 1.0, field: value})


def test_json_helpers_are_inverse_on_lists_and_nested_dicts():
    value = {"a": [1.0, math.nan, -math.inf], "b": {"c": math.inf}, 2: "k"}
    doc = jsonable(value)
    assert doc["a"] == [1.0, None, None] and doc["b"]["c"] is None and doc["2"] == "k"
    back = from_jsonable(doc)
    assert math.isnan(back["a"][1]) and back["a"][2] == -math.inf and back["b"]["c"] == math.inf
    assert jsonable(back) == doc


def test_every_former_base_is_the_one_record():
    from workbench.bisect.result import BisectionReport
    from workbench.compare.results import Result
    from workbench.compare.sweep_result import SweepComparison
    from workbench.diagnostics.result import DiagnosisReport
    from workbench.investigations.views import InvestigationView
    from workbench.recorder.records import Record as CaptureRecord
    from workbench.rerun.comparison import RerunReport
    from workbench.training.step_findings import Finding

    for cls in (
        BisectionReport,
        Result,
        SweepComparison,
        DiagnosisReport,
        InvestigationView,
        CaptureRecord,
        RerunReport,
        Finding,
    ):
        assert issubclass(cls, Record), cls
