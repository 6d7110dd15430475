"""Benchmark-result importers: vLLM bench, SGLang bench, inference-perf (real demo files)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from workbench.errors import BadInput
from workbench.importers import expand_paths
from workbench.importers.base import ImportOptions, probe_file
from workbench.importers.inference_perf import IMPORTER as INFERENCE_PERF
from workbench.importers.sglang_bench import IMPORTER as SGLANG
from workbench.importers.vllm_bench import IMPORTER as VLLM

DATA = Path(__file__).resolve().parents[1] / "data" / "inference"
DEMO = DATA / "real" / "inference-perf-kubecon-na-2025"


def read(importer, *paths: Path, **params):
    return list(importer.read(list(paths), ImportOptions(params=params)))


# ---------------------------------------------------------------- vLLM bench


def test_vllm_concatenated_summaries_keep_every_quirk() -> None:
    runs = read(VLLM, DATA / "vllm_bench_summaries.jsonl")
    assert len(runs) == 3
    for run in runs:
        assert run.sample_count == 0 and run.meta["summary_only"]
        ttft = run.meta["summary"]["ttft_ms"]
        assert "p99" in ttft and "p95" not in ttft  # never derived from the p99
        assert run.dimensions["hardware"].value == "4xNVIDIA_L40S"
        assert run.dimensions["request_mix"].value == "1000 prompt / 500 output tokens (configured)"
        assert any("request_goodput:" in q for q in run.meta["quirks"])
    assert runs[2].meta["workload"]["request_rate"] == "inf"
    assert "rate=inf" in runs[2].dimensions["load"].value
    assert runs[0].meta["metadata"]["deployment"] == "base" and runs[1].meta["metadata"]["deployment"] == "kvcache"
    assert len({r.label for r in runs}) == 3


def test_vllm_detailed_arrays_become_samples_failures_unknown() -> None:
    (run,) = read(VLLM, DATA / "vllm_bench_detailed.json")
    s = run.samples
    assert run.sample_count == 40
    failed = s["ok"] == 0.0
    assert failed.sum() == 2 and run.quality["error_rate"] == pytest.approx(0.05)
    # A failure's 0.0 TTFT is unknown, not zero.
    assert np.isnan(s["ttft_ms"][failed]).all() and np.isnan(s["output_tokens"][failed]).all()
    ok = ~failed
    assert (s["ttft_ms"][ok] > 80).all() and (s["e2e_ms"][ok] > s["ttft_ms"][ok]).all()
    assert np.isnan(s["queue_ms"]).all()  # the client cannot see server queue time
    assert run.dimensions["request_mix"].value == "512 prompt / 128 output tokens (median)"
    assert run.dimensions["request_mix"].source == "derived"
    assert run.dimensions["engine_revision"].value == "v0.11.0"
    assert run.work.amount == 38 * 128
    assert run.tables["itl"]["itl_ms"].size == 38 * 127
    assert run.meta["summary"]["ttft_ms"]["p95"] == 128.0  # the file's own figure, kept apart


def test_vllm_nan_and_mismatched_arrays(tmp_path: Path) -> None:
    obj = json.loads((DATA / "vllm_bench_detailed.json").read_text())
    obj["ttfts"][3] = "NaN"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(obj))
    (run,) = read(VLLM, path)
    assert math.isnan(run.samples["ttft_ms"][3])
    obj["output_lens"] = obj["output_lens"][:-1]
    path.write_text(json.dumps(obj))
    with pytest.raises(BadInput, match="output_lens"):
        read(VLLM, path)


def test_vllm_bare_nan_literal_and_truncation_fail_cleanly(tmp_path: Path) -> None:
    text = (DATA / "vllm_bench_summaries.jsonl").read_text()
    bad = tmp_path / "nan.jsonl"
    bad.write_text(text.replace('"mean_ttft_ms": 54.58', '"mean_ttft_ms": NaN', 1))
    with pytest.raises(BadInput, match="line 1"):
        read(VLLM, bad)
    cut = tmp_path / "cut.jsonl"
    cut.write_text(text[: len(text) - 40])
    with pytest.raises(BadInput, match="invalid JSON.*line 3|line 3.*invalid JSON"):
        read(VLLM, cut)


def test_sniffers_pick_their_own_files() -> None:
    vllm_p, sgl_p = probe_file(DATA / "vllm_bench_detailed.json"), probe_file(DATA / "sglang_bench.jsonl")
    assert VLLM.sniff(vllm_p) and not SGLANG.sniff(vllm_p)
    assert SGLANG.sniff(sgl_p) and not VLLM.sniff(sgl_p)
    assert not INFERENCE_PERF.sniff(vllm_p) and not INFERENCE_PERF.sniff(sgl_p)


# ---------------------------------------------------------------- SGLang


def test_sglang_server_info_is_measured_engine_config() -> None:
    summary_only, detailed = read(SGLANG, DATA / "sglang_bench.jsonl")
    cfg = summary_only.dimensions["engine_config"]
    assert cfg.source == "measured"
    assert cfg.value["max_num_seqs"] == 256 and cfg.value["prefix_caching"] is True and cfg.value["cuda_graphs"] is True
    assert summary_only.dimensions["precision"].value == "bf16"
    assert summary_only.dimensions["engine_revision"].value == "sglang 0.4.9"
    assert "p95" not in summary_only.meta["summary"]["ttft_ms"]  # SGLang writes no p95 TTFT
    assert summary_only.meta["summary"]["itl_ms"]["p95"] == 12.5
    assert summary_only.sample_count == 0
    assert detailed.sample_count == 10 and detailed.quality["error_rate"] == pytest.approx(0.1)


# ---------------------------------------------------------------- inference-perf (real)


@pytest.fixture(scope="module")
def demo_levels():
    """Every level run of the three real sweeps, by sweep label."""
    out: dict[str, list] = {}
    for run in read(INFERENCE_PERF, *expand_paths([DEMO])):
        out.setdefault(run.meta["sweep"]["label"], []).append(run)
    return {k: sorted(v, key=lambda r: r.meta["sweep"]["level"]) for k, v in out.items()}


@pytest.fixture(scope="module")
def demo_runs(demo_levels):
    """The first (1 req/s) level of each sweep."""
    return {k: v[0] for k, v in demo_levels.items()}


def test_every_demo_file_is_recognised_and_imports(demo_levels) -> None:
    files = expand_paths([DEMO])
    assert all(INFERENCE_PERF.sniff(probe_file(f)) for f in files)
    assert set(demo_levels) == {"vllm", "vllm+v0_engine", "vllm+batch_size"}
    ids = set()
    for label, levels in demo_levels.items():
        assert [r.meta["stage"] for r in levels] == [0, 1, 2, 3, 4, 5, 6]  # one run per load level
        sweep = {r.meta["sweep"]["id"] for r in levels}
        assert len(sweep) == 1
        ids |= sweep
        for run in levels:
            assert run.sample_count == 0 and run.meta["summary_only"]
            assert run.window["kind"] == "steady"
            assert run.meta["sweep"]["axis"] == "rate" and run.meta["sweep"]["levels"] == 7
            assert run.label == f"{label} @ {run.meta['load']['requested_rate']:g} req/s"
            # The summary over all stages is sweep metadata, never a level.
            assert (
                run.meta["sweep"]["summary"]["client"]["requests_completed"] > run.meta["summary"]["requests_completed"]
            )
    assert len(ids) == 3


def test_level_figures_match_the_files(demo_levels) -> None:
    vllm = demo_levels["vllm"]
    s3 = vllm[3].meta["summary"]
    assert vllm[3].meta["load"]["requested_rate"] == pytest.approx(92.19)
    assert vllm[3].meta["load"]["achieved_rate"] == pytest.approx(92.22409851829183)
    assert s3["ttft_ms"]["p95"] == pytest.approx(80.24103753268719)
    assert s3["tpot_ms"]["p95"] == pytest.approx(9.37609843072272)
    assert s3["requests_completed"] == 5531 and s3["requests_failed"] == 0
    assert vllm[4].meta["load"]["achieved_rate"] == pytest.approx(106.49371985245213)  # past the knee
    assert vllm[0].meta["sweep"]["summary"]["client"]["ttft_ms"]["p95"] == pytest.approx(3303.848, rel=1e-6)
    assert demo_levels["vllm+v0_engine"][0].meta["sweep"]["summary"]["client"]["ttft_ms"]["p95"] == pytest.approx(
        5291.067, rel=1e-6
    )
    assert vllm[0].meta["summary"]["ttft_ms"]["p95"] == pytest.approx(36, abs=1)


def test_summary_files_alone_are_one_mixed_run(tmp_path: Path) -> None:
    for name in ("summary_lifecycle_metrics.json", "summary_prometheus_metrics.json"):
        (tmp_path / name).write_bytes((DEMO / "vllm" / "results" / name).read_bytes())
    (run,) = read(INFERENCE_PERF, *sorted(tmp_path.iterdir()))
    assert run.window["kind"] == "mixed" and "sweep" not in run.meta and "sweep_summary_only" in run.meta
    assert run.meta["summary"]["ttft_ms"]["p95"] == pytest.approx(3303.848, rel=1e-6)


def test_engine_config_from_manifests(demo_runs) -> None:
    base, v0, batch = demo_runs["vllm"], demo_runs["vllm+v0_engine"], demo_runs["vllm+batch_size"]
    assert base.dimensions["engine_revision"].value == "vllm v0.11.0"
    assert v0.dimensions["engine_revision"].value == "vllm v0.9.0 (V0 engine)"
    assert base.dimensions["engine_config"].value == {
        "chunked_prefill": False,
        "gpu_memory_utilization": 0.9,
        "max_model_len": 512,
        "max_num_seqs": 128,
        "prefix_caching": False,
    }
    assert batch.dimensions["engine_config"].value["max_num_seqs"] == 192
    assert base.dimensions["hardware"].value == "1x nvidia-h100-80gb"
    for run in demo_runs.values():
        assert run.dimensions["engine_config"].source == "declared"
        assert run.dimensions["model"].value == "meta-llama/Llama-3.1-8B-Instruct"


def test_silent_zero_server_metrics_are_unknown(demo_levels) -> None:
    for run in demo_levels["vllm"]:
        srv = run.meta["server_summary"]
        assert srv["kv_cache_usage_percentage"] == {"unknown": True}
    srv = demo_levels["vllm"][0].meta["sweep"]["summary"]["server"]
    assert srv["prompt_len"].get("unknown") and "mean" not in srv["prompt_len"]
    assert srv["prompt_len"]["rate"] > 0
    v0 = demo_levels["vllm+v0_engine"][0].meta["sweep"]["summary"]["server"]
    assert v0["kv_cache_usage_percentage"]["mean"] == pytest.approx(0.042485)


def test_pair_is_an_intended_engine_revision_change(demo_runs) -> None:
    compare = pytest.importorskip("workbench.compare").compare
    result = compare([demo_runs["vllm"]], [demo_runs["vllm+v0_engine"]], changes={"engine_revision": None}).to_json()
    # The hub model's revision is not pinned: the weights are unknown, never "same" (issue 27).
    assert not result["comparable"] and result["refusal"]["dimension"] == "weights"
    result = compare(
        [demo_runs["vllm"]],
        [demo_runs["vllm+v0_engine"]],
        changes={"engine_revision": None},
        accepts={"weights": "one deployment of the hub model"},
    ).to_json()
    assert result["comparable"]
    states = {d["name"]: d["state"] for d in result["dimensions"]}
    assert states["engine_revision"] == "changed" and states["weights"] == "unknown"
    assert all(states[k] == "same" for k in ("model", "hardware", "topology", "request_mix"))
    # The V0 variant also sets VLLM_USE_V1=0: the engine config says so, key by key.
    (row,) = [d for d in result["dimensions"] if d["name"] == "engine_config"]
    assert row["state"] == "different"
    assert row["key_changes"] == [{"key": "env.VLLM_USE_V1", "change": "added", "candidate": "0"}]


def test_config_only_variant_shows_the_engine_config_change(demo_runs) -> None:
    compare = pytest.importorskip("workbench.compare").compare
    from workbench.compare.render import render_comparison

    result = compare([demo_runs["vllm"]], [demo_runs["vllm+batch_size"]]).to_json()
    states = {d["name"]: d["state"] for d in result["dimensions"]}
    assert states["engine_config"] == "different" and states["engine_revision"] == "same"
    (row,) = [d for d in result["dimensions"] if d["name"] == "engine_config"]
    assert row["key_changes"] == [{"key": "max_num_seqs", "change": "changed", "baseline": 128, "candidate": 192}]
    assert "several_changed" not in row
    text = render_comparison(compare([demo_runs["vllm"]], [demo_runs["vllm+batch_size"]]))
    assert "~ max_num_seqs: 128 → 192" in text and "{'chunked_prefill'~" not in text


def test_results_folder_alone_finds_its_manifest() -> None:
    runs = read(INFERENCE_PERF, *expand_paths([DEMO / "vllm" / "results"]))
    assert len(runs) == 7
    run = runs[0]
    assert run.meta["companions"]["manifest"].endswith("vllm/manifests.yaml")
    assert run.dimensions["engine_revision"].value == "vllm v0.11.0"


def test_manifest_alone_is_refused() -> None:
    with pytest.raises(BadInput, match="no measurements"):
        read(INFERENCE_PERF, DEMO / "vllm" / "manifests.yaml")


def test_truncated_report_fails_cleanly(tmp_path: Path) -> None:
    src = (DEMO / "vllm" / "results" / "summary_lifecycle_metrics.json").read_text()
    bad = tmp_path / "summary_lifecycle_metrics.json"
    bad.write_text(src[:500])
    with pytest.raises(BadInput, match="invalid JSON"):
        read(INFERENCE_PERF, bad)


def test_error_rate_is_unknown_when_no_request_outcome_is_known() -> None:
    from workbench.formats.inference_records import SampleBuilder, inference_run

    rows = SampleBuilder()
    rows.add("r1", ttft_ms=12.0)  # a row without an ok/failed flag
    run = inference_run("x", samples=rows, summary={}, dimensions={}, meta={}, sources=[])
    assert "error_rate" not in run.quality  # unknown, never 0

    rows.add("r2", ttft_ms=13.0, ok=0.0)
    run = inference_run("y", samples=rows, summary={}, dimensions={}, meta={}, sources=[])
    assert run.quality["error_rate"] == 1.0  # the one known outcome failed


def test_silent_zero_names_the_rename(demo_levels) -> None:
    warnings = demo_levels["vllm"][2].meta["warnings"]
    assert any(
        "kv_cache_usage_percentage" in w and "renamed vllm:kv_cache_usage_perc in vLLM 0.9" in w for w in warnings
    )
