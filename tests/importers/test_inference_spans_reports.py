"""GuideLLM, AIPerf, OTLP spans; the YAML and engine-config helpers; sniffing across formats."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from workbench.errors import BadInput
from workbench.formats import engine_config
from workbench.importers.aiperf import IMPORTER as AIPERF
from workbench.importers.base import ImportOptions, probe_file
from workbench.importers.guidellm import IMPORTER as GUIDELLM
from workbench.importers.inference_perf import IMPORTER as INFERENCE_PERF
from workbench.importers.otlp import IMPORTER as OTLP
from workbench.importers.prometheus import IMPORTER as PROMETHEUS
from workbench.importers.sacct import IMPORTER as SACCT
from workbench.importers.sglang_bench import IMPORTER as SGLANG
from workbench.importers.vllm_bench import IMPORTER as VLLM

DATA = Path(__file__).resolve().parents[1] / "data" / "inference"
GUIDE = DATA / "real" / "guidellm" / "benchmarks_stripped.json"
MINE = (AIPERF, GUIDELLM, INFERENCE_PERF, OTLP, PROMETHEUS, SACCT, SGLANG, VLLM)


def read(importer, path: Path, **params):
    return list(importer.read([path], ImportOptions(params=params)))


def test_guidellm_real_report_is_summary_only_with_its_sampled_request() -> None:
    (run,) = read(GUIDELLM, GUIDE)
    s = run.meta["summary"]
    assert s["ttft_ms"]["mean"] == pytest.approx(16.7925, rel=1e-4)
    assert s["ttft_ms"]["p95"] == pytest.approx(19.0094, rel=1e-4)
    assert s["ttft_ms"]["p0.1"] == pytest.approx(15.7909, rel=1e-4)  # GuideLLM's p001
    assert "p99.9" in s["ttft_ms"]
    assert s["e2e_ms"]["mean"] == pytest.approx(644.47, rel=1e-4)  # seconds -> ms
    assert s["requests_completed"] == 46 and s["requests_incomplete"] == 1
    # One record kept of 47: never a p95 from it.
    assert run.sample_count == 0 and run.tables["sampled_requests"]["ttft_ms"].size == 1
    assert run.tables["sampled_requests"]["client_queue_ms"][0] > 0
    assert run.dimensions["request_mix"].value == "256 prompt / 128 output tokens (configured)"
    assert run.dimensions["model"].value == "example_model"


def test_guidellm_full_request_list_becomes_samples(tmp_path: Path) -> None:
    report = json.loads(GUIDE.read_text())
    bench = report["benchmarks"][0]
    one = bench["requests"]["successful"][0]
    bench["requests"] = {
        "successful": [dict(one, request_id=f"r{i}") for i in range(3)],
        "errored": [],
        "incomplete": [],
        "total": None,
    }
    bench["request_totals"] = {"successful": 3, "errored": 0, "incomplete": 0, "total": 3}
    path = tmp_path / "g.json"
    path.write_text(json.dumps(report))
    (run,) = read(GUIDELLM, path)
    assert run.sample_count == 3 and np.isnan(run.samples["queue_ms"]).all()
    assert run.samples["ttft_ms"][0] == pytest.approx(21.28, rel=1e-3)


def test_otlp_spans_give_a_per_request_phase_split() -> None:
    (run,) = read(OTLP, DATA / "otlp_spans.jsonl")
    s = run.samples
    assert run.sample_count == 30 and run.meta["spans_skipped"] == 1
    ok = s["ok"] == 1.0
    assert (~ok).sum() == 1 and s["id"][~ok][0] == "cmpl-7"
    assert np.all(s["ttft_ms"][ok] >= s["queue_ms"][ok] + s["prefill_ms"][ok])  # frontend residual >= 0
    assert np.all(s["decode_ms"] > 1000) and np.all(s["prompt_tokens"] == 512)
    assert run.dimensions["model"].source == "measured"


def test_otlp_without_request_spans_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "GET /", "attributes": []}]}]}]}))
    with pytest.raises(BadInput, match="no request spans"):
        read(OTLP, path)


def test_aiperf_records_old_key_set() -> None:
    (run,) = read(AIPERF, DATA / "aiperf_profile_export.jsonl")
    assert run.window["warmup_excluded"] == 2 and run.sample_count == 22
    assert (run.samples["ok"] == 0).sum() == 2  # one error record, one cancelled
    assert run.meta["errors"] == {"InternalServerError": 1}
    ok = run.samples["ok"] == 1
    assert np.all((run.samples["ttft_ms"][ok] >= 40) & (run.samples["ttft_ms"][ok] <= 50))


def test_aiperf_aggregate_keeps_only_stated_percentiles() -> None:
    (run,) = read(AIPERF, DATA / "aiperf_profile_export_aiperf.json")
    assert "p95" not in run.meta["summary"]["ttft_ms"] and run.meta["summary"]["ttft_ms"]["p99"] == 58.9
    assert run.meta["summary"]["e2e_ms"]["p95"] == 951.0
    assert run.dimensions["model"].value == "openai/gpt-oss-20b"


def test_genai_perf_raw_export_timestamps_become_samples() -> None:
    (run,) = read(AIPERF, DATA / "genai_perf_profile_export.json")
    s = run.samples
    assert run.sample_count == 12 and s["ok"][4] == 0 and np.isnan(s["ttft_ms"][4])
    ok = s["ok"] == 1
    assert np.all((s["ttft_ms"][ok] >= 30) & (s["ttft_ms"][ok] <= 40))
    assert s["itl_ms"][0] == pytest.approx(8.0) and s["e2e_ms"][0] == pytest.approx(s["ttft_ms"][0] + 63 * 8.0)
    assert np.isnan(s["prompt_tokens"]).all()  # the raw export has no token counts
    assert run.dimensions["load"].value == "concurrency=4"


def test_aiperf_unknown_unit_fails(tmp_path: Path) -> None:
    text = (DATA / "aiperf_profile_export.jsonl").read_text().replace('"unit": "ms"', '"unit": "fortnights"')
    path = tmp_path / "p.jsonl"
    path.write_text(text)
    with pytest.raises(BadInput, match="fortnights"):
        read(AIPERF, path)


FIXTURES = {
    "vllm_bench_summaries.jsonl": VLLM,
    "vllm_bench_detailed.json": VLLM,
    "sglang_bench.jsonl": SGLANG,
    "otlp_spans.jsonl": OTLP,
    "genai_perf_profile_export.json": AIPERF,
    "aiperf_profile_export.jsonl": AIPERF,
    "aiperf_profile_export_aiperf.json": AIPERF,
    "vllm_before.prom": PROMETHEUS,
    "real/guidellm/benchmarks_stripped.json": GUIDELLM,
    "real/inference-perf-kubecon-na-2025/vllm/results/stage_0_lifecycle_metrics.json": INFERENCE_PERF,
    "real/inference-perf-kubecon-na-2025/vllm/results/stage_0_prometheus_metrics.json": INFERENCE_PERF,
    "real/inference-perf-kubecon-na-2025/vllm/manifests.yaml": INFERENCE_PERF,
    "real/inference-perf-kubecon-na-2025/config.yaml": INFERENCE_PERF,
    "../fleet/gcm/sample-sacct-output.txt": SACCT,
    "../fleet/gcm/sample-sinfo-output.txt": SACCT,
}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_exactly_one_of_these_importers_claims_each_file(name: str) -> None:
    probe = probe_file(DATA / name)
    claimed = [imp.name for imp in MINE if imp.sniff(probe)]
    assert claimed == [FIXTURES[name].name]


def test_metric_family_list_is_not_a_scrape_and_agrees_with_the_rename_table() -> None:
    # The v0.26.0 family list is "name type" lines: documentation, not an exposition.
    path = DATA / "real" / "vllm_metric_families_v0.26.0.txt"
    assert not any(imp.sniff(probe_file(path)) for imp in MINE)
    from workbench.formats.prom_text import RENAMES
    from workbench.importers.prometheus import PHASE_HISTOGRAMS

    families = dict(line.split()[:2] for line in path.read_text().splitlines() if line.startswith("vllm:"))
    for old, _new in RENAMES.items():
        if old.startswith("vllm:"):
            assert old not in families  # the old names are gone in a current release
    assert families["vllm:kv_cache_usage_perc"] == "gauge"
    assert families["vllm:inter_token_latency_seconds"] == "histogram"
    for names in PHASE_HISTOGRAMS.values():
        vllm_names = [n for n in names if n.startswith("vllm:") and n in families]
        assert all(families[n] == "histogram" for n in vllm_names)


def test_vllm_args_parsing() -> None:
    cfg = engine_config.from_vllm_args(
        [
            "vllm",
            "serve",
            "--model=$(M)",
            "--tensor-parallel-size",
            "2",
            "--enforce-eager",
            "--kv-cache-dtype=fp8",
            "--no-enable-prefix-caching",
            "--max_num_batched_tokens=8192",
            "--quantization",
            "awq",
            "--dtype",
            "bfloat16",
        ],
        {"M": "org/model", "VLLM_USE_V1": "1"},
    )
    assert cfg == {
        "model": "org/model",
        "tp": 2,
        "cuda_graphs": False,
        "kv_cache_dtype": "fp8",
        "prefix_caching": False,
        "max_num_batched_tokens": 8192,
        "quantization": "awq",
        "dtype": "bfloat16",
        "engine_generation": "V1",
        "env": {"VLLM_USE_V1": "1"},
    }
    dims = engine_config.dimensions(cfg, "declared")
    assert dims["precision"].value == "bf16+awq" and dims["topology"].value == "TP2 PP1"
    assert "model" not in dims["engine_config"].value
    assert engine_config.image_revision("vllm/vllm-openai:v0.11.0") == "v0.11.0"
    assert engine_config.image_revision("localhost:5000/vllm") is None
