"""Run tidying: rename, remove (refused while evidence refers to the run), and a store
whose foreign keys stay consistent on every backend."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import func, select

from store import open_store
from store.api import CaptureInfo
from store.records import Dimension, RunRecord
from tests.declare.helpers import inference_pair, wb, wbj


def _two_runs(url):
    st = open_store(url)
    recs, caps = [], []
    for i in range(2):
        path = Path(f"/x/{i}.json")
        r = RunRecord(
            lens="inference", label=f"run {i}", sources=[path], dimensions={"model": Dimension("m", "declared")}
        )
        r.samples["ttft_ms"] = np.array([1.0, 2.0])
        recs.append(r)
        caps.append(
            CaptureInfo(path=path, sha256=str(i) * 64, size=1, format="native", importer="native", importer_version="1")
        )
    return st, st.add_import(caps, recs)


def _count(st, table) -> int:
    with st.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


@pytest.mark.store
def test_remove_cascades_and_forgets_unused_captures(store_url):
    from store.declarations import DimensionDeclaration, declare
    from store.tables import Capture, RunColumn, RunSource
    from store.tidy import remove_runs, rename_run

    st, (a, b) = _two_runs(store_url)
    declare(st, [a, b], {"objective": "chat"}, who="ana")
    assert rename_run(st, a, "  the baseline ", look_alike_form=str) == "run 0"
    assert st.get_run(a).label == "the baseline"
    done = remove_runs(st, [a])
    assert done == {"runs": [a], "captures": ["0.json"]}
    assert [r.id for r in st.list_runs()] == [b]
    # every row that named run a went with it, through the foreign keys
    assert _count(st, RunColumn) == 1 and _count(st, RunSource) == 1 and _count(st, Capture) == 1
    assert _count(st, DimensionDeclaration) == 1
    assert st.find_capture("0" * 64) is None and st.find_capture("1" * 64) is not None


@pytest.mark.store
def test_remove_is_refused_while_an_investigation_refers_to_the_run(store_url):
    from store.errors import RunNotFound
    from store.investigations import Investigation
    from store.tidy import RunInUse, remove_runs

    st, (a, b) = _two_runs(store_url)
    with st.session() as s:
        s.add(Investigation(lens="inference", question="q", baseline_runs=[a], candidate_runs=[]))
    with pytest.raises(RunInUse, match=rf"run {a} is evidence in investigation 1 \(baseline runs\)"):
        remove_runs(st, [b, a])
    assert len(st.list_runs()) == 2  # all or nothing
    from store.investigations import InvestigationComparison

    with st.session() as s:
        s.add(
            InvestigationComparison(
                investigation_id=1, baseline_runs=[], candidate_runs=[], parameters={"control": [b]}
            )
        )
    with pytest.raises(RunInUse, match=rf"run {b} is evidence in comparison 1 of investigation 1"):
        remove_runs(st, [b])
    with pytest.raises(RunNotFound):
        remove_runs(st, [99])


def test_cli_rename_and_remove(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    a, b = inference_pair(tmp_path)
    wb(capsys, *store, "import", str(a), str(b))
    _c, out, _e = wb(capsys, *store, "rename", "1", "engine v1")
    assert out == "run 1: before -> engine v1\n"
    assert wbj(capsys, *store, "show", "engine v1")["id"] == 1
    _c, _o, err = wb(capsys, *store, "rename", "1", "  ", expect=2)
    assert "empty" in err
    inv = wbj(capsys, *store, "investigate", "new", "--lens", "inference", "--question", "q?")
    wbj(
        capsys, *store, "investigate", "compare", str(inv["id"]), "1", "--vs", "2", "--accept", "model", "--why", "same"
    )
    _c, _o, err = wb(capsys, *store, "remove", "2", expect=2)
    assert err.count("\n") == 1 and "run 2 is evidence in" in err and "comparison 1 of investigation 1" in err
    wb(capsys, *store, "import", str(a), str(b), "--label", "x")  # both stored: nothing new
    c = tmp_path / "3-third.json"
    c.write_text(a.read_text().replace('"before"', '"third"'))
    wb(capsys, *store, "import", str(c))
    doc = wbj(capsys, *store, "remove", "third")
    assert doc == {"runs": [3], "captures": ["3-third.json"]}
    _c, out, _e = wb(capsys, *store, "import", str(c))  # the file can come back
    assert "3-third.json -> run" in out
