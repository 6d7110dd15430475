"""String columns are dictionary-encoded (codes + one table of distinct strings, never
pickled), read back as the same values, and stores written before that still read."""

import io
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from store import columns, open_store
from store.api import CaptureInfo
from store.errors import StoreDamaged
from store.records import RunRecord

HUGE = "x" * 10_000 + "é"  # one long value among short ones: no row pays for its width
VALUES = ["", "gemm", "nccl:all_reduce", "ünïcødé ✓ 日本", "", HUGE, "gemm", "\x00nul inside", "😀"]


@pytest.mark.parametrize(
    "array",
    [
        np.array(VALUES, dtype=str),
        np.array(VALUES, dtype=object),
        np.array(VALUES, dtype=np.dtypes.StringDType()),
        np.array([""] * 5, dtype=str),
        np.zeros(0, dtype="<U1"),
        np.zeros(0, dtype=object),
    ],
)
def test_round_trip_gives_the_same_values(array):
    blob = columns.encode(array)
    assert blob.startswith(columns.STRINGS_MAGIC)
    back = columns.decode(blob)
    assert back.dtype == object and back.shape == (len(array),)
    assert back.tolist() == [str(v) for v in array.tolist()]
    assert columns.decode(columns.encode(back)).tolist() == back.tolist()  # what was read writes back


def test_a_long_name_on_every_row_is_stored_once():
    name = "void at::native::elementwise_kernel<128, 4>" + "x" * 800  # the width of a real kernel name
    rows = np.array([name, "ncclKernel_AllReduce"] * 50_000, dtype=str)  # 400 MB as <U, 8 MB as float64
    blob = columns.encode(rows)
    assert len(blob) < rows.size + 4096  # one byte of code a row, the names once
    back = columns.decode(blob)
    assert back.dtype == object and back[0] is back[2]  # one shared string, not a copy per row
    assert back[0] == name and back[-1] == "ncclKernel_AllReduce"


def test_object_arrays_of_anything_but_str_are_refused():
    for bad in ([{"a": 1}], ["ok", None], ["ok", b"bytes"], ["ok", 1.5]):
        with pytest.raises(TypeError):
            columns.encode(np.array(bad, dtype=object))


def test_numeric_columns_stay_plain_npy():
    array = np.array([1.5, np.nan])
    saved = io.BytesIO()
    np.save(saved, array, allow_pickle=False)
    assert columns.encode(array) == saved.getvalue()


@pytest.mark.parametrize("damage", ["truncated", "trailing", "code_out_of_range", "offsets_past_end", "pickled_table"])
def test_a_damaged_string_blob_is_refused(damage):
    good = columns.encode(np.array(["a", "bb", "a"], dtype=str))
    magic = columns.STRINGS_MAGIC

    def npy(a: np.ndarray, pickle: bool = False) -> bytes:
        out = io.BytesIO()
        np.save(out, a, allow_pickle=pickle)
        return out.getvalue()

    blob = {
        "truncated": good[:-2],
        "trailing": good + b"\x00",
        "code_out_of_range": magic
        + npy(np.array([0, 5], dtype=np.uint8))
        + npy(np.array([1, 3], dtype=np.int64))
        + npy(np.frombuffer(b"abb", np.uint8)),
        "offsets_past_end": magic
        + npy(np.array([0], dtype=np.uint8))
        + npy(np.array([9], dtype=np.int64))
        + npy(np.frombuffer(b"abb", np.uint8)),
        "pickled_table": magic
        + npy(np.array([0], dtype=np.uint8))
        + npy(np.array(["a"], dtype=object), pickle=True)
        + npy(np.zeros(0, np.uint8)),
    }[damage]
    with pytest.raises((ValueError, EOFError, OSError)):
        columns.decode(blob)


def _capture(name: str) -> CaptureInfo:
    return CaptureInfo(
        path=Path(f"/x/{name}"), sha256=name[0] * 64, size=1, format="native", importer="native", importer_version="1"
    )


@pytest.mark.store
def test_a_store_round_trips_string_columns(store_url):
    st = open_store(store_url)
    record = RunRecord(lens="training", label="ranks", sources=[Path("/x/ranks")])
    record.tables["operations"] = {
        "name": np.array(VALUES * 3, dtype=str),  # dictionary-encoded
        "key": np.array([f"op-{i}-ü" for i in range(27)]),  # all distinct: plain
        "total_ms": np.arange(27.0),
    }
    (run_id,) = st.add_import([_capture("ranks")], [record])
    back = open_store(store_url).load_run(run_id)
    assert back.tables["operations"]["key"].tolist() == [f"op-{i}-ü" for i in range(27)]
    assert back.tables["operations"]["name"].dtype == object
    assert back.tables["operations"]["name"].tolist() == VALUES * 3
    np.testing.assert_array_equal(back.tables["operations"]["total_ms"], np.arange(27.0))


def test_a_store_written_in_the_old_encoding_still_reads(tmp_path):
    """Before dictionary encoding a string column was one fixed-width ``<U`` .npy (what
    ``np.save`` writes): a store holding such blobs reads without a migration, and a new
    import beside them is dictionary-encoded."""
    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    st = open_store(url)
    old = RunRecord(lens="training", label="old", sources=[Path("/x/old")])
    old.tables["operations"] = {"name": np.array(["gemm", "", "ünï"], dtype=str), "total_ms": np.array([1.0, 2.0, 3.0])}
    (old_id,) = st.add_import([_capture("old")], [old])
    legacy = io.BytesIO()
    np.save(legacy, np.array(["gemm", "", "ünï"], dtype=str), allow_pickle=False)  # the old writer's bytes
    with sqlite3.connect(tmp_path / "old.sqlite") as conn:
        conn.execute(
            "UPDATE run_column SET data = ?, dtype = '<U4' WHERE run_id = ? AND name = 'name'",
            (legacy.getvalue(), old_id),
        )
        (blob,) = conn.execute("SELECT data FROM run_column WHERE run_id = ? AND name = 'name'", (old_id,)).fetchone()
    assert not bytes(blob).startswith(columns.STRINGS_MAGIC)

    new = RunRecord(lens="training", label="new", sources=[Path("/x/new")])
    new.tables["operations"] = {"name": np.array(["gemm", "nccl"], dtype=str), "total_ms": np.array([1.0, 2.0])}
    (new_id,) = open_store(url).add_import([_capture("new")], [new])

    st = open_store(url)
    back_old, back_new = st.load_run(old_id), st.load_run(new_id)
    assert back_old.tables["operations"]["name"].tolist() == ["gemm", "", "ünï"]
    assert back_old.tables["operations"]["name"].dtype.kind == "U"  # as it was stored
    assert back_new.tables["operations"]["name"].tolist() == ["gemm", "nccl"]
    assert back_new.tables["operations"]["name"].dtype == object


def test_a_damaged_string_column_in_a_store_is_one_line(tmp_path):
    url = f"sqlite:///{tmp_path / 'bad.sqlite'}"
    record = RunRecord(lens="training", label="r", sources=[Path("/x/r")])
    record.tables["operations"] = {"name": np.array(["a", "b"], dtype=str)}
    (run_id,) = open_store(url).add_import([_capture("r")], [record])
    with sqlite3.connect(tmp_path / "bad.sqlite") as conn:
        conn.execute(
            "UPDATE run_column SET data = ? WHERE run_id = ?", (columns.STRINGS_MAGIC + b"\x93NUMPY junk", run_id)
        )
    with pytest.raises(StoreDamaged, match="operations.name"):
        open_store(url).load_run(run_id)


DISTINCT = [
    np.array([f"r-{i:07d}" for i in range(5000)]),  # request ids: equal width, ASCII
    np.array([f"req-{i}" for i in range(3000)]),  # ragged ASCII
    np.array([f"{i}-ünï-😀" + "x" * (i % 7) for i in range(500)]),  # not ASCII
    np.array(["a\x00b", "", "tail", "x" * 300, "é"] + [f"v{i}" for i in range(50)]),  # NULs inside, empty, long
    np.array([f"id{i}" for i in range(800)], dtype=object),
    np.array([f"id{i}" for i in range(800)], dtype=np.dtypes.StringDType()),
]


@pytest.mark.parametrize("array", DISTINCT, ids=lambda a: f"{a.dtype}-{len(a)}")
def test_a_column_of_distinct_values_is_stored_plain_and_reads_the_same(array):
    """Nearly all values distinct (judged on a sample): no dictionary to build, one entry per row."""
    blob = columns.encode(array)
    assert blob.startswith(columns.TEXT_MAGIC)
    back = columns.decode(blob)
    assert back.dtype == object and back.tolist() == [str(v) for v in array.tolist()]
    assert columns.decode(columns.encode(back)).tolist() == back.tolist()
    assert len(blob) < sum(len(str(v).encode()) for v in array.tolist()) + 8 * len(array) + 512


def test_the_encoding_is_chosen_by_a_sample_of_the_values():
    repeated = np.array([f"k{i % 50}" for i in range(10_000)])  # 50 distinct
    mostly = np.array([f"k{i}" if i % 20 else "same" for i in range(10_000)])  # 95 % distinct
    assert columns.encode(repeated).startswith(columns.STRINGS_MAGIC)
    assert columns.encode(mostly).startswith(columns.TEXT_MAGIC)
    for array in (repeated, mostly):
        assert columns.decode(columns.encode(array)).tolist() == array.tolist()


@pytest.mark.parametrize("damage", ["truncated", "trailing", "offsets_past_end", "offsets_backwards", "pickled"])
def test_a_damaged_plain_blob_is_refused(damage):
    good = columns.encode(np.array(["a", "bb", "ccc"]))
    assert good.startswith(columns.TEXT_MAGIC)

    def npy(a: np.ndarray, pickle: bool = False) -> bytes:
        out = io.BytesIO()
        np.save(out, a, allow_pickle=pickle)
        return out.getvalue()

    magic = columns.TEXT_MAGIC
    blob = {
        "truncated": good[:-2],
        "trailing": good + b"\x00",
        "offsets_past_end": magic + npy(np.array([1, 9], dtype=np.int64)) + npy(np.frombuffer(b"abb", np.uint8)),
        "offsets_backwards": magic + npy(np.array([2, 1, 3], dtype=np.int64)) + npy(np.frombuffer(b"abb", np.uint8)),
        "pickled": magic + npy(np.array(["a"], dtype=object), pickle=True) + npy(np.zeros(0, np.uint8)),
    }[damage]
    with pytest.raises((ValueError, EOFError, OSError)):
        columns.decode(blob)


def test_a_store_whose_distinct_column_is_dictionary_encoded_still_reads(tmp_path):
    """Before plain text columns every string column was dictionary-encoded, request ids too:
    such a blob (written here the old way) reads back the same beside a new plain one."""
    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    ids = np.array([f"r-{i:04d}" for i in range(2000)])
    old = RunRecord(lens="inference", label="old", sources=[Path("/x/old")])
    old.tables["samples"] = {"id": ids, "ttft_ms": np.arange(2000.0)}
    (old_id,) = open_store(url).add_import([_capture("old")], [old])
    codes, table = columns.dictionary(ids)  # the writer before plain columns
    offsets, utf8 = columns.string_table(table)
    legacy = b"".join(
        bytes(p)
        for p in (
            columns.STRINGS_MAGIC,
            *columns.npy_parts(codes),
            *columns.npy_parts(offsets),
            *columns.npy_parts(utf8),
        )
    )
    with sqlite3.connect(tmp_path / "old.sqlite") as conn:
        (blob,) = conn.execute("SELECT data FROM run_column WHERE run_id = ? AND name = 'id'", (old_id,)).fetchone()
        assert bytes(blob).startswith(columns.TEXT_MAGIC)  # written plain now
        conn.execute("UPDATE run_column SET data = ? WHERE run_id = ? AND name = 'id'", (legacy, old_id))
    new = RunRecord(lens="inference", label="new", sources=[Path("/x/new")])
    new.tables["samples"] = {"id": ids[:10], "ttft_ms": np.arange(10.0)}
    (new_id,) = open_store(url).add_import([_capture("new")], [new])
    st = open_store(url)
    assert st.load_run(old_id).samples["id"].tolist() == ids.tolist()
    assert st.load_run(new_id).samples["id"].tolist() == ids[:10].tolist()
