"""Through the store and the CLI: what the inference and fleet importers write survives a
round trip, bad input writes nothing, and formats wb cannot read fail with a reason."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from store import open_store
from tests.conftest import run_wb
from workbench.errors import BadInput
from workbench.importers import detect
from workbench.importers.base import ImportOptions
from workbench.ingest import import_files

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
PAIR = ROOT / "captures" / "fleet_sacct"


@pytest.mark.store
def test_scrape_pair_and_spans_round_trip(store_url) -> None:
    st = open_store(store_url)
    inf = DATA / "inference"
    report = import_files(
        st, [inf / "vllm_before.prom", inf / "vllm_after.prom"], ImportOptions(params={"scrape_pair": True})
    )
    (run_id,) = report.run_ids
    run = st.load_run(run_id)
    assert run.meta["summary"]["ttft_ms"]["p95_bounds"] == pytest.approx([60.0, 80.0])
    assert run.dimensions["engine_config"].source == "measured"
    spans = st.load_run(import_files(st, [inf / "otlp_spans.jsonl"]).run_ids[0])
    assert spans.sample_count == 30 and not np.isnan(spans.samples["queue_ms"]).any()


@pytest.mark.store
def test_sacct_window_round_trip(store_url) -> None:
    st = open_store(store_url)
    options = ImportOptions(
        params={
            "tz": "UTC",
            "window_from": "2026-11-09T10:00:00",
            "window_to": "2026-11-09T11:00:00",
            "wait_target_s": 60,
        }
    )
    (run_id,) = import_files(st, [PAIR / "window_b"], options).run_ids
    run = st.load_run(run_id)
    assert run.meta["pool"]["capacity_gpus"] == 64 and run.meta["pool"]["wait_target_s"] == 60
    pending = run.samples["state"] == "PENDING"
    assert pending.sum() == 6 and np.isnan(run.samples["start"][pending]).all()
    assert set(run.samples["gpus"][pending].tolist()) == {16.0}


def test_missing_tz_writes_nothing(sqlite_url) -> None:
    st = open_store(sqlite_url)
    with pytest.raises(BadInput, match="--tz"):
        import_files(st, [PAIR / "window_a"])
    assert st.list_runs() == []


def test_cli_fleet_pair_imports_and_compares(tmp_path, wb_env) -> None:
    store = f"sqlite:///{tmp_path / 'f.sqlite'}"
    for name, day in (("window_a", "02"), ("window_b", "09")):
        out = run_wb(
            "--store",
            store,
            "import",
            str(PAIR / name),
            "--tz",
            "UTC",
            "--from",
            f"2026-11-{day}T10:00:00",
            "--to",
            f"2026-11-{day}T11:00:00",
            "--wait-target",
            "60",
            "--label",
            name,
            "--dim",
            "scheduler_policy=gang priority",
            "--json",
        )
        assert out.returncode == 0, out.stderr
        assert len(json.loads(out.stdout)["runs"]) == 1
    out = run_wb("--store", store, "compare", "window_a", "--vs", "window_b", "--json")
    if out.returncode != 0 and "no such command" in out.stderr.lower():
        pytest.skip("wb compare not available")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["comparable"]
    text = json.dumps(result)
    assert "14.2" in text and "85.6" in text


def test_cli_missing_tz_is_one_line_exit_2(tmp_path, wb_env) -> None:
    out = run_wb("--store", f"sqlite:///{tmp_path / 'g.sqlite'}", "import", str(PAIR / "window_a"))
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "--tz" in out.stderr


@pytest.mark.parametrize(
    "name",
    [
        "fleet/gcm/sample-squeue-output.txt",
        "fleet/gcm/sinfo-output-for-structured.txt",
        "inference/inference-perf-vllm_metric_families/v0.26.0.txt",
    ],
)
def test_real_files_wb_does_not_read_fail_with_a_reason(name: str) -> None:
    path = ROOT.parent / "shared" / "real-captures" / name
    if not path.exists():
        pytest.skip("shared real captures not present")
    with pytest.raises(BadInput, match="unknown format"):
        detect(path)


def test_detection_picks_these_importers() -> None:
    cases = {
        DATA / "inference" / "vllm_bench_detailed.json": "vllm-bench",
        DATA / "inference" / "sglang_bench.jsonl": "sglang-bench",
        DATA / "inference" / "otlp_spans.jsonl": "otlp",
        DATA / "inference" / "vllm_after.prom": "prometheus",
        DATA / "inference" / "real" / "guidellm" / "benchmarks_stripped.json": "guidellm",
        DATA / "fleet" / "gcm" / "sample-sacct-one-multiline.txt": "sacct",
        PAIR / "window_a" / "sinfo.txt": "sacct",
    }
    for path, name in cases.items():
        assert detect(path)[0].name == name, path


def test_every_run_is_json_clean() -> None:
    """Unknown is None in metadata, never NaN: bundles and --json refuse non-finite numbers."""
    from workbench.importers import expand_paths

    files = {
        "vllm-bench": [
            DATA / "inference" / "vllm_bench_summaries.jsonl",
            DATA / "inference" / "vllm_bench_detailed.json",
        ],
        "sglang-bench": [DATA / "inference" / "sglang_bench.jsonl"],
        "guidellm": [DATA / "inference" / "real" / "guidellm" / "benchmarks_stripped.json"],
        "aiperf": [
            DATA / "inference" / "aiperf_profile_export.jsonl",
            DATA / "inference" / "aiperf_profile_export_aiperf.json",
            DATA / "inference" / "genai_perf_profile_export.json",
        ],
        "otlp": [DATA / "inference" / "otlp_spans.jsonl"],
        "inference-perf": expand_paths([DATA / "inference" / "real" / "inference-perf-kubecon-na-2025"]),
    }
    from workbench.importers import get_importer

    runs = [run for name, paths in files.items() for run in get_importer(name).read(list(paths), ImportOptions())]
    runs += list(get_importer("prometheus").read([DATA / "inference" / "vllm_after.prom"], ImportOptions()))
    runs += list(
        get_importer("sacct").read(
            [DATA / "fleet" / "gcm" / "sample-sacct-output-midnight-edge-case-small.txt"],
            ImportOptions(params={"tz": "UTC"}),
        )
    )
    assert len(runs) >= 14
    for run in runs:
        json.dumps(run.meta, allow_nan=False)
        json.dumps({k: d.to_json() for k, d in run.dimensions.items()}, allow_nan=False)
        json.dumps(run.quality, allow_nan=False)
