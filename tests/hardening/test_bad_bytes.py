"""Issue 45 item 7: bad bytes are one line. Invalid UTF-8 in a native capture's fields, a
mistyped or non-finite field of a `wb diagnose` input, and a full disk on a write each give
one line naming the file and the place, a non-zero exit, and nothing half-written."""

from __future__ import annotations

import errno
import json
import os
import pickle
from pathlib import Path

import pytest

from tests.declare.helpers import inference_pair, wbj
from tests.hardening.test_refusals import refused, run_count, wb

_HEAD = b'{"format":"workbench.capture/1","lens":"inference",'


@pytest.fixture
def store(tmp_path):
    return f"sqlite:///{tmp_path / 'wb.sqlite'}"


# -- invalid UTF-8 in a native capture ------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b'"label":"ab\xff\xfe","samples":[{"id":"r1","ttft_ms":1.0}]}',  # the label
        b'"label":"x","samples":[{"id":"r\xc3\x281","ttft_ms":1.0}]}',  # a known sample string
        b'"label":"x","samples":[{"id":"r1","ttft_ms":1.0,"model":"m\xed\xa0\x80"}]}',  # an extra one (a surrogate)
        b'"label":"x","samples":[{"id":"r1","ttft_ms":1.0,"m\xff":"a"}]}',  # a sample key
        b'"label":"x","dimensions":{"model":"\xff"},"samples":[{"id":"r1","ttft_ms":1.0}]}',  # a dimension
    ],
    ids=["label", "sample-string", "extra-string", "sample-key", "dimension"],
)
def test_invalid_utf8_in_a_native_capture_is_one_line_with_the_byte(capsys, tmp_path, store, body):
    path = tmp_path / "bad.json"
    data = _HEAD + body
    path.write_bytes(data)
    line = refused(capsys, "--store", store, "import", str(path))
    assert str(path) in line and "is not UTF-8 text" in line
    bad = next(i for i, b in enumerate(data) if b >= 0x80)  # the first byte of the bad sequence
    assert f"byte {bad}:" in line, line
    assert run_count(capsys, store) == 0


# -- wb diagnose: one-field faults ----------------------------------------------------------


def _entry(**over: object) -> dict[str, object]:
    e: dict[str, object] = {
        "process_group": ["0", "default"],
        "collective_seq_id": 1,
        "profiling_name": "nccl:all_reduce",
        "input_sizes": [[4]],
        "output_sizes": [[4]],
        "input_dtypes": ["Float"],
        "output_dtypes": ["Float"],
        "state": "scheduled",
        "time_created_ns": 1,
    }
    e.update(over)
    return e


def _dumps(folder: Path, **over: object) -> Path:
    folder.mkdir()
    for rank, entry in ((0, _entry(**over)), (1, _entry())):
        doc = {
            "version": "2.4",
            "rank": rank,
            "pg_config": {"0": {"desc": "default", "ranks": "[0, 1]"}},
            "pg_status": {},
            "entries": [entry],
        }
        (folder / f"_dump_{rank}").write_bytes(pickle.dumps(doc, protocol=2))
    return folder


@pytest.mark.parametrize(
    ("field", "value", "place"),
    [
        ("input_sizes", 1.5, "entries[0].input_sizes"),
        ("input_sizes", [[float("nan")]], "entries[0].input_sizes"),
        ("output_sizes", [["4"]], "entries[0].output_sizes"),
        ("input_dtypes", [{"a": 1}], "entries[0].input_dtypes"),
        ("input_dtypes", {"a": 1}, "entries[0].input_dtypes"),
        ("collective_seq_id", True, "entries[0]"),
    ],
)
def test_a_mistyped_flight_recorder_field_is_one_line(capsys, tmp_path, field, value, place):
    folder = _dumps(tmp_path / "dumps", **{field: value})
    line = refused(capsys, "diagnose", str(folder))
    assert f"{folder / '_dump_0'}: {place}:" in line, line


def test_a_creation_time_no_clock_holds_is_unknown(capsys, tmp_path):
    for name, value in (("inf", float("inf")), ("huge", 10**400)):
        rc, _out, err = wb(capsys, "diagnose", str(_dumps(tmp_path / name, time_created_ns=value)))
        assert rc == 0, err


@pytest.mark.parametrize("digits", [17, 401])
def test_a_torchrun_error_file_timestamp_past_any_date_is_one_line(capsys, tmp_path, digits):
    folder = tmp_path / "attempt_0" / "3"
    folder.mkdir(parents=True)
    doc = {"message": {"message": "RuntimeError: boom", "extraInfo": {"py_callstack": "x", "timestamp": "1" * digits}}}
    (folder / "error.json").write_text(json.dumps(doc))
    line = refused(capsys, "diagnose", str(tmp_path))
    assert "error.json: message.extraInfo.timestamp:" in line and "not epoch seconds" in line, line


def test_a_torchrun_error_file_timestamp_of_today_still_reads(capsys, tmp_path):
    folder = tmp_path / "attempt_0" / "3"
    folder.mkdir(parents=True)
    doc = {"message": {"message": "RuntimeError: boom", "extraInfo": {"py_callstack": "x", "timestamp": "1772452802"}}}
    (folder / "error.json").write_text(json.dumps(doc))
    rc, out, err = wb(capsys, "diagnose", str(tmp_path))
    assert rc == 0 and "2026-03-02" in out, (err, out)


# -- a full disk ------------------------------------------------------------------------------


class _FullDisk:
    """A file object that takes half of what it is given, then says the disk is full."""

    def __init__(self, fh):
        self._fh = fh

    def write(self, data: bytes) -> int:
        self._fh.write(data[: len(data) // 2])
        self._fh.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


def test_bundle_export_onto_a_full_disk_is_one_line_and_leaves_nothing(capsys, tmp_path, monkeypatch, store):
    from workbench import outputs

    wb(capsys, "--store", store, "import", *map(str, inference_pair(tmp_path)))
    wbj(capsys, "--store", store, "investigate", "new", "--lens", "inference", "--question", "q?")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "b.json"
    real_fdopen = os.fdopen
    monkeypatch.setattr(outputs.os, "fdopen", lambda fd, mode: _FullDisk(real_fdopen(fd, mode)))
    rc, _out, err = wb(capsys, "--store", store, "bundle", "export", "1", "-o", str(target))
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 1 and len(lines) == 1, err
    assert lines[0] == f"wb: error: {target}: cannot be written (No space left on device); nothing was written"
    assert list(out_dir.iterdir()) == []  # neither the bundle nor the temporary file


def test_bundle_export_over_an_old_bundle_onto_a_full_disk_keeps_the_old_one(tmp_path, monkeypatch):
    from workbench import outputs
    from workbench.errors import WriteFailed

    target = tmp_path / "b.json"
    target.write_text("old")
    real_fdopen = os.fdopen
    monkeypatch.setattr(outputs.os, "fdopen", lambda fd, mode: _FullDisk(real_fdopen(fd, mode)))
    with pytest.raises(WriteFailed, match="No space left on device"):
        outputs.write_atomically(target, b"new" * 1000)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["b.json"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_standard_output_onto_a_full_disk_is_one_line(tmp_path, store, json_flag):
    import subprocess
    import sys

    from tests.hardening.conftest import REPO
    from tests.hardening.inputs import native_capture

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("WB_DEBUG", None)
    wb_cmd = [sys.executable, "-m", "workbench", "--store", store]
    subprocess.run(
        [*wb_cmd, "import", str(native_capture(tmp_path / "a.json"))], env=env, check=True, capture_output=True
    )
    with open("/dev/full", "w") as full:
        proc = subprocess.run([*wb_cmd, "runs", *json_flag], env=env, stdout=full, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == "wb: error: standard output: cannot be written (No space left on device)\n"


@pytest.mark.parametrize("target", ["/dev/full", "/dev/null"])
def test_bundle_export_onto_a_device_is_refused_and_replaces_nothing(tmp_path, target):
    import stat

    from workbench import outputs
    from workbench.errors import WriteFailed

    if not Path(target).exists():
        pytest.skip(f"no {target}")
    before = os.stat(target)
    with pytest.raises(WriteFailed, match="is not a regular file"):
        outputs.write_atomically(Path(target), b"{}")
    after = os.stat(target)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert not list(Path(target).parent.glob(f".{Path(target).name}.*.tmp"))
