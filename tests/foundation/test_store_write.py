"""Writing an import: one column's blob alive at a time, and no SQLAlchemy on SQLite."""

import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from store import open_store
from store.api import CaptureInfo
from store.records import RunRecord
from tests.foundation.helpers import inference_capture, write_json

COLUMNS, LENGTH = 8, 250_000  # 8 float64 columns of 2 MB each


def _capture(name: str, sha: str) -> CaptureInfo:
    return CaptureInfo(
        path=Path(f"/x/{name}"), sha256=sha * 64, size=1, format="native", importer="native", importer_version="1"
    )


@pytest.mark.store
def test_columns_are_encoded_and_written_one_at_a_time(store_url):
    st = open_store(store_url)
    st.add_import(
        [_capture("warm", "a")], [RunRecord(lens="inference", label="warm", sources=[Path("/x/warm")])]
    )  # creates the store
    record = RunRecord(lens="inference", label="wide", sources=[Path("/x/wide")])
    for i in range(COLUMNS):
        record.samples[f"c{i}"] = np.arange(LENGTH, dtype=np.float64) + i
    blob = LENGTH * 8
    tracemalloc.start()
    try:
        (run_id,) = st.add_import([_capture("wide", "b")], [record])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Holding every column's .npy bytes at once would peak above COLUMNS blobs; one at a
    # time is one blob, and SQLite (incremental blob I/O) never makes a whole column's.
    bound = blob // 2 if store_url.startswith("sqlite") else 3 * blob  # (psycopg copies a blob as it sends it)
    assert peak < bound, f"peak {peak / 1e6:.1f} MB while writing {COLUMNS} columns of {blob / 1e6:.1f} MB"
    back = open_store(store_url).load_run(run_id)
    assert sorted(back.samples) == sorted(record.samples)
    np.testing.assert_array_equal(back.samples["c7"], record.samples["c7"])


@pytest.mark.parametrize(
    "array", [np.array([1.5, np.nan]), np.zeros(0), np.arange(6.0).reshape(2, 3)[:, 1], np.array([True, False])]
)
def test_a_numeric_column_is_exactly_its_npy_file(array):
    import io

    from store import columns

    saved = io.BytesIO()
    np.save(saved, array, allow_pickle=False)
    assert columns.encode(array) == saved.getvalue()
    header, data = columns.npy_parts(array)
    assert header + bytes(data) == saved.getvalue()
    np.testing.assert_array_equal(columns.decode(columns.encode(array)), array)


PROBE = """
import sys
from workbench.cli import main
try:
    main(["--store", sys.argv[1], "import", sys.argv[2]])
except SystemExit as exc:
    assert not exc.code, exc.code
print("LOADED:" + ",".join(m for m in ("sqlalchemy", "sqlmodel") if m in sys.modules))
"""


def test_import_into_a_sqlite_store_loads_no_sqlalchemy(tmp_path):
    store = tmp_path / "wb.sqlite"
    first = write_json(tmp_path / "a.json", inference_capture(3))
    second = write_json(tmp_path / "b.json", inference_capture(4, label="second"))
    for path in (first, second):
        out = subprocess.run(
            [sys.executable, "-c", PROBE, str(store), str(path)], capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stdout + out.stderr
        loaded = out.stdout.strip().splitlines()[-1]
        # Creating the store (the first import) runs the checked-in DDL, writing runs plain SQL.
        assert loaded == "LOADED:", (
            f"an import into {'a new' if path == first else 'an existing'} store loaded {loaded}"
        )
    runs = open_store(str(store)).list_runs()
    assert [r.label for r in runs] == ["engine v0.8.3, run 1", "second"] and [r.sample_count for r in runs] == [3, 4]
