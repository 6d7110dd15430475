"""The native importer's one reader: msgspec runs of whole samples, the same columns wherever
the runs are cut, and every fault one line naming the sample (issue 48 item 2).

Each good document is read in one run and in runs of a few samples (cut at many places,
inside strings that look like sample boundaries too); the records must be identical and
hold the document's values. Each bad one is refused with its message and place.
"""

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

import workbench.importers.native as native
from tests.foundation.helpers import inference_capture, write_json
from workbench.errors import BadInput
from workbench.formats import json_object

LENSES = native.SAMPLE_FIELDS


def _read(path: Path, monkeypatch, run_bytes: int = 1 << 20) -> object:
    monkeypatch.setattr(native, "RUN_BYTES", run_bytes)
    return native.read_capture(path)


def _assert_same(a, b) -> None:
    x, y = a.tables["samples"], b.tables["samples"]
    assert list(x) == list(y)  # column order is insertion order in the store
    for key in x:
        assert x[key].dtype == y[key].dtype, key
        assert np.array_equal(x[key], y[key], equal_nan=x[key].dtype.kind == "f"), key
    for attr in ("lens", "label", "meta", "dimensions", "window", "work", "quality"):
        assert getattr(a, attr) == getattr(b, attr), attr


def _assert_holds(record, doc: dict) -> None:
    """The known columns hold the document's values: numbers as floats (NaN for a missing
    key or null), text as text ("" for unknown), booleans as 1 and 0."""
    samples = record.tables["samples"]
    for key, kind in LENSES[doc["lens"]].items():
        if key not in samples or kind == "timestamp":
            continue
        values = [s.get(key) for s in doc["samples"]]
        if kind == "str":
            assert samples[key].tolist() == ["" if v is None else str(v) for v in values], key
        else:
            want = np.array([math.nan if v is None else float(v) for v in values])
            assert np.array_equal(samples[key], want, equal_nan=True), key


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
    for i in range(0, 100, 3):
        doc["samples"][i]["id"] = 'a "},{" inside' if i % 2 else "a }, { and ] too"  # sample boundaries in strings
    docs["brace_in_string"] = doc
    docs["empty"] = inference_capture(0)
    doc = inference_capture(300)
    doc["samples"][4]["gpu_temp_c"] = 61  # an extra key in one sample only
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
                "gpu `temp` - at `$[3]": 61,  # a key that looks like msgspec's own message
            }
        )
    docs["extra_keys"] = doc
    doc = inference_capture(300)
    for i in range(260, 300):
        doc["samples"][i]["late_extra"] = i  # an extra key that first appears in a late run
    docs["late_extra"] = doc
    doc = inference_capture(100)
    doc["quality"] = doc.pop("quality")  # a member after the samples
    doc["host_notes"] = {"a": [{"b": {}}, {}], "c": "},"}  # after them, with item-like bytes
    docs["trailer"] = doc
    doc = inference_capture(100)
    docs["lens_after_samples"] = {"samples": doc.pop("samples"), **doc}
    doc = inference_capture(40)
    doc["samples"][7]["prompt_tokens"] = 2.0**53  # a float as large is allowed (an integer is not)
    docs["big_float"] = doc
    return docs


@pytest.mark.parametrize("name", list(_good_docs()))
def test_runs_cut_anywhere_read_the_same_columns(name, tmp_path, monkeypatch):
    doc = _good_docs()[name]
    path = write_json(tmp_path / f"{name}.json", doc)
    whole = _read(path, monkeypatch)
    _assert_holds(whole, doc)
    for run_bytes in (2048, 300, 97):  # many runs, cut at many places
        _assert_same(whole, _read(path, monkeypatch, run_bytes))


def test_gzip_and_blank_layouts_read_the_same(tmp_path, monkeypatch):
    doc = inference_capture(200)
    doc["samples"][3]["x"] = {"nested": [1, {"a": "}, {"}]}
    plain = _read(write_json(tmp_path / "a.json", doc), monkeypatch)
    for path in (write_json(tmp_path / "a.json.gz", doc, gz=True), tmp_path / "p.json", tmp_path / "c.json"):
        if path.name == "p.json":
            path.write_text(json.dumps(doc, indent=4))
        elif path.name == "c.json":
            path.write_text("\ufeff" + json.dumps(doc, separators=(",", ":")))  # compact, with a byte-order mark
        _assert_same(plain, _read(path, monkeypatch, 4096))


def _faults() -> dict[str, tuple[dict, str]]:
    cases = {}
    doc = inference_capture(20)
    doc["samples"][4]["start_ms"] = -3  # an extra key named as a duration: checked as one
    cases["negative_extra_duration"] = (doc, "samples[4].start_ms: negative duration -3")
    doc = inference_capture(20)
    doc["samples"][7]["queue_ms"] = 2**53
    cases["big_int"] = (doc, "samples[7].queue_ms: integer 9007199254740992 is too large")
    doc = inference_capture(20)
    doc["samples"][7]["queue_ms"] = -1.0
    cases["negative"] = (doc, "samples[7].queue_ms: negative duration -1.0")
    doc = inference_capture(20)
    doc["samples"][7]["ok"] = "yes"
    cases["wrong_type"] = (doc, "samples[7].ok: expected true or false, got a string")
    doc = inference_capture(20)
    doc["samples"][7]["id"] = 1.5
    cases["float_id"] = (doc, "samples[7].id: expected a string, got a number")
    doc = inference_capture(20)
    doc["samples"][7] = [1, 2]
    cases["not_an_object"] = (doc, "samples[7]: expected an object, got an array")
    doc = inference_capture(20)
    doc["samples"][9]["ttft_ms"] = 2e9
    cases["latency_bound"] = (doc, "samples[9].ttft_ms: latency 2000000000.0 ms is beyond")
    doc = inference_capture(20)
    doc["samples"] = {"a": 1}
    cases["samples_not_array"] = (doc, "samples: expected an array, got an object")
    doc = inference_capture(20)
    samples = doc.pop("samples")
    samples[11]["prompt_tokens"] = "many"
    cases["lens_after_bad_sample"] = ({"samples": samples, **doc}, "samples[11].prompt_tokens: expected a number")
    return cases


@pytest.mark.parametrize("name", list(_faults()))
def test_a_bad_sample_is_one_line_naming_it(name, tmp_path, monkeypatch):
    doc, expect = _faults()[name]
    path = write_json(tmp_path / f"{name}.json", doc)
    for run_bytes in (1 << 20, 256):
        with pytest.raises(BadInput) as err:
            _read(path, monkeypatch, run_bytes)
        assert str(err.value).startswith(f"{path}: ") and expect in str(err.value), str(err.value)


def test_bad_json_is_one_line_with_its_place(tmp_path, monkeypatch):
    good = json.dumps(inference_capture(400)).encode()
    cases = {
        "truncated.json": (good[: len(good) // 2], "truncated JSON"),
        "truncated.json.gz": (gzip.compress(good)[:-100], "corrupt or truncated file"),
        "nan.json": (good.replace(b'"queue_ms": 45.0', b'"queue_ms": NaN', 1), "samples[5] (line 1, char "),
        "after.json": (good + b" {}", "unexpected data after the end of the JSON object"),
        "surrogate.json": (good.replace(b'"r-0003"', b'"\\ud800"', 1), "samples[3].id: string contains a lone"),
        "bad_byte.json": (good.replace(b'"r-0003"', b'"r-\xff003"', 1), "is not UTF-8 text"),
        "missing_comma.json": (good.replace(b'}, {"id": "r-0009"', b'} {"id": "r-0009"', 1), "samples[8] (line 1"),
        "duplicate.json": (good[:-1] + b', "label": "again"}', "duplicate key 'label'"),
    }
    for name, (data, expect) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        for run_bytes in (1 << 20, 1000):
            with pytest.raises(BadInput) as err:
                _read(path, monkeypatch, run_bytes)
            assert expect in str(err.value), (name, str(err.value))
    nan = (tmp_path / "nan.json").read_bytes()
    with pytest.raises(BadInput, match=f"char {nan.index(b'NaN')}\\): NaN is not allowed"):
        _read(tmp_path / "nan.json", monkeypatch, 1000)


def test_a_sample_without_an_end_is_refused_at_the_value_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(json_object, "MAX_VALUE_BYTES", 1 << 20)
    path = tmp_path / "endless.json"
    path.write_bytes(
        b'{"format": "workbench.capture/1", "lens": "inference", "samples": [{"id": "' + b"x" * 8_000_000 + b'"}]}'
    )
    with pytest.raises(BadInput, match=r"samples\[0\].*one JSON value is larger than 1 MiB"):
        _read(path, monkeypatch, 4096)


def _typed_guesses() -> dict[str, dict]:
    """Extras whose first run holds only numbers (or booleans, or strings): typed by the
    decoder from the next run on, and what a later run that breaks the guess must do."""
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
        sample["counter"] = i if i < 3900 else 2**60  # a large integer: kept as a float in an extra key
        sample["delta"] = -1.5 * i  # negative numbers are fine in an extra that is not a duration
    docs["guess_large"] = doc
    return docs


@pytest.mark.parametrize("name", list(_typed_guesses()))
def test_extra_keys_typed_from_a_guess_read_as_untyped_ones(name, tmp_path, monkeypatch):
    path = write_json(tmp_path / f"{name}.json", _typed_guesses()[name])
    decoders = []
    real = native._samples_decoder

    def recording(lens, extras=()):
        decoders.append(dict(extras))
        return real(lens, extras)

    monkeypatch.setattr(native, "_samples_decoder", recording)
    guessed = _read(path, monkeypatch, 2048)
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
    if name == "guesses_miss":
        assert typed == {"slot": "number", "flag": "bool", "label": "text"}
        assert decoders[-1]["slot"] == decoders[-1]["flag"] == decoders[-1]["label"] == "any"  # untyped once missed
    if name == "guess_large":
        assert guessed.tables["samples"]["counter"][-1] == 2.0**60
    # A column typed in some runs and untyped in others reads as one never typed, however the runs fall.
    monkeypatch.setattr(native, "_fit", lambda key, values: "any")
    _assert_same(guessed, _read(path, monkeypatch, 2048))
    _assert_same(guessed, _read(path, monkeypatch, 1 << 20))


def _mixed_kinds(n: int) -> dict:
    """Extra keys whose values change kind, within a run and across runs."""
    doc = inference_capture(n)
    for i, sample in enumerate(doc["samples"]):
        sample["tag"] = f"t{i}" if i % 5 else i  # text and numbers in every stretch
        sample["phase"] = 3 if i < n // 2 else "late"  # numbers, then text: joined where the runs fall
        sample["hit"] = i % 2 == 0 if i % 3 else 2.5  # booleans among numbers: a numeric column
        sample["shape"] = [i, 1] if i % 4 == 0 else ("none" if i % 4 == 1 else None)  # lists, text, unknown
    return doc


def test_extra_keys_of_mixed_kinds_read_the_same_wherever_the_runs_fall(tmp_path, monkeypatch):
    path = write_json(tmp_path / "mixed.json", _mixed_kinds(600))
    whole = _read(path, monkeypatch)
    for run_bytes in (2048, 4096, 331):
        _assert_same(whole, _read(path, monkeypatch, run_bytes))
    samples = whole.tables["samples"]
    # The rule, stated once: several kinds make text, a number as its float repr, a string as
    # it is, a list as JSON, an unknown as ""; booleans among numbers count 1 and 0.
    assert list(samples["tag"][:6]) == ["0.0", "t1", "t2", "t3", "t4", "5.0"]
    assert samples["phase"][0] == "3.0" and samples["phase"][-1] == "late"
    assert samples["hit"].dtype == np.float64 and list(samples["hit"][:4]) == [2.5, 0.0, 1.0, 2.5]
    assert list(samples["shape"][:4]) == ["[0, 1]", "none", "", ""]


def test_an_extra_number_past_a_doubles_range_is_refused_with_its_place(tmp_path, monkeypatch):
    for name in ("huge", "mixed", "typed"):
        doc = inference_capture(600 if name == "typed" else 20)
        for i, sample in enumerate(doc["samples"]):
            if name == "typed":
                sample["far"] = float(i)  # typed as a number from the second run on
        far = 500 if name == "typed" else 7
        doc["samples"][far]["far"] = 10**400
        if name == "mixed":
            doc["samples"][3]["far"] = "text"  # the same number in a column of text
        path = write_json(tmp_path / f"{name}.json", doc)
        for run_bytes in (1 << 20, 2048):
            with pytest.raises(BadInput) as err:
                _read(path, monkeypatch, run_bytes)
            assert f"samples[{far}].far" in str(err.value) and "out of range" in str(err.value), str(err.value)


def test_a_missed_guess_on_a_duration_names_the_sample(tmp_path, monkeypatch):
    doc = inference_capture(4000)
    for i, sample in enumerate(doc["samples"]):
        sample["start_s"] = 10.0 + i if i != 3500 else -4.0  # typed as a number, then a negative duration
    path = write_json(tmp_path / "neg.json", doc)
    for run_bytes in (2048, 1 << 20):
        with pytest.raises(BadInput, match=r"samples\[3500\].start_s: negative duration -4.0"):
            _read(path, monkeypatch, run_bytes)


def test_text_columns_of_equal_width_keep_their_characters(tmp_path, monkeypatch):
    doc = inference_capture(60)
    for i, sample in enumerate(doc["samples"]):
        sample["id"] = ["r-é1", "r-😀2", "abcd", "x\x00yz"][i % 4]  # four characters each, not all ASCII
        sample["request_id"] = f"q{i:03d}" if i % 7 else "q-lo"  # an extra text key, equal widths
    path = write_json(tmp_path / "wide.json", doc)
    samples = _read(path, monkeypatch).tables["samples"]
    _assert_same(_read(path, monkeypatch), _read(path, monkeypatch, 300))
    assert samples["id"].dtype == np.dtype("<U4") and samples["id"].flags.writeable
    assert list(samples["id"][:4]) == ["r-é1", "r-😀2", "abcd", "x\x00yz"]
    assert samples["request_id"].tolist()[:8] == ["q-lo", "q001", "q002", "q003", "q004", "q005", "q006", "q-lo"]


def test_the_file_is_read_once(tmp_path, monkeypatch):
    """No second pass: the bytes read from the file are the file's bytes, once."""
    doc = inference_capture(3000)
    for i, sample in enumerate(doc["samples"]):
        sample["note"] = "late" if i > 2000 else None  # a key the decoder learns late
    doc["samples"][2500]["tags"] = [1, "x"]
    path = write_json(tmp_path / "once.json", doc)
    read = []
    monkeypatch.setattr(native.ImportOptions, "progress", None, raising=False)
    real = native.open_binary

    def counting(p, on_progress=None):
        binary = real(p, on_progress)
        original = binary.read

        def read_counted(n=-1):
            data = original(n)
            read.append(len(data))
            return data

        binary.read = read_counted
        return binary

    monkeypatch.setattr(native, "open_binary", counting)
    _read(path, monkeypatch, 2048)
    assert sum(read) == path.stat().st_size
