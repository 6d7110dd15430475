"""`wb declare`: dimensions on stored runs, their append-only history, the refusals
that keep the data in charge, and what comparisons and bundles record of them."""

from __future__ import annotations

import numpy as np
import pytest

from store import open_store
from store.api import CaptureInfo
from store.records import Dimension, RunRecord
from tests.conftest import REPO
from tests.declare.helpers import inference_pair, wb, wbj

TRACE = REPO / "tests" / "data" / "training" / "sampled" / "sampled_rank-0.json.gz"


def _stored_runs(url, n=2):
    from pathlib import Path

    st = open_store(url)
    records, captures = [], []
    for i in range(n):
        path = Path(f"/x/run{i}.json")
        r = RunRecord(
            lens="training",
            label=f"job {i}",
            sources=[path],
            dimensions={"hardware": Dimension("H100", "measured"), "model": Dimension("m1", "declared")},
        )
        r.samples["step_ms"] = np.array([400.0, 410.0, 405.0])
        records.append(r)
        captures.append(
            CaptureInfo(path=path, sha256=f"{i}" * 64, size=1, format="native", importer="native", importer_version="1")
        )
    return st, st.add_import(captures, records)


@pytest.mark.store
def test_declare_sets_unsets_and_keeps_history(store_url):
    from store.declarations import declare, history

    st, (a, b) = _stored_runs(store_url)
    done = declare(st, [a, b], {"objective": "pretrain"}, who="ana", why="same job script")
    assert [d.changed for d in done] == [True, True]
    dim = st.load_run(a).dimensions["objective"]
    assert (dim.value, dim.source, dim.declaration) == ("pretrain", "declared", done[0].id)
    again = declare(st, [a], {"objective": "pretrain"}, who="ana")
    assert again[0].changed is False  # no history row for a value already there
    declare(st, [a], {"objective": "finetune"}, who="bo", why="wrong first time")
    declare(st, [a], {}, ["objective"], who="bo", why="not known after all")
    assert "objective" not in st.load_run(a).dimensions
    rows = history(st, [a])
    assert [(r.action, r.value, r.who) for r in rows] == [
        ("set", "pretrain", "ana"),
        ("set", "finetune", "bo"),
        ("unset", None, "bo"),
    ]
    assert rows[1].previous["value"] == "pretrain" and rows[0].why == "same job script"
    assert st.load_run(b).dimensions["objective"].value == "pretrain"


@pytest.mark.store
def test_contradicting_measured_is_refused_and_nothing_is_written(store_url):
    from store.declarations import DeclarationRefused, declare, history

    st, (a, b) = _stored_runs(store_url)
    st.add_import(
        [
            CaptureInfo(
                path=__import__("pathlib").Path("/x/c.json"),
                sha256="c" * 64,
                size=1,
                format="native",
                importer="native",
                importer_version="1",
            )
        ],
        [
            RunRecord(
                lens="training",
                label="other gpu",
                sources=[__import__("pathlib").Path("/x/c.json")],
                dimensions={"hardware": Dimension("A100", "measured")},
            )
        ],
    )
    with pytest.raises(
        DeclarationRefused, match=r"hardware=H100 contradicts the data, which say hardware = 'A100' \(measured\)"
    ):
        declare(st, [a, 3], {"hardware": "H100", "objective": "x"}, who="ana")
    assert history(st) == [] and "objective" not in st.load_run(a).dimensions  # all or nothing
    with pytest.raises(DeclarationRefused, match="cannot be unset"):
        declare(st, [a], {}, ["hardware"], who="ana")


@pytest.mark.store
def test_history_rows_are_never_updated(store_url):
    from store.declarations import DeclarationRefused, DimensionDeclaration, declare

    st, (a, _b) = _stored_runs(store_url)
    declare(st, [a], {"objective": "x"}, who="ana")
    with pytest.raises(DeclarationRefused, match="history"):
        with st.session() as s:
            row = s.get(DimensionDeclaration, 1)
            row.why = "rewritten"
            s.add(row)


def test_cli_declare_show_and_compare_record(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    wb(capsys, *store, "import", *map(str, inference_pair(tmp_path)))
    refused = wbj(capsys, *store, "compare", "1", "--vs", "2")
    assert not refused["comparable"] and refused["refusal"]["dimension"] == "model"
    _c, out, _e = wb(capsys, *store, "declare", "before", "after", "model=Llama 3.1 8B", "--why", "same deployment")
    assert "run 1: model=Llama 3.1 8B (declaration 1)" in out
    shown = wbj(capsys, *store, "show", "1")
    assert shown["dimensions"]["model"] == {"value": "Llama 3.1 8B", "source": "declared", "declaration": 1}
    (hist,) = shown["declarations"]
    assert hist["why"] == "same deployment" and hist["who"] and hist["at"] and hist["action"] == "set"
    _c, text, _e = wb(capsys, *store, "show", "1")
    text = " ".join(text.split())
    assert "#1 model=Llama 3.1 8B" in text and "why: same deployment" in text
    doc = wbj(capsys, *store, "compare", "1", "--vs", "2")
    assert doc["comparable"]
    assert doc["declarations"] == [
        {"run": 1, "dimension": "model", "value": "Llama 3.1 8B", "declaration": 1},
        {"run": 2, "dimension": "model", "value": "Llama 3.1 8B", "declaration": 2},
    ]
    _c, text, _e = wb(capsys, *store, "compare", "1", "--vs", "2")
    assert "relies on declarations: run 1 model (#1), run 2 model (#2)" in text
    # Unset brings the refusal back; the history keeps all three rows.
    wb(capsys, *store, "declare", "1", "--unset", "model", "--why", "oops")
    assert not wbj(capsys, *store, "compare", "1", "--vs", "2")["comparable"]
    assert [d["action"] for d in wbj(capsys, *store, "show", "1")["declarations"]] == ["set", "unset"]


def test_cli_declare_refusals_are_one_line(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    wb(capsys, *store, "import", str(TRACE))
    measured = wbj(capsys, *store, "show", "1")["dimensions"]["framework"]
    assert measured == {"value": "PyTorch", "source": "measured"}
    _c, _o, err = wb(capsys, *store, "declare", "1", "framework=JAX", expect=2)
    assert (
        err.count("\n") == 1 and "framework=JAX contradicts the data, which say framework = 'PyTorch' (measured)" in err
    )
    assert (
        "declarations" not in wbj(capsys, *store, "show", "1") or not wbj(capsys, *store, "show", "1")["declarations"]
    )
    _c, _o, err = wb(capsys, *store, "declare", "1", expect=2)
    assert "nothing to declare" in err
    _c, _o, err = wb(capsys, *store, "declare", "model=x", expect=2)
    assert "name the runs" in err
    _c, _o, err = wb(capsys, *store, "declare", "99", "model=x", expect=2)
    assert "no run with id or label '99'" in err


def test_declared_value_the_samples_contradict_is_refused(tmp_path, capsys):
    """The lens's own reading of the samples counts as data: request mix from token lengths."""
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    wb(capsys, *store, "import", *map(str, inference_pair(tmp_path, drop=("request_mix",))))
    _c, _o, err = wb(capsys, *store, "declare", "1", "request_mix=4000 prompt / 10 output tokens", expect=2)
    assert "contradicts the data, which say request_mix" in err


def test_bundle_carries_the_history_and_verifies(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    wb(capsys, *store, "import", *map(str, inference_pair(tmp_path)))
    wb(capsys, *store, "declare", "1", "2", "model=Llama 3.1 8B", "--why", "same deployment")
    inv = wbj(capsys, *store, "investigate", "new", "--lens", "inference", "--question", "Did TTFT move?")
    comp = wbj(capsys, *store, "investigate", "compare", str(inv["id"]), "1", "--vs", "2")
    assert comp["comparable"]
    bundle = tmp_path / "b.json"
    wb(capsys, *store, "bundle", "export", str(inv["id"]), "-o", str(bundle), "--embed-samples")
    import json

    doc = json.loads(bundle.read_text())
    runs = {r["id"]: r for r in doc["runs"]}
    assert runs[1]["declarations"][0]["why"] == "same deployment"
    assert runs[1]["dimensions"]["model"]["declaration"] == 1
    assert doc["results"]["content"]["comparisons"][0]["result"]["declarations"][0]["declaration"] == 1
    _c, out, _e = wb(capsys, "evidence", "verify", str(bundle), "--recompute")
    assert "VALID" in out and "recompute within tolerance" in out
