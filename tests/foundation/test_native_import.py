"""Native capture import: good files, idempotence, declared dimensions, and every bad input."""

import gzip
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from store import open_store
from tests.conftest import run_wb
from tests.foundation.helpers import inference_capture, write_json
from workbench.errors import BadInput
from workbench.ingest import import_files

EMPTY = {"capture": 0, "run": 0, "run_source": 0, "run_column": 0}


@pytest.mark.store
def test_import_and_reimport(store_url, tmp_path):
    path = write_json(tmp_path / "a.json.gz", inference_capture(7), gz=True)
    st = open_store(store_url)
    report = import_files(st, [path])
    assert len(report.run_ids) == 1
    run = st.load_run(report.run_ids[0])
    assert run.sample_count == 7 and run.lens == "inference"
    np.testing.assert_allclose(run.samples["ttft_ms"], 110.0 + np.arange(7))
    assert run.samples["ok"].tolist() == [1.0] * 7
    counts = st.counts()
    again = import_files(st, [path])
    assert again.run_ids == [] and "already imported" in again.skipped[0][1]
    assert st.counts() == counts


def test_missing_values_are_unknown_not_zero(sqlite_url, tmp_path):
    doc = inference_capture(3)
    del doc["samples"][1]["queue_ms"]
    doc["samples"][2]["queue_ms"] = None
    st = open_store(sqlite_url)
    run = st.load_run(import_files(st, [write_json(tmp_path / "m.json", doc)]).run_ids[0])
    q = run.samples["queue_ms"]
    assert q[0] == 40.0 and math.isnan(q[1]) and math.isnan(q[2])


def test_unknown_keys_are_kept(sqlite_url, tmp_path):
    doc = inference_capture(2, engine_notes={"k": "v"})
    doc["samples"][0]["gpu_temp_c"] = 61
    doc["samples"][1]["trace_id"] = "abc"
    st = open_store(sqlite_url)
    run = st.load_run(import_files(st, [write_json(tmp_path / "u.json", doc)]).run_ids[0])
    assert run.meta["extra"] == {"engine_notes": {"k": "v"}}
    assert run.samples["gpu_temp_c"][0] == 61 and math.isnan(run.samples["gpu_temp_c"][1])
    assert run.samples["trace_id"].tolist() == ["", "abc"]


def test_samples_before_header_and_key_changes_across_chunks(sqlite_url, tmp_path, monkeypatch):
    import workbench.importers.native as native

    monkeypatch.setattr(native, "RUN_BYTES", 256)  # runs of a few samples: keys change across them
    doc = inference_capture(10)
    for i in range(6, 10):
        doc["samples"][i]["late_key_ms"] = float(i)
    reordered = {"samples": doc.pop("samples"), **doc}
    st = open_store(sqlite_url)
    run = st.load_run(import_files(st, [write_json(tmp_path / "r.json", reordered)]).run_ids[0])
    late = run.samples["late_key_ms"]
    assert len(late) == 10 and np.isnan(late[:6]).all() and late[6:].tolist() == [6.0, 7.0, 8.0, 9.0]


def test_declared_dimension_added_and_contradiction_refused(sqlite_url, tmp_path):
    path = write_json(tmp_path / "d.json", inference_capture(2))
    st = open_store(sqlite_url)
    with pytest.raises(BadInput, match="contradicts the file"):
        import_files(st, [path], dims={"model": "Llama 3.1 70B"})
    assert st.counts() == EMPTY
    run = st.load_run(import_files(st, [path], dims={"precision": "bf16", "model": "Llama 3.1 8B"}).run_ids[0])
    assert run.dimensions["precision"].value == "bf16" and run.dimensions["precision"].source == "declared"


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = json.dumps(inference_capture(50)).encode()
    cases: dict[str, tuple[Path, str]] = {}

    def put(name, data: bytes, expect: str):
        p = tmp_path / name
        p.write_bytes(data)
        cases[name] = (p, expect)

    put("truncated.json.gz", gzip.compress(good)[:-200], "truncated")
    put("truncated.json", good[: len(good) // 2], "truncated JSON")
    put("notjson.json", b"this is not json at all\n", "unknown format")
    put("wrong_format.json", json.dumps(inference_capture(2, format="other.capture/1")).encode(), "wrong format")
    put("unknown_lens.json", json.dumps(inference_capture(2, lens="storage")).encode(), "unknown lens 'storage'")
    doc = inference_capture(2)
    del doc["samples"]
    put("no_samples.json", json.dumps(doc).encode(), "missing required key 'samples'")
    doc = inference_capture(3)
    doc["samples"][2]["queue_ms"] = "fast"
    put("wrong_type.json", json.dumps(doc).encode(), "samples[2].queue_ms: expected a number, got a string")
    put("nan.json", good.replace(b'"queue_ms": 43.0', b'"queue_ms": NaN'), "NaN is not allowed")
    put("inf.json", good.replace(b'"queue_ms": 43.0', b'"queue_ms": Infinity'), "Infinity is not allowed")
    doc = inference_capture(3)
    doc["samples"][1]["prefill_ms"] = -5.0
    put("negative.json", json.dumps(doc).encode(), "samples[1].prefill_ms: negative duration")
    doc = inference_capture(3)
    doc["samples"][0]["output_tokens"] = 2**63
    put("bigint.json", json.dumps(doc).encode(), "samples[0].output_tokens: integer 9223372036854775808 is too large")
    put("empty.json", b"", "is empty")
    put("trailing.json", good + b"{}", "unexpected data after the end")
    doc = inference_capture(3)
    doc["samples"][1]["ok"] = "yes"
    put("bool_type.json", json.dumps(doc).encode(), "samples[1].ok: expected true or false")
    return cases


def test_every_bad_input_fails_cleanly_and_writes_nothing(store_url, tmp_path):
    st = open_store(store_url)
    good = write_json(tmp_path / "good.json", inference_capture(3, label="good"))
    for name, (path, expect) in _bad_files(tmp_path).items():
        with pytest.raises(BadInput) as err:
            import_files(st, [good, path])  # the good file is not kept either: one transaction
        message = str(err.value)
        assert str(path) in message, f"{name}: {message}"
        assert expect in message, f"{name}: {message}"
        assert "\n" not in message
        assert st.counts() == EMPTY, name


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, wb_env):
    store = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    for name, (path, expect) in _bad_files(tmp_path).items():
        out = run_wb("--store", store, "import", str(path))
        assert out.returncode == 2, (name, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("wb: error: ") and expect in lines[0], (name, out.stderr)
    assert "no runs" in run_wb("--store", store, "runs").stdout


def test_directory_and_unreadable(tmp_path, sqlite_url, monkeypatch):
    st = open_store(sqlite_url)
    empty = tmp_path / "emptydir"
    empty.mkdir()
    with pytest.raises(BadInput, match="no files"):
        import_files(st, [empty])
    with pytest.raises(BadInput, match="no such file"):
        import_files(st, [tmp_path / "missing.json"])
    locked = write_json(tmp_path / "locked.json", inference_capture(2))
    real_open = open

    def guarded_open(file, *args, **kwargs):  # root ignores chmod, so deny the read directly
        if str(file) == str(locked):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    real_os_open = os.open

    def guarded_os_open(file, *args, **kwargs):  # files are opened with os.open (regular files only)
        if str(file) == str(locked):
            raise PermissionError(13, "Permission denied")
        return real_os_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", guarded_open)
    monkeypatch.setattr("os.open", guarded_os_open)
    with pytest.raises(BadInput, match="cannot be read"):
        import_files(st, [locked])
    assert st.counts() == EMPTY


def test_directory_import_reads_every_file(sqlite_url, tmp_path):
    d = tmp_path / "caps"
    d.mkdir()
    for i in range(3):
        write_json(d / f"c{i}.json", inference_capture(2, label=f"c{i}"))
    st = open_store(sqlite_url)
    assert len(import_files(st, [d]).run_ids) == 3


def test_json_output_is_one_document(tmp_path, wb_env):
    path = write_json(tmp_path / "a.json", inference_capture(4))
    store = f"sqlite:///{tmp_path / 'j.sqlite'}"
    out = run_wb("--store", store, "import", str(path), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["runs"] == [1]
    runs = json.loads(run_wb("--store", store, "runs", "--json").stdout)
    assert (
        runs[0]["samples"] == 4 and runs[0]["lens"] == "inference" and runs[0]["dimensions"]["model"] == "Llama 3.1 8B"
    )
    shown = json.loads(run_wb("--store", store, "show", "1", "--json").stdout)
    assert shown["phases"]["queue_ms"]["count"] == 4
    assert shown["dimensions"]["model"] == {"value": "Llama 3.1 8B", "source": "declared"}


def test_file_names_from_a_directory_print_without_control_characters(tmp_path, wb_env):
    d = tmp_path / "caps"
    d.mkdir()
    write_json(d / "evil\x1b[2Jname.json", inference_capture(2))
    out = run_wb("--store", f"sqlite:///{tmp_path / 'e.sqlite'}", "import", str(d))
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout and "evil\\x1b[2Jname.json -> run 1" in out.stdout
