"""The native importer's msgspec fast path: the same run as the stream reader, or it steps aside.

Every document is read twice, with the fast path and with the stream reader only; the
records must be identical (columns, their order and types, metadata). Inputs the fast
path does not take must fall back, and bad inputs must get the stream reader's message.
"""

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

import workbench.importers.native as native
from tests.foundation.helpers import inference_capture, write_json
from workbench.errors import BadInput


def _read(path: Path, fast: bool, monkeypatch) -> object:
    monkeypatch.setattr(native, "FAST", fast)
    return native.read_capture(path)


def _fast_took_it(path: Path) -> bool:
    return native._read_fast(path, native.ImportOptions(), None) is not None


def _assert_same(path: Path, monkeypatch) -> None:
    fast, stream = _read(path, True, monkeypatch), _read(path, False, monkeypatch)
    a, b = fast.tables["samples"], stream.tables["samples"]
    assert list(a) == list(b)  # column order is insertion order in the store
    for key in a:
        assert a[key].dtype == b[key].dtype, key
        assert np.array_equal(a[key], b[key], equal_nan=a[key].dtype.kind == "f"), key
    for attr in ("lens", "label", "meta", "dimensions", "window", "work", "quality"):
        assert getattr(fast, attr) == getattr(stream, attr), attr


def _training(n: int) -> dict:
    return {
        "format": "workbench.capture/1",
        "lens": "training",
        "label": "t",
        "samples": [
            {
                "step": i,
                "rank": 0,
                "step_ms": 100.0 + i,
                "compute_ms": 80.5,
                "loss": 2.0 - i / 100,
                "samples": 32,
                "tokens": 4096,
            }
            for i in range(n)
        ],
    }


def _fleet(n: int) -> dict:
    return {
        "format": "workbench.capture/1",
        "lens": "fleet",
        "label": "f",
        "samples": [
            {
                "job": f"j{i}",
                "gpus": 8,
                "submit": "2026-11-29T10:00:00Z",
                "start": 1764410400 + i,
                "end": 1764414000.5 + i,
                "state": "COMPLETED",
            }
            for i in range(n)
        ],
    }


def _good_docs() -> dict[str, dict]:
    docs = {"plain": inference_capture(300), "training": _training(200), "fleet": _fleet(50)}
    doc = inference_capture(300)
    for i in range(0, 300, 7):
        del doc["samples"][i]["queue_ms"]
    for i in range(0, 300, 11):
        doc["samples"][i]["ttft_ms"] = None
    doc["samples"][5]["id"] = 12345  # a number where a string is expected: kept as its text
    docs["holes"] = doc
    doc = inference_capture(300)
    for i in range(250, 300):
        doc["samples"][i]["e2e_ms"] = 300.0 + i  # a key that first appears late
    docs["late_key"] = doc
    doc = inference_capture(100)
    doc["samples"] = [dict(reversed(list(s.items()))) for s in doc["samples"]]  # keys in another order
    docs["reordered"] = doc
    doc = inference_capture(100)
    doc["samples"][3]["id"] = 'a "},{" inside'  # looks like a sample boundary inside a string
    docs["brace_in_string"] = doc
    doc = inference_capture(0)
    docs["empty"] = doc
    # Extra sample keys (issue 29 item 6): decoded on the fast path into extra columns.
    doc = inference_capture(300)
    doc["samples"][4]["gpu_temp_c"] = 61  # one sample only
    docs["unknown_key"] = doc
    doc = inference_capture(300)
    for i, sample in enumerate(doc["samples"]):
        sample.update(
            {
                "request_id": f"req-{i}",
                "start_s": 1764410400.25 + i,
                "retries": i % 3,
                "cached": i % 2 == 0,
                "note": None if i % 5 else "warm",
                "tags": {"a": [1, 2]} if i % 50 == 0 else None,
                "weird key.with dots": i,
                "mixed": "x" if i % 2 else 1.5,
                "custom_ms": 2.5,
            }
        )
    docs["extra_keys"] = doc
    doc = inference_capture(300)
    for i in range(260, 300):
        doc["samples"][i]["late_extra"] = i  # an extra key that first appears in a late run
    docs["late_extra"] = doc
    doc = inference_capture(100)
    doc["quality"] = doc.pop("quality")  # a member after the samples
    docs["trailer"] = doc
    return docs


@pytest.mark.parametrize("name", list(_good_docs()))
def test_fast_path_reads_what_the_stream_reader_reads(name, tmp_path, monkeypatch):
    monkeypatch.setattr(native, "RUN_BYTES", 2048)  # many runs, cut at many places
    path = write_json(tmp_path / f"{name}.json", _good_docs()[name])
    assert _fast_took_it(path) or name == "brace_in_string"
    _assert_same(path, monkeypatch)


def test_fast_path_reads_gzip_and_blank_layouts(tmp_path, monkeypatch):
    monkeypatch.setattr(native, "RUN_BYTES", 4096)
    doc = inference_capture(200)
    gz = write_json(tmp_path / "a.json.gz", doc, gz=True)
    pretty = tmp_path / "p.json"
    pretty.write_text(json.dumps(doc, indent=4))
    for path in (gz, pretty):
        assert _fast_took_it(path)
        _assert_same(path, monkeypatch)


def _stepping_aside() -> dict[str, dict]:
    docs = {}
    doc = inference_capture(20)
    doc["samples"][4]["gpu `temp`"] = 61  # a key msgspec's message cannot name unambiguously
    docs["backtick_key"] = doc
    doc = inference_capture(20)
    doc["samples"][4]["start_ms"] = -3  # an extra duration that is negative: the stream reader refuses it
    docs["negative_extra_duration"] = doc
    doc = inference_capture(20)
    docs["lens_after_samples"] = {"samples": doc.pop("samples"), **doc}
    doc = inference_capture(20)
    doc["samples"][7]["queue_ms"] = 2**53  # an integer too large (a float as large is allowed)
    docs["big_int"] = doc
    doc = inference_capture(20)
    doc["samples"][7]["queue_ms"] = -1.0
    docs["negative"] = doc
    doc = inference_capture(20)
    doc["samples"][7]["ok"] = "yes"
    docs["wrong_type"] = doc
    doc = inference_capture(20)
    doc["samples"][7] = [1, 2]
    docs["not_an_object"] = doc
    return docs


@pytest.mark.parametrize("name", list(_stepping_aside()))
def test_fast_path_steps_aside_and_the_stream_reader_decides(name, tmp_path, monkeypatch):
    path = write_json(tmp_path / f"{name}.json", _stepping_aside()[name])
    assert not _fast_took_it(path)
    try:
        stream = _read(path, False, monkeypatch)
    except BadInput as exc:
        with pytest.raises(BadInput) as fast:
            _read(path, True, monkeypatch)
        assert str(fast.value) == str(exc)  # the same message and place
    else:
        _assert_same(path, monkeypatch)
        assert stream.sample_count == 20


def test_bad_json_gets_the_stream_readers_message(tmp_path, monkeypatch):
    good = json.dumps(inference_capture(400)).encode()
    cases = {
        "truncated.json": good[: len(good) // 2],
        "truncated.json.gz": gzip.compress(good)[:-100],
        "nan.json": good.replace(b'"queue_ms": 45.0', b'"queue_ms": NaN', 1),
        "after.json": good + b" {}",
        "surrogate.json": good.replace(b'"r-0003"', b'"\\ud800"', 1),
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        monkeypatch.setattr(native, "FAST", False)
        with pytest.raises(BadInput) as stream:
            native.read_capture(path)
        monkeypatch.setattr(native, "FAST", True)
        with pytest.raises(BadInput) as fast:
            native.read_capture(path)
        assert str(fast.value) == str(stream.value), name


def test_a_sample_without_end_is_not_read_past_the_guard(tmp_path, monkeypatch):
    monkeypatch.setattr(native, "RUN_BYTES", 1024)
    monkeypatch.setattr(native, "HEAD_CAP", 4096)
    path = tmp_path / "endless.json"
    path.write_bytes(
        b'{"format": "workbench.capture/1", "lens": "inference", "samples": [{"id": "' + b"x" * 2_000_000 + b'"}]}'
    )
    reads = []
    real = native._Guard.read

    def counting(self, n):
        data = real(self, n)
        reads.append(self.read_bytes)
        return data

    monkeypatch.setattr(native._Guard, "read", counting)
    assert not _fast_took_it(path)
    assert max(reads) < 300_000  # of 2 MB: the header scan's first 256 KiB, then refused


def _typed_guesses() -> dict[str, dict]:
    """Extras whose first run holds only numbers (or booleans): typed by the decoder from
    the next run on, and what a later run that breaks the guess must do. The first run is
    what the header scan read (256 KiB): the files are larger, so later runs follow."""
    n = 4000
    docs = {}
    doc = inference_capture(n)
    for i, sample in enumerate(doc["samples"]):
        sample.update(
            {
                "request_id": f"req-{i}",
                "start_s": 1764410400.25 + i / 8,
                "custom_2": round(i * 0.37, 2),
                "cached": i % 3 == 0,
                "late": None if i < 2000 else i,
            }
        )  # late: nulls first, no guess till a value
    docs["guesses_hold"] = doc
    doc = inference_capture(n)
    for i, sample in enumerate(doc["samples"]):
        sample["slot"] = i if i < 3000 else f"s{i}"  # numbers, then text: the guess misses late
        sample["flag"] = i % 2 == 0 if i < 3500 else 1  # booleans, then a number
        sample["label"] = f"l{i}" if i < 3700 else 7  # text, then a number
    docs["guesses_miss"] = doc
    doc = inference_capture(n)
    for i, sample in enumerate(doc["samples"]):
        sample["counter"] = i if i < 3900 else 2**60  # a large integer: kept by the stream reader as a float
        sample["delta"] = -1.5 * i  # negative numbers are fine in an extra that is not a duration
    docs["guess_large"] = doc
    return docs


@pytest.mark.parametrize("name", list(_typed_guesses()))
def test_extra_keys_typed_from_a_guess_read_as_the_stream_reader_reads(name, tmp_path, monkeypatch):
    monkeypatch.setattr(native, "RUN_BYTES", 2048)
    path = write_json(tmp_path / f"{name}.json", _typed_guesses()[name])
    decoders = []
    real = native._samples_decoder

    def recording(lens, extras=()):
        decoders.append(dict(extras))
        return real(lens, extras)

    monkeypatch.setattr(native, "_samples_decoder", recording)
    took = _fast_took_it(path)
    assert took == (name != "guess_large")  # 2^60 in a typed column: this path cannot tell it from a refused one
    assert len(decoders) > 3  # many runs
    typed = {key: kind for extras in decoders for key, kind in extras.items() if kind != "any"}
    if name == "guesses_hold":
        assert typed == {
            "start_s": "number",
            "custom_2": "number",
            "cached": "bool",
            "late": "number",
            "request_id": "text",
        }
    if name != "guesses_miss":
        _assert_same(path, monkeypatch)
        return
    assert typed == {"slot": "number", "flag": "bool", "label": "text"}
    assert (
        decoders[-1]["slot"] == decoders[-1]["flag"] == decoders[-1]["label"] == "any"
    )  # missed once: untyped from then on
    # A column of numbers in some runs and text in others reads the same however the chunks fall.
    _assert_same(path, monkeypatch)
    guessed = native.read_capture(path).tables["samples"]
    monkeypatch.setattr(native, "_fit", lambda key, values: "any")
    untyped = native.read_capture(path).tables["samples"]
    assert list(guessed) == list(untyped)
    for key in guessed:
        assert guessed[key].dtype == untyped[key].dtype, key
        assert np.array_equal(guessed[key], untyped[key], equal_nan=guessed[key].dtype.kind == "f"), key


def _mixed_kinds(n: int) -> dict:
    """Extra keys whose values change kind, within a chunk and across chunks."""
    doc = inference_capture(n)
    for i, sample in enumerate(doc["samples"]):
        sample["tag"] = f"t{i}" if i % 5 else i  # text and numbers in every stretch
        sample["phase"] = 3 if i < n // 2 else "late"  # numbers, then text: joined where the chunks fall
        sample["hit"] = i % 2 == 0 if i % 3 else 2.5  # booleans among numbers: a numeric column
        sample["shape"] = [i, 1] if i % 4 == 0 else ("none" if i % 4 == 1 else None)  # lists, text, unknown
    return doc


@pytest.mark.parametrize("run_bytes, chunk", [(2048, 100), (1 << 20, 16_384), (4096, 7)])
def test_extra_keys_of_mixed_kinds_read_the_same_wherever_the_chunks_fall(run_bytes, chunk, tmp_path, monkeypatch):
    monkeypatch.setattr(native, "RUN_BYTES", run_bytes)
    monkeypatch.setattr(native, "_CHUNK", chunk)
    n = 600
    path = write_json(tmp_path / "mixed.json", _mixed_kinds(n))
    _assert_same(path, monkeypatch)
    samples = native.read_capture(path).tables["samples"]
    # The rule, stated once: several kinds make text, a number as its float repr, a string as
    # it is, a list as JSON, an unknown as ""; booleans among numbers count 1 and 0.
    assert list(samples["tag"][:6]) == ["0.0", "t1", "t2", "t3", "t4", "5.0"]
    assert samples["phase"][0] == "3.0" and samples["phase"][-1] == "late"
    assert samples["hit"].dtype == np.float64 and list(samples["hit"][:4]) == [2.5, 0.0, 1.0, 2.5]
    assert list(samples["shape"][:4]) == ["[0, 1]", "none", "", ""]


def test_an_extra_number_past_a_doubles_range_is_refused_with_its_place(tmp_path, monkeypatch):
    for name in ("huge", "mixed"):
        doc = inference_capture(20)
        doc["samples"][7]["far"] = 10**400
        if name == "mixed":
            doc["samples"][3]["far"] = "text"  # the same number in a column of text
        path = write_json(tmp_path / f"{name}.json", doc)
        for fast in (True, False):
            with pytest.raises(BadInput) as err:
                _read(path, fast, monkeypatch)
            assert "samples[7].far" in str(err.value) and "out of range" in str(err.value), str(err.value)


def test_a_missed_guess_on_a_duration_gets_the_stream_readers_message(tmp_path, monkeypatch):
    monkeypatch.setattr(native, "RUN_BYTES", 2048)
    doc = inference_capture(4000)
    for i, sample in enumerate(doc["samples"]):
        sample["start_s"] = 10.0 + i if i != 3500 else -4.0  # typed as a number, then a negative duration
    path = write_json(tmp_path / "neg.json", doc)
    assert not _fast_took_it(path)
    monkeypatch.setattr(native, "FAST", False)
    with pytest.raises(BadInput) as stream:
        native.read_capture(path)
    monkeypatch.setattr(native, "FAST", True)
    with pytest.raises(BadInput) as fast:
        native.read_capture(path)
    assert str(fast.value) == str(stream.value)
    assert "samples[3500].start_s" in str(stream.value)


def test_text_columns_of_equal_width_read_as_the_stream_reader_reads(tmp_path, monkeypatch):
    doc = inference_capture(60)
    for i, sample in enumerate(doc["samples"]):
        sample["id"] = ["r-é1", "r-😀2", "abcd", "x\x00yz"][i % 4]  # four characters each, not all ASCII
        sample["request_id"] = f"q{i:03d}" if i % 7 else "q-lo"  # an extra text key, equal widths
    path = write_json(tmp_path / "wide.json", doc)
    assert _fast_took_it(path)
    _assert_same(path, monkeypatch)
    samples = native.read_capture(path).tables["samples"]
    assert samples["id"].dtype == np.dtype("<U4") and samples["id"].flags.writeable
    assert list(samples["id"][:3]) == ["r-é1", "r-😀2", "abcd"]
