"""Issue 45 item 1: one rule for naming a run. A word is a label exactly as typed, an id only
as bare ASCII digits; a word that names two runs acts on neither and lists them. Every command
that takes a run word (and the server) goes through ``Store.resolve_run``."""

from __future__ import annotations

import json

import pytest

from tests.hardening import inputs
from tests.hardening.test_refusals import refused, wb


@pytest.fixture
def store(tmp_path):
    return f"sqlite:///{tmp_path / 'wb.sqlite'}"


def _import(capsys, tmp_path, store: str, *labels: str) -> None:
    for i, label in enumerate(labels):
        path = inputs.native_capture(tmp_path / f"c{i}.json", label=label, ttft=1.0 + i)
        rc, _out, err = wb(capsys, "--store", store, "import", str(path), "--label", label)
        assert rc == 0, err


def _labels(capsys, store: str) -> dict[int, str]:
    rc, out, err = wb(capsys, "--store", store, "runs", "--json")
    assert rc == 0, err
    return {r["id"]: r["label"] for r in json.loads(out)}


def test_remove_of_a_spaced_label_removes_that_run_not_the_id(capsys, tmp_path, store):
    _import(capsys, tmp_path, store, "a", "b", "c", " 3")  # run 4 is labelled " 3"
    rc, out, err = wb(capsys, "--store", store, "remove", " 3")
    assert rc == 0 and out.strip() == "removed run 4 ( 3)", (out, err)
    assert _labels(capsys, store) == {1: "a", 2: "b", 3: "c"}


def test_a_word_with_spaces_is_never_an_id(capsys, tmp_path, store):
    _import(capsys, tmp_path, store, "a", "b", "c")
    for word in ("3 ", " 3", "\t3", "3\n"):
        line = refused(capsys, "--store", store, "rename", word, "X")
        assert f"no run with id or label {word!r}" in line, line
        assert "an id is its digits alone, 3" in line
        refused(capsys, "--store", store, "remove", word)
    assert _labels(capsys, store) == {1: "a", 2: "b", 3: "c"}  # nothing renamed, nothing removed


def test_a_word_that_is_a_label_and_another_runs_id_acts_on_neither(capsys, tmp_path, store):
    _import(capsys, tmp_path, store, "a", "b", "c", "d", "3")  # run 5 is labelled "3"; run 3 exists
    for args in (
        ("remove", "3"),
        ("rename", "3", "X"),
        ("show", "3"),
        ("declare", "3", "model=m"),
        ("compare", "3", "--vs", "1"),
        ("inspect", "3", "--vs", "1"),
        ("investigate", "new", "--lens", "inference", "--question", "q?", "--baseline", "3", "--candidate", "1"),
    ):
        line = refused(capsys, "--store", store, *args)
        assert "'3' matches runs 5, 3 (run 3 by its id, run 5 by its label" in line, (args, line)
    assert _labels(capsys, store) == {1: "a", 2: "b", 3: "c", 4: "d", 5: "3"}
    # The way out the message gives: run 5 by its id, renamed; then "3" names run 3 alone.
    rc, out, err = wb(capsys, "--store", store, "rename", "5", "five")
    assert rc == 0 and out.strip() == "run 5: 3 -> five", err
    rc, out, err = wb(capsys, "--store", store, "show", "3", "--json")
    assert rc == 0 and json.loads(out)["id"] == 3, err


def test_a_label_that_is_its_own_runs_id_is_that_run(capsys, tmp_path, store):
    _import(capsys, tmp_path, store, "a", "2")  # run 2 is labelled "2"
    rc, out, err = wb(capsys, "--store", store, "show", "2", "--json")
    assert rc == 0 and json.loads(out)["id"] == 2, err


def test_a_shared_label_lists_its_runs(capsys, tmp_path, store):
    _import(capsys, tmp_path, store, "same", "same", "other")
    line = refused(capsys, "--store", store, "remove", "same")
    assert "'same' matches runs 1, 2 (each by its label; name one by its id" in line
    assert len(_labels(capsys, store)) == 3


def test_the_server_resolves_with_the_same_rule(capsys, tmp_path, store):
    """The server answers through the use cases (workbench.usecases): the same rule as the store."""
    from store import open_store
    from store.errors import RunNotFound
    from workbench.usecases.runs import ShowRun
    from workbench.usecases.transport import Local

    _import(capsys, tmp_path, store, "a", "b", "c", " 3", "2")  # run 4 " 3", run 5 "2"
    wb = Local(open_store(store))
    assert wb.call(ShowRun(run=" 3")).run["id"] == 4
    assert wb.call(ShowRun(run="3")).run["id"] == 3
    with pytest.raises(RunNotFound, match="'2' matches runs 5, 2"):
        wb.call(ShowRun(run="2"))
    with pytest.raises(RunNotFound, match="no run with id or label '3 '"):
        wb.call(ShowRun(run="3 "))


def test_a_bundle_ref_is_a_label_not_a_store_id(capsys, tmp_path, store):
    _import(capsys, tmp_path, store, "a")
    line = refused(capsys, "--store", store, "show", "run/1")  # an imported bundle's ref names the bundle's run
    assert "no run with id or label 'run/1'" in line


def test_a_label_shared_by_runs_and_an_id_lists_them_all(capsys, tmp_path, store):
    _import(capsys, tmp_path, store, "a", "b", "c", "3", "3")  # runs 4 and 5 are labelled "3"
    line = refused(capsys, "--store", store, "remove", "3")
    assert "'3' matches runs 4, 5, 3 (run 3 by its id, the others by their label" in line
    assert len(_labels(capsys, store)) == 5
