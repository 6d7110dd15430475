"""A spooled table (store/spooled.py): rows appended chunk by chunk to a temporary file,
the excluded key values and the chunks' order decided at the end, each column written
into the store chunk by chunk in the stored encoding."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from store import columns, open_store
from store.api import CaptureInfo
from store.records import RunRecord
from store.spooled import SpooledTable

COLUMNS = ("name", "kind", "step", "rank", "total_ms")


def _table() -> SpooledTable:
    t = SpooledTable(COLUMNS, text=("name", "kind"), key="step")
    # rank 3 arrives first, with codes into its own labels; rank 1 as strings, without a rank column
    t.append(
        {
            "name": np.array([1, 0, 1], np.int32),
            "kind": np.array([0, 0, 1], np.int8),
            "step": np.array([1.0, 2.0, 2.0]),
            "rank": np.full(3, 3.0),
            "total_ms": np.array([1.5, 2.5, 3.5]),
        },
        {"name": ["gemm", "ncclAllReduce ünï"], "kind": ["kernel", "collective"]},
        order=3,
    )
    t.append(
        {
            "name": np.array(["ncclAllReduce ünï", "copy"], dtype=object),
            "kind": np.array(["collective", "memcpy"]),
            "step": np.array([1.0, np.nan]),
            "total_ms": np.array([4.0, 5.0]),
        },
        order=1,
    )
    t.append(
        {"name": np.zeros(0, np.int32), "kind": np.zeros(0, np.int32), "step": np.zeros(0), "total_ms": np.zeros(0)},
        {"name": [], "kind": []},
        order=2,
    )
    return t


def test_rows_read_back_in_order_with_the_excluded_left_out():
    t = _table()
    assert t.rows == 5 and t.chunks == 3 and list(t) == list(COLUMNS)
    t.order()
    t.exclude([2.0])
    assert t.rows == 3
    assert t["name"].tolist() == ["ncclAllReduce ünï", "copy", "ncclAllReduce ünï"]
    assert t["name"].dtype == object and t["name"][0] is t["name"][2]  # one shared str per distinct value
    assert t["kind"].tolist() == ["collective", "memcpy", "kernel"]
    np.testing.assert_array_equal(t["step"], [1.0, np.nan, 1.0])  # NaN is never an excluded value
    np.testing.assert_array_equal(t["rank"], [np.nan, np.nan, 3.0])  # a column the chunk lacked: unknown
    np.testing.assert_array_equal(t["total_ms"], [4.0, 5.0, 1.5])
    assert sorted(t.text_values("name")) == ["copy", "gemm", "ncclAllReduce ünï"]  # gemm is on excluded rows only


@pytest.mark.parametrize("excluded", [[], [2.0], [1.0, 2.0]])
def test_a_streamed_column_is_the_blob_of_the_same_array(excluded):
    t = _table()
    t.order()
    t.exclude(excluded)
    for name in t:
        column = t.stream(name)
        blob = b"".join(column.pieces)
        assert len(blob) == column.size and column.length == t.rows
        back = columns.decode(blob)
        whole = t[name]
        if name in ("name", "kind"):
            assert column.dtype == "str" and blob.startswith(columns.STRINGS_MAGIC)
            assert back.tolist() == whole.tolist()
        else:  # exactly the .npy file of the in-memory column
            assert column.dtype == "float64" and blob == columns.encode(whole)


def test_bad_chunks_are_refused():
    t = SpooledTable(COLUMNS, text=("name", "kind"), key="step")
    with pytest.raises(ValueError, match="not columns of this table"):
        t.append({"name": np.array(["a"]), "kind": np.array(["k"]), "other": np.array([1.0])})
    with pytest.raises(ValueError, match="missing from the chunk"):
        t.append({"name": np.array(["a"]), "step": np.array([1.0])})
    with pytest.raises(ValueError, match="different lengths"):
        t.append({"name": np.array(["a"]), "kind": np.array(["k", "k"])})
    with pytest.raises(ValueError, match="outside its labels"):
        t.append({"name": np.array([2]), "kind": np.array([0])}, {"name": ["a"], "kind": ["k"]})
    with pytest.raises(ValueError, match="holds text"):
        t.append({"name": np.array([1.0]), "kind": np.array(["k"])})
    with pytest.raises(ValueError):
        SpooledTable(COLUMNS, text=("step",), key="step")
    assert t.rows == 0 and t.chunks == 0


def _capture(name: str) -> CaptureInfo:
    return CaptureInfo(
        path=Path(f"/x/{name}"), sha256=name[0] * 64, size=1, format="kineto", importer="kineto", importer_version="1"
    )


@pytest.mark.store
def test_a_spooled_table_is_written_and_read_back(store_url):
    t = _table()
    t.order()
    t.exclude([2.0])
    record = RunRecord(lens="training", label="job", sources=[Path("/x/a")])
    record.samples["step"] = np.array([1.0])
    record.tables["operations"] = t  # type: ignore[assignment]
    st = open_store(store_url)
    (run_id,) = st.add_import([_capture("a")], [record])
    back = open_store(store_url).load_run(run_id)
    assert list(back.tables["operations"]) == list(COLUMNS)
    for name in COLUMNS:
        if t[name].dtype == object:
            assert back.tables["operations"][name].tolist() == t[name].tolist()
        else:
            np.testing.assert_array_equal(back.tables["operations"][name], t[name])


@pytest.mark.store
def test_a_spool_that_fails_mid_column_writes_nothing(store_url):
    t = _table()
    t.order()
    os.ftruncate(t._file.fileno(), 20)  # the spool lost its tail (a disk fault): the second chunk cannot be read
    ok = RunRecord(lens="training", label="first", sources=[Path("/x/a")])
    bad = RunRecord(lens="training", label="job", sources=[Path("/x/b")])
    bad.tables["operations"] = t  # type: ignore[assignment]
    st = open_store(store_url)
    with pytest.raises(OSError, match="spool file of a table ended early"):
        st.add_import([_capture("a"), _capture("b")], [ok, bad])
    assert open_store(store_url).counts() == {"capture": 0, "run": 0, "run_source": 0, "run_column": 0}
