"""Summary statistics are first-class metrics (issue 29 item 1): ``ttft_p99``,
``tpot_mean``, ``e2e_median``... read from per-request rows or, for a summary-only run,
from the file's own figures; a missing TTFT p95 falls back to the closest statistic both
sides carry, and says so."""

from __future__ import annotations

import json
import math
from pathlib import Path

from lenses.inference import LENS, SERVING_METRICS
from store.records import Dimension
from tests.conftest import run_wb
from workbench.compare import compare
from workbench.importers import ImportOptions, get_importer

DATA = Path(__file__).resolve().parent.parent / "data" / "inference"


def _summary_runs():
    runs = list(get_importer("vllm-bench").read([DATA / "vllm_bench_summaries.jsonl"], ImportOptions()))
    for run in runs:  # the files do not say them: declared, as a user would with wb declare
        run.dimensions.update(weights=Dimension("hub", "declared"), topology=Dimension("tp=4", "declared"))
    return runs


def test_every_latency_statistic_is_a_metric():
    for short in ("ttft", "tpot", "itl", "e2e"):
        for stat in ("mean", "median", "p50", "p90", "p95", "p99", "std"):
            assert f"{short}_{stat}" in SERVING_METRICS


def test_summary_statistics_are_read_from_the_file():
    run = _summary_runs()[0]
    summary = run.meta["summary"]
    assert LENS.with_metric("ttft_p99").primary_value(run) == summary["ttft_ms"]["p99"]
    assert LENS.with_metric("tpot_mean").primary_value(run) == summary["tpot_ms"]["mean"]
    assert LENS.with_metric("ttft_median").primary_value(run) == LENS.with_metric("ttft_p50").primary_value(run)
    assert math.isnan(LENS.with_metric("ttft_p95").primary_value(run))  # never derived from another statistic
    known = [name for name in SERVING_METRICS if math.isfinite(LENS.metric_value(run, name)[0])]
    assert "ttft_p99" in known and "ttft_p95" not in known


def test_statistics_of_per_request_rows():
    (run,) = get_importer("vllm-bench").read([DATA / "vllm_bench_detailed.json"], ImportOptions())
    ttft = run.tables["samples"]["ttft_ms"]
    ok = run.tables["samples"]["ok"] != 0
    assert math.isclose(LENS.metric_value(run, "ttft_mean")[0], float(ttft[ok & ~(ttft != ttft)].mean()))
    assert LENS.metric_value(run, "e2e_median")[1] in ("requests", "file", "unknown")


def test_headline_falls_back_to_the_closest_shared_statistic_and_says_why():
    base, cand = _summary_runs()[:2]
    result = compare([base], [cand], lens="inference")
    assert result.comparable
    assert result.primary.metric == "ttft_p99"
    assert result.primary.baseline == base.meta["summary"]["ttft_ms"]["p99"]
    first = result.observations[0].text
    assert first.startswith("Headline on TTFT p99: TTFT p95 is not recorded on either side")
    assert "--metric ttft_p99" in first and "tpot_mean" in first


def test_headline_falls_back_to_the_median_for_sglang_2024_files():
    runs = list(get_importer("sglang-bench").read([DATA / "sglang_bench_2024.jsonl"], ImportOptions()))
    for run in runs:
        run.dimensions.update(
            model=Dimension("m", "declared"),
            weights=Dimension("hub", "declared"),
            hardware=Dimension("h100", "declared"),
            topology=Dimension("tp=1", "declared"),
        )
    result = compare([runs[0]], [runs[1]], lens="inference", changes={"load": None})
    assert result.comparable
    assert result.primary.metric == "ttft_median"
    assert "TTFT median is the closest statistic" in result.observations[0].text


def test_an_explicit_metric_is_kept():
    base, cand = _summary_runs()[:2]
    result = compare([base], [cand], lens=LENS.with_metric("tpot_mean"))
    assert result.primary.metric == "tpot_mean"
    assert not result.observations or not result.observations[0].text.startswith("Headline on")


def test_show_prints_the_summary_figures(wb_env, tmp_path):
    env = {"WB_STORE": f"sqlite:///{tmp_path / 's.sqlite'}"}
    assert run_wb("import", str(DATA / "vllm_bench_summaries.jsonl"), env=env).returncode == 0
    out = run_wb("show", "1", env=env).stdout
    assert "samples: 0" in out and "summary (as the file states it" in out
    assert "ttft_ms" in out and "p99" in out
    doc = json.loads(run_wb("show", "1", "--json", env=env).stdout)
    assert doc["meta"]["summary"]["ttft_ms"]["p99"] > 0


def test_inspect_takes_the_metric_compare_takes(wb_env, tmp_path):
    """``--metric`` is read once (``compare.lens_with_metric``) for ``wb compare``, ``wb inspect``
    and the server: the same primary, the same refusals."""
    demo = Path(__file__).resolve().parents[2] / "captures" / "demo"
    env = {"WB_STORE": f"sqlite:///{tmp_path / 's.sqlite'}"}
    files = [demo / "inference" / f"{side}-{i}.json" for side in ("baseline", "candidate") for i in (1, 2)]
    assert run_wb("import", *map(str, files), env=env).returncode == 0
    words = ("1", "2", "--vs", "3", "4", "--change", "engine_revision=v0.8.2:v0.8.3", "--metric", "e2e_p99", "--json")
    inspected = json.loads(run_wb("inspect", *words, env=env).stdout)
    compared = json.loads(run_wb("compare", *words, env=env).stdout)
    assert inspected["comparison"]["primary"]["metric"] == compared["primary"]["metric"] == "e2e_p99"
    assert inspected["comparison"]["primary"]["baseline"] == compared["primary"]["baseline"]
    for command in ("inspect", "compare"):
        bad = run_wb(command, "1", "--vs", "3", "--metric", "ttft_p42", env=env)
        assert bad.returncode == 2 and "--metric:" in bad.stderr and "internal error" not in bad.stderr, bad.stderr
    training = [demo / "training" / f"{side}-1.json" for side in ("baseline", "candidate")]
    assert run_wb("import", *map(str, training), env=env).returncode == 0
    refused = run_wb("inspect", "5", "--vs", "6", "--metric", "e2e_p99", env=env)
    assert refused.returncode == 2 and "--metric applies to the inference lens, not training" in refused.stderr
