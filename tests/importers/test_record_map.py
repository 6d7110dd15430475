"""A way in for every file (issue 44 item 3): ``wb import FILE --map MAP.toml`` and a ``[map]`` table
in a folder's ``wb.toml`` map a JSON, JSON Lines or CSV file no importer knows onto a lens;
declarative only, checked naming the file and the place, and the lens check applies."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lenses import builtin_lens
from tests.declare.helpers import wb, wbj
from workbench.ingest import read_files
from workbench.inputs import ImportOptions

BENCH = {
    "config": {"model": "llama-3-8b", "gpu": "H100"},
    "results": {
        "requests": [
            {"ttft": 0.12, "latency": {"total": 950}, "tokens_out": 64, "status": "ok"},
            {"ttft": 0.15, "latency": {"total": 990}, "tokens_out": 64, "status": "ok"},
            {"ttft": 0.0, "latency": {"total": 10}, "tokens_out": 0, "status": "ok"},  # an empty response
            {"ttft": 0.11, "latency": {"total": 20}, "tokens_out": 0, "status": "error"},
            {"ttft": 0.2, "tokens_out": 64, "status": "ok"},  # no latency: unknown, never 0
        ]
    },
}
MAP = """
[map]
lens = "inference"
records = "results.requests"
window = "steady"

[map.columns]
ttft_ms = { field = "ttft", unit = "s" }
e2e_ms = { field = "latency.total", unit = "ms" }
output_tokens = "tokens_out"
ok = { field = "status", success = ["ok"] }

[map.dimensions]
model = { field = "config.model" }
hardware = { field = "config.gpu" }
weights = { value = "hub, not pinned" }
"""


@pytest.fixture
def store(tmp_path):
    return ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")


def test_an_unknown_format_names_the_way_in(tmp_path, store, capsys):
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(BENCH))
    _code, _out, err = wb(capsys, *store, "import", str(path), expect=2)
    assert "unknown format" in err and "wb import FILE --map MAP.toml" in err


def test_a_json_file_through_a_map_with_units_dimensions_and_the_lens_check(tmp_path, store, capsys):
    path, spec = tmp_path / "bench.json", tmp_path / "map.toml"
    path.write_text(json.dumps(BENCH))
    spec.write_text(MAP)
    _code, _out, err = wb(capsys, *store, "import", str(path), "--map", str(spec))
    assert "2 of 5 requests failed or returned nothing (1 with an error, 1 with no output token)" in " ".join(
        err.split()
    )
    shown = wbj(capsys, *store, "show", "1")
    assert shown["window"]["kind"] == "steady" and shown["samples"] == 5
    assert {k: d["value"] for k, d in shown["dimensions"].items()}.items() >= {
        "model": "llama-3-8b",
        "hardware": "H100",
        "weights": "hub, not pinned",
    }.items()
    assert shown["quality"]["error_rate"] == pytest.approx(2 / 5)
    assert shown["captures"][0]["importer"] == "mapped 1"
    (run,) = read_files([path], ImportOptions(params={"map": str(spec)})).runs
    assert list(run.samples["ttft_ms"][[0, 1, 4]]) == pytest.approx([120.0, 150.0, 200.0])  # s -> ms
    assert run.samples["e2e_ms"][0] == 950.0 and np.isnan(run.samples["e2e_ms"][4])


def test_json_lines_and_csv_through_a_map(tmp_path, store, capsys):
    spec = tmp_path / "map.toml"
    spec.write_text(
        '[map]\nlens = "inference"\n[map.columns]\n'
        'ttft_ms = { field = "ttft_us", unit = "us" }\noutput_tokens = "out"\n'
    )
    lines = tmp_path / "r.jsonl"
    lines.write_text('{"ttft_us": 120000, "out": 8}\n{"ttft_us": 80000, "out": 8}\n')
    table = tmp_path / "r.csv"
    table.write_text("ttft_us,out\n120000,8\n,8\n")
    one = tmp_path / "one.jsonl"  # a JSON Lines file of one line: one record
    one.write_text('{"ttft_us": 90000, "out": 8}\n')
    (run,) = read_files([one], ImportOptions(params={"map": str(spec)})).runs
    assert list(run.samples["ttft_ms"]) == [90.0]
    wb(capsys, *store, "import", str(lines), str(table), "--map", str(spec))
    runs = read_files([lines, table], ImportOptions(params={"map": str(spec)})).runs
    by_name = {r.sources[0].name: r for r in runs}
    assert list(by_name["r.jsonl"].samples["ttft_ms"]) == [120.0, 80.0]
    assert by_name["r.csv"].samples["ttft_ms"][0] == 120.0 and np.isnan(by_name["r.csv"].samples["ttft_ms"][1])


@pytest.mark.parametrize(
    "table, said",
    [
        ('[map]\nlens = "inference"\nrecord = "x"\n[map.columns]\nttft_ms = "t"\n', "[map]: unknown key 'record'"),
        ('[map]\nlens = "inference"\n[map.columns]\nttft_ms = { field = "t", unit = "fortnight" }\n', "unit"),
        ('[map]\nlens = "inference"\n[map.columns]\noutput_tokens = { field = "n", unit = "s" }\n', "takes no unit"),
        ('[map]\nlens = "inference"\n[map.columns]\nttft_ms = { field = "a..b" }\n', "not a field name"),
        ('[map]\nlens = "inference"\n[map.columns]\nttft_ms = "t"\n[map.dimensions]\nmodel = {}\n', "dimensions.model"),
        ('[map]\nlens = "nope"\n[map.columns]\nttft_ms = "t"\n', "lens 'nope' is not one of"),
        ('[map]\nlens = "inference"\n', "[map.columns] must map"),
        (
            '[map]\nlens = "inference"\n[map.columns]\nttft_ms = { field = "t", run = "rm -rf /" }\n',
            "unknown key 'run'",
        ),
    ],
)
def test_a_map_is_checked_naming_the_file_and_the_place(tmp_path, store, capsys, table, said):
    path, spec = tmp_path / "r.jsonl", tmp_path / "map.toml"
    path.write_text('{"t": 1}\n')
    spec.write_text(table)
    _code, _out, err = wb(capsys, *store, "import", str(path), "--map", str(spec), expect=2)
    assert str(spec) in err and said in err
    assert wbj(capsys, *store, "runs") == []


def test_a_value_that_is_not_a_number_is_bad_input_naming_the_record(tmp_path, store, capsys):
    path, spec = tmp_path / "r.jsonl", tmp_path / "map.toml"
    path.write_text('{"t": 1}\n{"t": "fast"}\n')
    spec.write_text('[map]\nlens = "inference"\n[map.columns]\nttft_ms = "t"\n')
    _code, _out, err = wb(capsys, *store, "import", str(path), "--map", str(spec), expect=2)
    assert "line 2.t: ttft_ms: expected a number, found 'fast'" in err


def test_a_wb_toml_map_reads_the_folder_files_no_importer_takes(tmp_path, store, capsys):
    folder = tmp_path / "jobs"
    folder.mkdir()
    (folder / "wb.toml").write_text(
        '[dimensions]\npool = "lab"\n\n[map]\nlens = "fleet"\nwindow = "steady"\n'
        '[map.columns]\njob = "id"\ngpus = "gpus"\n'
        'eligible = { field = "ready", unit = "iso8601" }\nstart = { field = "began", unit = "iso8601" }\n'
        "[map.pool]\ncapacity_gpus = 16\n"
    )
    (folder / "jobs.csv").write_text(
        "id,gpus,ready,began\n"
        "a,8,2026-11-09T10:00:00+00:00,2026-11-09T10:00:30+00:00\n"
        "b,8,2026-11-09T10:01:00+00:00,2026-11-09T10:02:30+00:00\n"
    )
    wb(capsys, *store, "import", str(folder))
    shown = wbj(capsys, *store, "show", "1")
    assert shown["lens"] == "fleet" and shown["dimensions"]["pool"]["value"] == "lab"
    (run,) = read_files([folder]).runs
    assert builtin_lens("fleet").primary_value(run) == pytest.approx((30 + 90) / 2)  # mean of the two waits, s


def test_csv_success_values_match_numbers_written_as_text(tmp_path):
    spec, table = tmp_path / "map.toml", tmp_path / "r.csv"
    spec.write_text(
        '[map]\nlens = "inference"\n[map.columns]\nttft_ms = "t"\noutput_tokens = "n"\n'
        'ok = { field = "code", success = [200] }\n'
    )
    table.write_text("t,n,code\n100,8,200\n120,8,503\n")
    (run,) = read_files([table], ImportOptions(params={"map": str(spec)})).runs
    assert list(run.samples["ok"]) == [1.0, 0.0] and run.quality["error_rate"] == 0.5
