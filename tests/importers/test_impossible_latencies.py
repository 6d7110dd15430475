"""No untrue latency is stored (issue 28 item 6): negative values, infinities (1e308 s
is infinite in ms), values past the physical bound and "-1" strings are kept as unknown
with the reason in ``meta["warnings"]`` (benchmark importers) or refused naming the
sample (the native capture, which is strict by design)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from store.records import SAMPLES
from workbench.errors import BadInput
from workbench.formats.inference_records import LATENCY_BOUND_MS
from workbench.importers import ImportOptions, detect

OPTS = ImportOptions()


def _runs(path):
    importer, _ = detect(path)
    return importer, list(importer.read([path], OPTS))


def _vllm(**over):
    obj = {
        "date": "20250101-000000",
        "backend": "vllm",
        "model_id": "m",
        "tokenizer_id": "m",
        "num_prompts": 3,
        "request_rate": 1.0,
        "completed": 3,
        "duration": 10.0,
        "request_throughput": 0.3,
        "mean_ttft_ms": 50.0,
        "p99_ttft_ms": 80.0,
        "mean_e2el_ms": 900.0,
        "input_lens": [10, 10, 10],
        "output_lens": [5, 5, 5],
        "ttfts": [0.05, 0.06, 0.07],
        "itls": [[0.01, 0.01], [0.01, 0.02], [0.02, 0.01]],
        "latencies": [0.5, 0.6, 0.7],
        "errors": ["", "", ""],
    }
    obj.update(over)
    return obj


def _warned(run, column):
    return [w for w in run.meta.get("warnings", []) if column in w]


@pytest.mark.parametrize(
    "field,values,column",
    [
        ("ttfts", [0.05, "-1", 0.07], "ttft_ms"),
        ("ttfts", [0.05, -1, 0.07], "ttft_ms"),
        ("latencies", [0.5, 1e308, 0.7], "e2e_ms"),
        ("latencies", [0.5, -0.2, 0.7], "e2e_ms"),
        ("latencies", [0.5, 2e6, 0.7], "e2e_ms"),  # 2e6 s = 2e9 ms: past the bound
    ],
)
def test_vllm_impossible_per_request_values_are_unknown_with_reason(tmp_path, field, values, column):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_vllm(**{field: values})))
    importer, (run,) = _runs(path)
    assert importer.name == "vllm-bench"
    col = run.tables[SAMPLES][column]
    assert math.isnan(col[1]) and np.isfinite(col[[0, 2]]).all()
    assert _warned(run, column), run.meta.get("warnings")
    tpot = run.tables[SAMPLES]["tpot_ms"]
    assert not (tpot[np.isfinite(tpot)] < 0).any()


def test_vllm_impossible_gaps_are_dropped_with_reason(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_vllm(itls=[[0.01, 1e308], [-1, 0.02], [0.02, 0.01]])))
    _, (run,) = _runs(path)
    itl = run.tables["itl"]["itl_ms"]
    assert np.isfinite(itl).all() and (itl >= 0).all() and len(itl) == 4
    assert np.isfinite(run.tables[SAMPLES]["itl_ms"]).all()
    assert _warned(run, "itls")


def test_summary_figures_that_cannot_be_true_are_dropped(tmp_path):
    path = tmp_path / "r.json"
    obj = _vllm(mean_ttft_ms=-1.0, p99_itl_ms=1e308, median_e2el_ms=5e9, request_throughput=-3.0)
    for key in ("ttfts", "itls", "latencies", "input_lens", "output_lens", "errors"):
        obj.pop(key)
    path.write_text(json.dumps(obj))
    _, (run,) = _runs(path)
    summary = run.meta["summary"]
    assert "mean" not in summary["ttft_ms"] and summary["ttft_ms"]["p99"] == 80.0
    assert "p99" not in summary.get("itl_ms", {}) and "median" not in summary["e2e_ms"]
    assert "request_throughput" not in summary
    assert len(run.meta["warnings"]) == 4


def test_sglang_minus_one_strings_are_unknown(tmp_path):
    line = {
        "backend": "sglang",
        "dataset_name": "random",
        "request_rate": 4.0,
        "max_concurrency": None,
        "server_info": {"model_path": "m", "version": "0.4.0"},
        "duration": 5.0,
        "completed": 2,
        "mean_ttft_ms": 40.0,
        "mean_e2e_latency_ms": 400.0,
        "input_lens": [5, 5],
        "output_lens": [4, 4],
        "ttfts": [0.04, 0.05],
        "itls": [[0.01], [0.01]],
        "latencies": ["-1", 0.4],
        "errors": ["", ""],
    }
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(line) + "\n")
    importer, (run,) = _runs(path)
    assert importer.name == "sglang-bench"
    assert math.isnan(run.tables[SAMPLES]["e2e_ms"][0]) and _warned(run, "e2e_ms")


def test_aiperf_record_with_impossible_latency_is_unknown(tmp_path):
    rec = {
        "metadata": {
            "x_request_id": "a",
            "session_num": 0,
            "benchmark_phase": "profiling",
            "request_start_ns": 1,
            "request_end_ns": 2,
            "worker_id": "w",
            "record_processor_id": "r",
        },
        "metrics": {
            "time_to_first_token": {"value": -1, "unit": "ms"},
            "request_latency": {"value": 1e308, "unit": "ms"},
            "output_sequence_length": {"value": 4, "unit": "tokens"},
        },
    }
    good = json.loads(json.dumps(rec))
    good["metrics"]["time_to_first_token"]["value"] = 12.0
    good["metrics"]["request_latency"]["value"] = 120.0
    path = tmp_path / "profile_export.jsonl"
    path.write_text(json.dumps(rec) + "\n" + json.dumps(good) + "\n")
    importer, runs = _runs(path)
    assert importer.name == "aiperf"
    table = runs[0].tables[SAMPLES]
    assert np.isnan(table["ttft_ms"]).sum() == 1 and np.isnan(table["e2e_ms"]).sum() == 1
    assert _warned(runs[0], "ttft_ms") and _warned(runs[0], "e2e_ms")


def test_otlp_infinite_latency_is_unknown_with_reason(tmp_path):
    def span(ttft):
        return {
            "spanId": "s",
            "attributes": [
                {"key": "gen_ai.latency.time_to_first_token", "value": {"doubleValue": ttft}},
                {"key": "gen_ai.latency.e2e", "value": {"doubleValue": 0.5}},
            ],
        }

    doc = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [span(0.05), span(1e308)]}]}]}
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(doc))
    importer, (run,) = _runs(path)
    assert importer.name == "otlp"
    ttft = run.tables[SAMPLES]["ttft_ms"]
    assert math.isfinite(ttft[0]) and math.isnan(ttft[1]) and _warned(run, "ttft_ms")


def test_native_capture_refuses_a_latency_past_the_bound(tmp_path):
    samples = [{"id": str(i), "ttft_ms": 10.0 + i, "e2e_ms": 100.0, "ok": True} for i in range(5)]
    samples[3]["e2e_ms"] = LATENCY_BOUND_MS * 2
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"format": "workbench.capture/1", "lens": "inference", "samples": samples}))
    importer, _ = detect(path)
    with pytest.raises(BadInput) as err:
        list(importer.read([path], OPTS))
    assert "samples[3].e2e_ms" in str(err.value) and "beyond" in str(err.value)
