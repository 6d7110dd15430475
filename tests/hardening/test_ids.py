"""Issue 28 item 2: ids are ASCII decimal; everything else is a label."""

from __future__ import annotations

import json

import pytest

from store.records import MAX_ID, decimal_id
from tests.hardening import inputs
from tests.hardening.test_refusals import refused, wb


@pytest.fixture
def store(tmp_path):
    return f"sqlite:///{tmp_path / 'wb.sqlite'}"


def _runs(capsys, store: str) -> dict[int, str]:
    rc, out, err = wb(capsys, "--store", store, "runs", "--json")
    assert rc == 0, err
    doc = json.loads(out)
    return {r["id"]: r["label"] for r in (doc if isinstance(doc, list) else doc["runs"])}


def _import(capsys, tmp_path, store: str, *labels: str) -> None:
    for i, label in enumerate(labels):
        rc, _out, err = wb(
            capsys,
            "--store",
            store,
            "import",
            str(inputs.native_capture(tmp_path / f"c{i}.json", label=label, ttft=1.0 + i)),
        )
        assert rc == 0, err


@pytest.mark.parametrize(
    "text, expected",
    [
        ("3", 3),
        (" 12 ", 12),
        ("٣", None),
        ("²", None),
        ("3a", None),
        ("", None),
        ("-1", None),
        ("+1", None),
        ("99999999999999999999999", 0),
        (str(MAX_ID), MAX_ID),
    ],
)
def test_decimal_id(text, expected):
    assert decimal_id(text) == expected


def test_remove_of_a_non_ascii_digit_label_removes_that_run(capsys, tmp_path, store):
    _import(capsys, tmp_path, store, "a", "b", "²", "٣")  # ids 1..4; run 3 is labelled "²"
    rc, out, err = wb(capsys, "--store", store, "remove", "٣")
    assert rc == 0, err
    assert "run 4" in out and "٣" in out
    assert _runs(capsys, store) == {1: "a", 2: "b", 3: "²"}


def test_show_of_a_superscript_digit_is_a_label(capsys, tmp_path, store):
    _import(capsys, tmp_path, store, "a")
    line = refused(capsys, "--store", store, "show", "²")
    assert "no run with id or label '²'" in line
    _import(capsys, tmp_path, store, "²")
    rc, out, err = wb(capsys, "--store", store, "show", "²", "--json")
    assert rc == 0 and json.loads(out)["id"] == 2, err


@pytest.mark.parametrize("ref", ["99999999999999999999999", "9223372036854775808", "1" * 5000])
def test_huge_ids_are_no_such_run(capsys, tmp_path, store, ref):
    _import(capsys, tmp_path, store, "a")
    line = refused(capsys, "--store", store, "show", ref)
    assert "no run with id or label" in line


def test_rename_says_which_run_and_refuses_an_ambiguous_label(capsys, tmp_path, store):
    _import(capsys, tmp_path, store, "same", "other", "٣")
    assert wb(capsys, "--store", store, "rename", "other", "same")[0] == 0  # two runs labelled "same"
    line = refused(capsys, "--store", store, "rename", "same", "x")
    assert "matches runs 1, 2" in line
    rc, out, err = wb(capsys, "--store", store, "rename", "٣", "three")
    assert rc == 0 and out.strip() == "run 3: ٣ -> three", (out, err)
    line = refused(capsys, "--store", store, "remove", "same")
    assert "matches runs 1, 2" in line
    assert len(_runs(capsys, store)) == 3
