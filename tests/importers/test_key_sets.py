"""Key-set versions are data (issue 29 items 2 and 3): every key set an importer lists has
a test file that the importer, and only it, takes and reads; files that match no key set
say which importer came closest and why it declined."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.errors import BadInput
from workbench.formats.key_sets import matching
from workbench.importers import ImportOptions, UnknownFormat, all_importers, detect
from workbench.importers.base import probe_file

DATA = Path(__file__).resolve().parent.parent / "data"
KEY_SETS = [(imp, ks) for imp in all_importers() for ks in imp.key_sets]


def test_the_inference_importers_list_their_key_sets():
    names = {imp.name: len(imp.key_sets) for imp in all_importers()}
    assert names["sglang-bench"] >= 3 and names["vllm-bench"] >= 2 and names["guidellm"] >= 2 and names["aiperf"] >= 4


@pytest.mark.parametrize("importer,key_set", KEY_SETS, ids=[f"{i.name}:{k.name}" for i, k in KEY_SETS])
def test_each_key_set_has_a_test_file_that_its_importer_reads(importer, key_set):
    path = DATA / key_set.sample
    assert path.is_file(), key_set.sample
    assert key_set.origin.startswith(("real", "minimal, derived from")), key_set.origin
    assert key_set.matches(probe_file(path).text), f"{key_set.sample} does not carry {key_set.all_of}"
    found, _ = detect(path)
    assert found.name == importer.name
    runs = list(found.read([path], ImportOptions()))
    assert runs and all(r.lens == "inference" for r in runs)


def test_sglang_2024_jsonl_without_mean_ttft_imports_with_its_median():
    path = DATA / "inference" / "sglang_bench_2024.jsonl"
    importer, probe = detect(path)
    assert importer.name == "sglang-bench"
    assert matching(importer.key_sets, probe.text).name.startswith("bench_serving 2024")
    runs = list(importer.read([path], ImportOptions()))
    assert [r.meta["summary"]["ttft_ms"]["median"] for r in runs] == [88.4, 140.2]
    assert "p95" not in runs[0].meta["summary"]["ttft_ms"]  # never derived


def test_sglang_mid_2025_lines_without_server_info_are_their_own_key_set():
    """The writer's result dict at sgl-project/sglang@0033168f (python/sglang/bench_serving.py)
    has accept_length, concurrency and p95 ITL but no server_info: named as that version."""
    path = DATA / "inference" / "sglang_bench_2025_mid.jsonl"
    importer, probe = detect(path)
    assert importer.name == "sglang-bench"
    assert matching(importer.key_sets, probe.text).name.startswith("bench_serving mid 2025")
    (run,) = importer.read([path], ImportOptions())
    assert run.meta["summary"]["ttft_ms"]["p99"] == 140.0 and run.meta["server_info"] == {}
    assert "model" not in run.dimensions  # no server_info: the model is unknown, never guessed


def test_sglang_line_whose_server_info_is_null_imports(tmp_path):
    """Late 2025 writes ``"server_info": null`` when /get_server_info failed."""
    line = json.loads((DATA / "inference" / "sglang_bench.jsonl").read_text().splitlines()[0])
    line["server_info"] = None
    path = tmp_path / "null_info.jsonl"
    path.write_text(json.dumps(line) + "\n")
    importer, probe = detect(path)
    assert matching(importer.key_sets, probe.text).name.startswith("bench_serving 2025 (with server_info)")
    (run,) = importer.read([path], ImportOptions())
    assert run.meta["summary"]["ttft_ms"]["mean"] == line["mean_ttft_ms"] and "model" not in run.dimensions


def test_guidellm_scheduler_refactor_report_reads_its_strategy_from_scheduler():
    """vllm-project/guidellm@414febe6 (src/guidellm/benchmark/objects.py) has no args, worker or
    request_loader: the strategy is under scheduler, the backend under benchmarker."""
    path = DATA / "inference" / "guidellm_scheduler_report.json"
    importer, probe = detect(path)
    assert importer.name == "guidellm"
    assert matching(importer.key_sets, probe.text).name.startswith("scheduler-refactor report")
    (run,) = importer.read([path], ImportOptions())
    assert run.dimensions["load"].value == "strategy=constant, rate=4.0"
    assert run.meta["summary"]["ttft_ms"]["p95"] == 61.0 and run.meta["summary"]["requests_completed"] == 118
    assert "model" not in run.dimensions  # the backend says none here: unknown, never guessed


def test_unknown_format_names_the_closest_importer_and_what_it_lacks(tmp_path):
    path = tmp_path / "almost.jsonl"
    path.write_text(json.dumps({"backend": "sglang", "mean_e2e_latency_ms": 4210.5, "duration": 3.0}) + "\n")
    with pytest.raises(UnknownFormat) as err:
        detect(path)
    text = str(err.value)
    assert "closest is sglang-bench: has mean_e2e_latency_ms, lacks" in text and "mean_ttft_ms" in text
    assert err.value.closest["importer"] == "sglang-bench" and "lacks" in err.value.closest["reason"]


def test_unknown_format_without_a_near_miss_keeps_the_plain_line(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello, this is not a capture\n")
    with pytest.raises(BadInput) as err:
        detect(path)
    assert "unknown format (wb reads:" in str(err.value)


def test_json_error_document_carries_the_closest_importer(tmp_path, wb_env):
    from tests.conftest import run_wb

    path = tmp_path / "almost.jsonl"
    path.write_text(json.dumps({"backend": "sglang", "mean_e2e_latency_ms": 4210.5, "duration": 3.0}) + "\n")
    proc = run_wb("--store", f"sqlite:///{tmp_path / 's.sqlite'}", "import", str(path), "--json")
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert doc["error"]["file"] == str(path)
    assert doc["error"]["details"]["closest"]["importer"] == "sglang-bench"
    assert "lacks" in doc["error"]["details"]["closest"]["reason"]
