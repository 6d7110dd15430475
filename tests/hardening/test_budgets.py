"""Issue 28 items 5 and 6: budgets that bound work, not only bytes (pickle, YAML, Nsight),
option bounds, and no untrue figure stored (Nsight int64 wrap, --wait-target, in-memory store)."""

from __future__ import annotations

import json

import pytest

from tests.hardening import inputs
from tests.hardening.conftest import one_line_refusal, wb_capped
from tests.hardening.test_refusals import refused, wb
from workbench.formats import safe_yaml
from workbench.limits import MAX_ALIKE_KEYS, KeyGuard, LimitExceeded


@pytest.fixture
def store(tmp_path):
    return f"sqlite:///{tmp_path / 'wb.sqlite'}"


# -- pickle -----------------------------------------------------------------------------


def test_a_tuple_key_two_million_deep_is_refused_not_a_segfault(tmp_path):
    result = wb_capped("diagnose", str(inputs.pickle_deep_tuple_key(tmp_path / "_dump_0", 2_000_000)))
    one_line_refusal(result, "_dump_0", "nests tuples deeper than 64 levels")


def test_keys_that_hash_alike_are_refused(tmp_path):
    result = wb_capped("diagnose", str(inputs.pickle_alike_keys(tmp_path / "_dump_0", 5_000)))
    one_line_refusal(result, "_dump_0", "hash alike", str(MAX_ALIKE_KEYS))


def test_back_references_to_one_long_string_count_as_copies(tmp_path):
    result = wb_capped("diagnose", str(inputs.pickle_string_backrefs(tmp_path / "_dump_0", 600)))
    one_line_refusal(result, "_dump_0", "more text", "256 MiB")


def test_keys_that_hash_alike_in_real_data_pass():
    guard = KeyGuard("f")
    d: dict = {}
    for key in (-1, -2, 1, 1.0, True, "a", (1, 2), 2**61 - 1, 0):  # -1 and -2 hash alike; 1, 1.0, True are one key
        guard.admit(d, key)
        d[key] = None
    with pytest.raises(LimitExceeded):
        for i in range(1, MAX_ALIKE_KEYS + 2):
            guard.admit(d, i * (2**61 - 1))
            d[i * (2**61 - 1)] = None


# -- YAML -------------------------------------------------------------------------------


def test_yaml_keys_that_hash_alike_are_refused(tmp_path):
    text = inputs.yaml_alike_keys(tmp_path / "cm.yaml", 2_000).read_text()
    with pytest.raises(ValueError, match="hash alike"):
        safe_yaml.load_all(text)


def test_yaml_ordinary_keys_still_load():
    assert safe_yaml.load_all("a: 1\nb: {-1: x, -2: y, 1: z}\n") == [{"a": 1, "b": {-1: "x", -2: "y", 1: "z"}}]


# -- Nsight -----------------------------------------------------------------------------


@pytest.mark.parametrize("expression, n", [("hex(zeroblob(n))", 10**9), ("printf('%.*c', n, 'x')", 900_000_000)])
def test_nsys_generated_columns_are_refused(tmp_path, expression, n):
    path = inputs.nsys_export(tmp_path / "report.sqlite", string_value=expression, strings=[(5, n)])
    result = wb_capped("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}", "import", str(path))
    one_line_refusal(result, "report.sqlite", "StringIds", "generated column")


def test_nsys_caps_each_value(capsys, tmp_path, store):
    path = inputs.nsys_export(tmp_path / "report.sqlite", strings=[(5, "k" * (5 << 20))])
    line = refused(capsys, "--store", store, "import", str(path))
    assert "a string or blob longer than 4 MiB" in line


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"kernels": [("abc", 2)]}, "start must be an integer, not 'abc'"),
        ({"kernels": [(None, 2)]}, "start must be an integer, not None"),
        ({"kernels": [(1e30, 2)]}, "start must be an integer, not 1e+30"),
        ({"strings": [("x", "k")]}, "StringIds.id: a string id is not an integer ('x')"),
        ({"nvtx": [(1, 5, "ProfilerStep#" + "9" * 30)]}, "is not a decimal of at most 18 digits"),
        ({"nvtx": [("abc", 5, "ProfilerStep#1")]}, "integer ns from 0 to 2^62, not 'abc'"),
        ({"kernels": [(-(1 << 63), (1 << 63) - 1)]}, "outside 0 .. 2^62 ns"),  # item 6: the span would wrap int64
    ],
)
def test_nsys_type_faults_are_one_line(capsys, tmp_path, store, kw, words):
    line = refused(capsys, "--store", store, "import", str(inputs.nsys_export(tmp_path / "report.sqlite", **kw)))
    assert words in line, line


def test_nsys_good_export_still_imports(capsys, tmp_path, store):
    path = inputs.nsys_export(
        tmp_path / "report.sqlite", kernels=[(1, 2), (6, 7)], nvtx=[(1, 5, "ProfilerStep#1"), (5, 9, "ProfilerStep#2")]
    )
    rc, _out, err = wb(capsys, "--store", store, "import", str(path))
    assert rc == 0, err


# -- option bounds ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, words",
    [
        (["--rounds", "1000000000"], "more than 10,000 rounds"),
        (["--rounds", "100000000000000000000"], "more than 10,000 rounds"),
        (["--timeout", "1e400"], "inf s is outside"),
        (["--timeout", "0"], "is outside (0, 604800]"),
        (["--seed", "99999999999999999999999"], "outside 0 .. 2^53-1"),
        (["--seed", "-1"], "outside 0 .. 2^53-1"),
        (["--warmup-runs", "1000000000"], "outside 0 .. 1,000"),
    ],
)
def test_rerun_plan_option_bounds(capsys, store, args, words):
    line = refused(
        capsys,
        "--store",
        store,
        "rerun",
        "plan",
        "p",
        "--lens",
        "training",
        "--baseline",
        "true",
        "--candidate",
        "true",
        *args,
    )
    assert words in line, line


@pytest.mark.parametrize(
    "args, words", [(["--max-rounds", "100000000"], "more than 10,000"), (["--timeout", "1e400"], "inf s")]
)
def test_bisect_option_bounds(capsys, tmp_path, store, args, words):
    versions = tmp_path / "v.txt"
    versions.write_text("1\n2\n")
    line = refused(capsys, "--store", store, "bisect", "start", "--candidates", str(versions), "--bench", "true", *args)
    assert words in line, line


# -- item 6 -------------------------------------------------------------------------------

SACCT = "JobID|State|Submit|Eligible|Start|End|ReqTRES\n7|COMPLETED|1790000000|1790000100|1790000200|1790000300|gres/gpu:a100=4\n"


@pytest.mark.parametrize("target", ["-5", "0", "1e400", "nan"])
def test_wait_target_must_be_positive(capsys, tmp_path, store, target):
    (tmp_path / "s.txt").write_text(SACCT)
    rc, _out, err = wb(capsys, "--store", store, "import", str(tmp_path / "s.txt"), f"--wait-target={target}")
    assert rc != 0 and "--wait-target: a queue-wait target is a positive number of seconds" in err, err


@pytest.mark.parametrize("target", [0, -5, 0.0])
def test_a_native_captures_wait_target_must_be_positive(capsys, tmp_path, store, target):
    doc = {
        "format": "workbench.capture/1",
        "lens": "fleet",
        "label": "w",
        "pool": {"capacity_gpus": 8, "window_start": 1790000000, "window_end": 1790003600, "wait_target_s": target},
        "samples": [
            {
                "job": "7",
                "gpus": 4,
                "submit": 1790000000,
                "eligible": 1790000100,
                "start": 1790000200,
                "end": 1790000300,
                "state": "COMPLETED",
            }
        ],
    }
    (tmp_path / "w.json").write_text(json.dumps(doc))
    line = refused(capsys, "--store", store, "import", str(tmp_path / "w.json"))
    assert str(tmp_path / "w.json") in line and "pool.wait_target_s" in line and "positive number of seconds" in line, (
        line
    )
    rc, out, _err = wb(capsys, "--store", store, "runs", "--json")
    assert rc == 0 and json.loads(out) in ([], {"runs": []})


def test_sacct_time_of_non_ascii_digits(capsys, tmp_path, store):
    (tmp_path / "s.txt").write_text(SACCT.replace("|1790000000|", "|²|"))
    line = refused(capsys, "--store", store, "import", str(tmp_path / "s.txt"))
    assert "line 2" in line and "bad time '²'" in line


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_store_refuses_writes(capsys, tmp_path, url):
    capture = inputs.native_capture(tmp_path / "c.json")
    for args in (["import", str(capture)], ["investigate", "new", "--lens", "training", "--question", "q?"]):
        rc, out, err = wb(capsys, "--store", url, *args)
        assert rc != 0 and "is in memory and vanishes when wb exits: nothing was written" in err, (args, out, err)
        assert "imported" not in out
    rc, out, err = wb(capsys, "--store", url, "runs", "--json")  # reading is fine (and empty)
    assert rc == 0 and json.loads(out) in ([], {"runs": []}), err
