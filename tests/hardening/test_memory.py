"""Items 1-5 of issue 16: hostile shapes end in one clear line, within a memory cap.

Each import runs in a subprocess under ``RLIMIT_AS`` (tests/hardening/conftest.py), at
the smallest size that showed the growth: a regression fails (MemoryError, a kill, or
an internal error) instead of swapping. The issue's full-size reproductions are in
bench/hostile.py.
"""

from __future__ import annotations

import pytest

from tests.hardening import inputs
from tests.hardening.conftest import one_line_refusal, wb_capped


def _import(tmp_path, path, *extra):
    return wb_capped("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}", "import", str(path), *extra)


def _nothing_written(tmp_path):
    result = wb_capped("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}", "runs", "--json")
    assert result.returncode == 0, result.stderr
    assert '"id"' not in result.stdout


def test_distinct_keys_refused_not_squared(tmp_path):
    # 12,000 keys x 12,000 samples: ~2.3 GB of columns before the fix (6.2 GB at 20,000).
    path = inputs.distinct_keys(tmp_path / "uk.json", 12_000)
    one_line_refusal(
        _import(tmp_path, path), "uk.json", "samples[1024]", "more distinct keys than 1,024", "docs/limits.md"
    )
    _nothing_written(tmp_path)


def test_sparse_table_refused(tmp_path):
    # 1,000 keys (under the column cap), one value per sample: 1 value per 1,000 cells.
    path = tmp_path / "sparse.json"
    path.write_text(inputs.NATIVE_HEAD + '"samples":[' + ",".join(f'{{"k{i % 1000}":1}}' for i in range(20_000)) + "]}")
    one_line_refusal(_import(tmp_path, path), "sparse.json", "more sparse than 1 value in 16 cells")


def test_one_long_string_does_not_widen_every_row(tmp_path):
    # numpy keeps text at the longest string's width: 20,000 rows x 100,000 chars = 8 GB.
    path = tmp_path / "wide.json"
    path.write_text(inputs.NATIVE_HEAD + '"samples":[{"id":"' + "x" * 100_000 + '"}' + ',{"id":"y"}' * 20_000 + "]}")
    one_line_refusal(_import(tmp_path, path), "wide.json", "samples.id", "fixed-width storage")


def test_kineto_deep_nesting_bounded(tmp_path):
    # The 80 KB file: 4 GB through ijson.items before the fix.
    path = inputs.kineto_deep(tmp_path / "trace.json", 40_000)
    one_line_refusal(_import(tmp_path, path), "trace.json", "traceEvents[0]", "nested deeper than 64 levels")


def test_nsys_recursive_view_refused(tmp_path):
    path = inputs.nsys_recursive_strings(tmp_path / "report.sqlite")
    one_line_refusal(_import(tmp_path, path), "report.sqlite", "StringIds is a view, not a table")


def test_nsys_work_is_bounded(monkeypatch, tmp_path):
    """Defence in depth: a query that runs on is stopped by the SQLite step budget."""
    import sqlite3

    from workbench.importers import nsys
    from workbench.limits import LimitExceeded

    path = tmp_path / "slow.sqlite"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.11.0');"
        'CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT, "end" INT, globalTid INT, correlationId INT, nameId INT);'
    )
    con.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, 0)", [(i, i + 1, i) for i in range(20_000)]
    )
    con.commit()
    con.close()
    monkeypatch.setattr(nsys, "SQL_STEPS_PER_BYTE", 0)  # budget: one check interval
    monkeypatch.setattr(nsys, "_PROGRESS_EVERY", 1000)
    with pytest.raises(LimitExceeded, match="SQLite steps per byte"):
        nsys.read_report(path)


def test_gzip_bomb_refused_by_ratio(tmp_path):
    # 70 M zeros: 140 MB from ~140 KB of gzip, 1000x; the reader stops at 64 MiB.
    path = inputs.vllm_zeros(tmp_path / "result.json.gz", 35_000_000)
    one_line_refusal(
        _import(tmp_path, path), "result.json.gz", "decompresses to more than 64 MiB", "200x the compressed size"
    )
    _nothing_written(tmp_path)


def test_label_bomb_refused(tmp_path):
    path = inputs.label_bomb(tmp_path / "label.json.gz", 100_000_000)
    one_line_refusal(_import(tmp_path, path), "label.json.gz", "decompresses to more than")


def test_long_label_refused_before_the_store(tmp_path):
    path = tmp_path / "label.json"
    path.write_text(inputs.NATIVE_HEAD + '"label":"' + "a" * (2 << 20) + '","samples":[{"ttft_ms":1}]}')
    one_line_refusal(_import(tmp_path, path), "label.json", "label", "longer than 1,048,576")


def test_sparse_file_of_nuls_stops_at_the_first_byte(tmp_path):
    # A header then NULs: the stream reader used to double its buffer to the end of the file.
    path = inputs.sparse_nuls(tmp_path / "nuls.json", 400 << 20)
    line = one_line_refusal(_import(tmp_path, path), "nuls.json", "invalid JSON")
    assert "char 62" in line


def test_one_json_value_is_capped(tmp_path, monkeypatch):
    import io

    from workbench.errors import BadInput
    from workbench.formats import json_object

    monkeypatch.setattr(json_object, "MAX_VALUE_BYTES", 1 << 20)
    monkeypatch.setattr(json_object, "READ", 1 << 16)
    data = b'{"a":"' + b"x" * (4 << 20) + b'"}'
    reads = []
    stream = io.BytesIO(data)
    read = stream.read
    stream.read = lambda n=-1: reads.append(n) or read(n)  # type: ignore[method-assign]
    with pytest.raises(BadInput, match="one JSON value is larger than 1 MiB"):
        list(json_object.JsonObject(stream, "big.json", streamed="samples").members())
    assert sum(reads) < 3 << 20  # refused near the limit, not at the end of the value


def test_pickle_back_references_bounded(tmp_path):
    # The dump: 4 M references to one dict in 13 KB of gzip -> 2.9 GB, 29 s.
    path = inputs.pickle_backrefs(tmp_path / "_dump_0", 300_000)
    result = wb_capped("diagnose", str(path))
    one_line_refusal(result, "_dump_0", "counting each shared reference", "5,000,000")


def test_bundle_of_tiny_arrays_refused_before_parsing(tmp_path):
    path = inputs.bundle_tiny_arrays(tmp_path / "bundle.json", 2_100_000)
    result = wb_capped("evidence", "verify", str(path))
    one_line_refusal(result, "bundle.json", "arrays and objects are more than 2,000,000")
    result = wb_capped("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}", "bundle", "import", str(path))
    one_line_refusal(result, "bundle.json", "arrays and objects are more than 2,000,000")


def test_kineto_gzip_bomb_refused(tmp_path):
    # Every importer reads through the one bounded reader: the typed Kineto path too.
    path = inputs._gzip_repeated(
        tmp_path / "trace.json.gz",
        b'{"schemaVersion":1,"deviceProperties":[],"traceEvents":[',
        b'{"ph":"i","cat":"cpu_op","name":"a","ts":1},',
        3_000_000,
        b"{}]}",
    )
    one_line_refusal(_import(tmp_path, path), "trace.json.gz", "decompresses to more than", "200x the compressed size")


def test_distinct_keys_before_the_lens_are_refused(tmp_path):
    # Samples before "lens" are kept and typed afterwards: the same column budget applies.
    path = tmp_path / "late.json"
    path.write_text(
        '{"format":"workbench.capture/1","samples":['
        + ",".join(f'{{"k{i}":1}}' for i in range(3_000))
        + '],"lens":"inference"}'
    )
    one_line_refusal(_import(tmp_path, path), "late.json", "more distinct keys than 1,024")


def test_a_few_long_error_texts_are_kept(tmp_path):
    # Sparse long text that costs little (10,000 rows x 500 chars = 20 MB) is not refused.
    path = tmp_path / "errors.json"
    rows = [{"ttft_ms": 1.0, "error": ("x" * 500 if i % 1000 == 0 else "")} for i in range(10_000)]
    import json

    path.write_text(inputs.NATIVE_HEAD + '"samples":' + json.dumps(rows) + "}")
    result = _import(tmp_path, path)
    assert result.returncode == 0, result.stderr
