"""Items 8-11 and 13 of issue 16: every hostile input is one clear line (exit 2), or a
correct result; nothing half-written; strings shown with invisible characters escaped."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.hardening import inputs
from tests.hardening.conftest import REPO


def wb(capsys, *args: str) -> tuple[int, str, str]:
    """``wb ARGS`` in process: (exit code, stdout, stderr)."""
    from workbench.cli import main

    with pytest.raises(SystemExit) as exited:
        main(list(args))
        raise SystemExit(0)
    out = capsys.readouterr()
    return int(exited.value.code or 0), out.out, out.err


def refused(capsys, *args: str) -> str:
    rc, _out, err = wb(capsys, *args)
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2, (rc, err)
    assert len(lines) == 1 and lines[0].startswith("wb: error: ") and "internal error" not in err, err
    return lines[0]


@pytest.fixture
def store(tmp_path):
    return f"sqlite:///{tmp_path / 'wb.sqlite'}"


def run_count(capsys, store: str) -> int:
    rc, out, err = wb(capsys, "--store", store, "runs", "--json")
    assert rc == 0, err
    doc = json.loads(out)
    return len(doc if isinstance(doc, list) else doc.get("runs", []))


# -- item 8: infinity ---------------------------------------------------------------------


def test_infinity_in_a_sample_is_refused(capsys, tmp_path, store):
    line = refused(capsys, "--store", store, "import", str(inputs.infinity_sample(tmp_path / "inf.json")))
    assert "samples[0].ttft_ms" in line and "must be finite" in line
    assert run_count(capsys, store) == 0


def test_infinity_in_an_extra_field_is_refused(capsys, tmp_path, store):
    path = tmp_path / "inf.json"
    path.write_text(inputs.NATIVE_HEAD + '"samples":[{"speed":1e400}]}')
    assert "samples[0].speed" in refused(capsys, "--store", store, "import", str(path))


# -- item 9: internal errors become one line ------------------------------------------------


def test_arrays_nested_100k_deep_in_a_sample(capsys, tmp_path, store):
    line = refused(capsys, "--store", store, "import", str(inputs.deep_sample(tmp_path / "deep.json", 100_000)))
    assert "samples[0]" in line and "nested deeper than 64 levels" in line


def test_arrays_nested_past_the_limit_but_under_recursion(capsys, tmp_path, store):
    line = refused(capsys, "--store", store, "import", str(inputs.deep_sample(tmp_path / "deep.json", 100)))
    assert "samples[0].x[0]" in line and "nested deeper than 64 levels" in line


def test_integer_of_5000_digits_in_a_capture(capsys, tmp_path, store):
    line = refused(capsys, "--store", store, "import", str(inputs.long_integer(tmp_path / "big.json", 5_000)))
    assert "big.json" in line and "more digits than 4,300" in line


def test_integer_of_5000_digits_in_a_bundle(capsys, tmp_path):
    line = refused(capsys, "evidence", "verify", str(inputs.bundle_long_integer(tmp_path / "bundle.json", 5_000)))
    assert "bundle.json" in line and "outside ±(2^53−1)" in line


def test_integer_of_5000_digits_in_a_dump(capsys, tmp_path):
    line = refused(capsys, "diagnose", str(inputs.dump_long_integer(tmp_path / "_dump_0", 5_000)))
    assert "_dump_0" in line


def test_integer_of_5000_digits_in_a_pickle(capsys, tmp_path):
    import pickle

    path = tmp_path / "_dump_1"
    path.write_bytes(pickle.dumps({"version": "2.4", "pg_config": {}, "rank": 10**5000, "entries": []}, protocol=2))
    line = refused(capsys, "diagnose", str(path))
    assert "_dump_1" in line and "4,300 digits" in line


def test_deep_flight_recorder_json(capsys, tmp_path):
    line = refused(capsys, "diagnose", str(inputs.dump_deep_json(tmp_path / "_dump_0", 100_000)))
    assert "_dump_0" in line and "nested deeper" in line


def test_lone_surrogate_in_a_label(capsys, tmp_path, store):
    line = refused(capsys, "--store", store, "import", str(inputs.lone_surrogate_label(tmp_path / "s.json")))
    assert "label" in line and "lone surrogate" in line
    assert run_count(capsys, store) == 0


def test_lone_surrogate_in_a_sample_string(capsys, tmp_path, store):
    path = tmp_path / "s.json"
    path.write_text(inputs.NATIVE_HEAD + '"samples":[{"id":"a"},{"id":"b\\udc00"}]}')
    assert "samples[1].id" in refused(capsys, "--store", store, "import", str(path))


def test_kineto_trace_events_not_an_array(capsys, tmp_path, store):
    line = refused(capsys, "--store", store, "import", str(inputs.kineto_events_object(tmp_path / "t.json")))
    assert "traceEvents must be an array of events, got an object" in line and "trailer" not in line


@pytest.mark.store
def test_import_into_a_read_only_store(capsys, tmp_path, store_url):
    from store import open_store

    open_store(store_url).ensure_exists().close()
    if store_url.startswith("sqlite"):
        path = store_url.split("sqlite:///", 1)[1]
        read_only = f"sqlite:///file:{path}?mode=ro&uri=true"
    else:
        read_only = store_url + "?options=-c%20default_transaction_read_only%3Don"
    capture = inputs.native_capture(tmp_path / "ok.json")
    line = refused(capsys, "--store", read_only, "import", str(capture))
    assert "read-only" in line and "nothing was written" in line
    rc, out, err = wb(capsys, "--store", read_only, "runs", "--json")
    assert rc == 0, err


def test_cli_maps_stray_input_faults_to_one_line(capsys, monkeypatch):
    """The net under the readers: these exception classes are input faults, not bugs."""

    def raising(exc):
        def run(*_args, **_kwargs):
            raise exc

        return run

    target = "workbench.cli.commands.runs.command.callback"
    for exc, words in (
        (RecursionError("maximum recursion depth exceeded"), "nested too deeply"),
        (ValueError("Exceeds the limit (4300 digits) for integer string conversion"), "4,300 digits"),
        (UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"), "lone surrogate"),
    ):
        monkeypatch.setattr(target, raising(exc))
        assert words in refused(capsys, "runs")
    monkeypatch.setattr(target, raising(ValueError("a bug")))  # any other ValueError is still a bug
    rc, _out, err = wb(capsys, "runs")
    assert rc == 1 and "internal error" in err


# -- item 10: hangs ------------------------------------------------------------------------


def _wb_with_timeout(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_symlink_to_dev_zero_and_dev_urandom_are_refused(tmp_path, store):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    for path, kind in ((fifo, "a FIFO"), (zero, "a character device"), ("/dev/urandom", "a character device")):
        result = _wb_with_timeout("--store", store, "import", str(path))  # a hang fails by timeout
        assert result.returncode == 2, result.stderr
        assert f"is not a regular file ({kind})" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_diagnose_refuses_a_fifo(tmp_path):
    fifo = tmp_path / "rank0.log"
    os.mkfifo(fifo)
    result = _wb_with_timeout("diagnose", str(fifo))
    assert result.returncode == 2 and "not a regular file" in result.stderr


# -- item 11: OTLP wrong types --------------------------------------------------------------


@pytest.mark.parametrize(
    "value, words",
    [
        ('{"doubleValue":"1e999"}', "not a finite number"),
        ('{"doubleValue":1' + "0" * 400 + "}", "not a finite number"),  # an integer past a double's range
        ('{"doubleValue":"fast"}', "must be a number"),
        ('{"stringValue":"fast"}', "a latency must be a number, got a string"),
        ('{"intValue":"nope"}', "must be a decimal integer"),
        ('{"intValue":"99999999999999999999"}', "outside int64"),
        ("[1]", "must be an object"),
    ],
)
def test_otlp_wrong_types_are_bad_input(capsys, tmp_path, store, value, words):
    line = refused(capsys, "--store", store, "import", str(inputs.otlp_span(tmp_path / "spans.json", value)))
    assert "spans[0].attributes['gen_ai.latency.e2e']" in line and words in line


def test_otlp_good_values_still_import(capsys, tmp_path, store):
    for i, value in enumerate(('{"doubleValue":0.5}', '{"doubleValue":"0.5"}', '{"intValue":"1"}')):
        rc, _out, err = wb(
            capsys, "--store", store, "import", str(inputs.otlp_span(tmp_path / f"spans{i}.json", value))
        )
        assert rc == 0, err


def test_otlp_structure_of_wrong_type(capsys, tmp_path, store):
    path = tmp_path / "spans.json"
    path.write_text('{"resourceSpans":[{"scopeSpans":{"spans":[]}}]}')
    assert "'scopeSpans' must be an array" in refused(capsys, "--store", store, "import", str(path))


# -- item 13: display and symlinks ---------------------------------------------------------


def test_bidi_and_zero_width_characters_shown_as_escapes(capsys, tmp_path, store):
    label = "run\u202eexe.txt\u200bA"
    rc, _out, err = wb(capsys, "--store", store, "import", str(inputs.native_capture(tmp_path / "b.json", label=label)))
    assert rc == 0, err
    rc, out, _err = wb(capsys, "--store", store, "runs")
    assert rc == 0 and "\u202e" not in out and "\u200b" not in out and "run\\u202e" in out
    rc, out, _err = wb(capsys, "--store", store, "show", "1")
    assert rc == 0 and "\u202e" not in out and "\u200b" not in out
    assert "run\\u202eexe.txt\\u200bA" in out
    rc, out, _err = wb(capsys, "--store", store, "runs", "--json")
    assert json.loads(out)  # JSON keeps the exact text for programs


def test_textsafe_escapes_invisible_characters():
    from workbench.textsafe import clean, markup_safe

    assert clean("a\u202eb\u2066c\u200bd\ufeffe\u2028f\ud800") == "a\\u202eb\\u2066c\\u200bd\\ufeffe\\u2028f\\ud800"
    assert clean("x\x1by\tz") == "x\\x1by\\tz"
    assert markup_safe("[bold]\u202e") == "\\[bold]\\u202e"
    assert clean("naïve café 日本") == "naïve café 日本"


def test_directory_import_does_not_follow_symlinks_out(capsys, tmp_path, store):
    folder = tmp_path / "caps"
    folder.mkdir()
    inputs.native_capture(folder / "ok.json")
    outside = inputs.native_capture(tmp_path / "outside.json", label="outside")
    (folder / "link.json").symlink_to(outside)
    (folder / "zero.json").symlink_to("/dev/zero")
    (folder / "dir").symlink_to(tmp_path)
    os.mkfifo(folder / "pipe.json")
    rc, out, err = wb(capsys, "--store", store, "import", str(folder), "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert [item["file"] for item in doc["imported"]] == [str(folder / "ok.json")]
    reasons = {os.path.basename(item["file"]): item["reason"] for item in doc["skipped"]}
    assert "a symlink out of" in reasons["link.json"] and "not followed" in reasons["link.json"]
    assert "a symlink out of" in reasons["zero.json"]
    assert "not a regular file" in reasons["pipe.json"]
    assert "not followed" in reasons["dir"]


def test_directory_import_keeps_symlinks_inside(capsys, tmp_path, store):
    folder = tmp_path / "caps"
    (folder / "a").mkdir(parents=True)
    inputs.native_capture(folder / "a" / "ok.json")
    (folder / "alias.json").symlink_to(folder / "a" / "ok.json")
    rc, out, err = wb(capsys, "--store", store, "import", str(folder), "--json")
    assert rc == 0, err
    assert len(json.loads(out)["imported"]) == 1  # the alias is the same content, skipped as such


def test_diagnose_does_not_follow_symlinks_out(capsys, tmp_path):
    folder = tmp_path / "incident"
    folder.mkdir()
    (folder / "rank0.log").write_text("2026-11-29T10:00:00Z NCCL WARN watchdog timeout\n")
    secret = tmp_path / "secret.log"
    secret.write_text("2026-11-29T09:00:00Z RuntimeError: CUDA error: an illegal memory access was encountered\n")
    (folder / "rank1.log").symlink_to(secret)
    rc, out, err = wb(capsys, "diagnose", str(folder), "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert str(secret) not in json.dumps(doc["inputs"]["files"]) and "illegal memory access" not in out
    assert any("rank1.log" in item["file"] and "not followed" in item["why"] for item in doc["inputs"]["skipped"])


def test_every_importer_hands_the_store_valid_text(capsys, tmp_path, store):
    """The guard in ingest covers importers without their own check (a vLLM model id here)."""
    path = tmp_path / "vllm.json"
    path.write_text('{"backend":"vllm","model_id":"m\\ud800","request_throughput":1.0,"ttfts":[0.1]}')
    line = refused(capsys, "--store", store, "import", str(path))
    assert "vllm.json" in line and "lone surrogate" in line
    assert run_count(capsys, store) == 0
