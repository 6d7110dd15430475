"""One run per load level with a sweep identity, in every multi-level importer; wrong
types are bad input naming the file and the place (issue 16 items 9 and 11)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from tests.conftest import run_wb
from workbench.errors import BadInput
from workbench.importers.aiperf import IMPORTER as AIPERF
from workbench.importers.base import ImportOptions
from workbench.importers.guidellm import IMPORTER as GUIDELLM
from workbench.importers.inference_perf import IMPORTER as INFERENCE_PERF
from workbench.importers.sglang_bench import IMPORTER as SGLANG
from workbench.importers.vllm_bench import IMPORTER as VLLM

DATA = Path(__file__).resolve().parents[1] / "data" / "inference"
GUIDE = DATA / "real" / "guidellm" / "benchmarks_stripped.json"
STAGE = DATA / "real" / "inference-perf-kubecon-na-2025" / "vllm" / "results" / "stage_3_lifecycle_metrics.json"


def read(importer, *paths: Path, label: str | None = None):
    return list(importer.read(list(paths), ImportOptions(label=label)))


def _vllm_obj() -> dict:
    return json.loads((DATA / "vllm_bench_detailed.json").read_text())


# ----------------------------------------------------------------------------- levels and sweeps


def test_vllm_one_file_per_rate_is_one_sweep(tmp_path) -> None:
    paths = []
    for rate, thr in ((2.0, 2.0), (8.0, 7.9), (4.0, 3.95)):
        obj = dict(_vllm_obj(), request_rate=rate, request_throughput=thr, max_concurrency=None)
        path = tmp_path / f"vllm-{rate}qps.json"
        path.write_text(json.dumps(obj))
        paths.append(path)
    runs = read(VLLM, *paths, label="v0.11")
    assert {r.meta["sweep"]["id"] for r in runs} == {runs[0].meta["sweep"]["id"]}
    by_level = sorted(runs, key=lambda r: r.meta["sweep"]["level"])
    assert [r.label for r in by_level] == ["v0.11 @ 2 req/s", "v0.11 @ 4 req/s", "v0.11 @ 8 req/s"]
    assert by_level[2].meta["load"] == {
        "requested_rate": 8.0,
        "concurrency": None,
        "strategy": "poisson",
        "achieved_rate": 7.9,
    }
    assert by_level[0].meta["sweep"]["axis"] == "rate"


def test_vllm_single_result_is_no_sweep() -> None:
    (run,) = read(VLLM, DATA / "vllm_bench_detailed.json")
    assert "sweep" not in run.meta
    assert run.meta["load"] == {
        "requested_rate": None,
        "concurrency": 8.0,
        "strategy": "all at once",
        "achieved_rate": 3.04,
    }


def test_vllm_deployments_in_one_file_stay_apart() -> None:
    """The real-style concatenated file: deployment "base" at 10 and inf req/s is a sweep
    of two levels; "kvcache" (one level) stays a single run."""
    base10, kvcache, base_inf = read(VLLM, DATA / "vllm_bench_summaries.jsonl")
    assert "sweep" not in kvcache.meta
    assert base10.meta["sweep"]["id"] == base_inf.meta["sweep"]["id"]
    assert [base10.meta["sweep"]["level"], base_inf.meta["sweep"]["level"]] == [0, 1]  # inf rate last
    assert base10.meta["sweep"]["axis"] == "strategy"


def test_guidellm_benchmarks_are_levels_of_one_sweep(tmp_path) -> None:
    report = json.loads(GUIDE.read_text())
    first = report["benchmarks"][0]
    for strategy, rate in (("throughput", None), ("constant", 3.0), ("constant", 1.0)):
        bench = copy.deepcopy(first)
        bench["args"]["strategy"] = {"type_": strategy, **({"rate": rate} if rate else {})}
        report["benchmarks"].append(bench)
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(report))
    runs = read(GUIDELLM, path)
    assert len(runs) == 4 and len({r.meta["sweep"]["id"] for r in runs}) == 1
    order = [
        r.meta["load"]["strategy"]
        + ("" if r.meta["load"]["requested_rate"] is None else f" {r.meta['load']['requested_rate']:g}")
        for r in sorted(runs, key=lambda r: r.meta["sweep"]["level"])
    ]
    assert order == ["synchronous", "constant 1", "constant 3", "throughput"]
    sync = next(r for r in runs if r.meta["load"]["strategy"] == "synchronous")
    assert sync.meta["load"]["concurrency"] == 1 and sync.meta["load"]["achieved_rate"] == pytest.approx(
        1.5481806532737452
    )
    assert sync.window["duration_s"] == pytest.approx(29.997201442718506)


def test_aiperf_profiles_per_concurrency_folder_are_one_sweep(tmp_path) -> None:
    src = (DATA / "aiperf_profile_export_aiperf.json").read_text()
    paths = []
    for c in (1, 8, 32):
        folder = tmp_path / "artifacts" / f"gpt-oss-20b-openai-chat-concurrency{c}"
        folder.mkdir(parents=True)
        doc = json.loads(src)
        doc["input_config"]["concurrency"] = c
        (folder / "profile_export_aiperf.json").write_text(json.dumps(doc))
        paths.append(folder / "profile_export_aiperf.json")
    runs = read(AIPERF, *paths)
    assert len({r.meta["sweep"]["id"] for r in runs}) == 1
    assert sorted(r.meta["load"]["concurrency"] for r in runs) == [1, 8, 32]
    assert runs[0].meta["sweep"]["axis"] == "concurrency"


def test_aiperf_per_request_run_has_duration_and_load() -> None:
    (run,) = read(AIPERF, DATA / "aiperf_profile_export.jsonl")
    assert run.window["duration_s"] > 0 and run.meta["load"]["achieved_rate"] > 0


def test_genai_perf_experiments_have_loads() -> None:
    (run,) = read(AIPERF, DATA / "genai_perf_profile_export.json")
    assert run.meta["load"]["concurrency"] == 4


def test_sglang_rates_are_one_sweep(tmp_path) -> None:
    lines = [json.loads(line) for line in (DATA / "sglang_bench.jsonl").read_text().splitlines() if line.strip()]
    rows = [dict(lines[0], request_rate=r) for r in (1, 2, 4)]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    runs = read(SGLANG, path)
    assert len({r.meta["sweep"]["id"] for r in runs}) == 1 and runs[0].meta["sweep"]["axis"] == "rate"


# ----------------------------------------------------------------------------- wrong types


@pytest.mark.parametrize(
    "mutate, place",
    [
        (lambda o: o.update(request_throughput="fast"), "request_throughput"),
        (lambda o: o.update(ttfts="nope"), "ttfts"),
        (lambda o: o["ttfts"].__setitem__(2, "nope"), "ttfts[2]"),
        (lambda o: o.update(mean_ttft_ms=[1, 2]), "mean_ttft_ms"),
        (lambda o: o.update(request_rate="fast"), "request_rate"),
    ],
)
def test_vllm_wrong_types_are_bad_input(tmp_path, mutate, place) -> None:
    obj = _vllm_obj()
    mutate(obj)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(obj))
    with pytest.raises(BadInput) as err:
        read(VLLM, path)
    assert str(path) in str(err.value) and place in str(err.value)


def test_aiperf_value_of_wrong_type(tmp_path) -> None:
    lines = (DATA / "aiperf_profile_export.jsonl").read_text().splitlines()
    rec = json.loads(lines[3])
    rec["metrics"]["ttft"]["value"] = "fast"
    lines[3] = json.dumps(rec)
    path = tmp_path / "profile_export.jsonl"
    path.write_text("\n".join(lines))
    with pytest.raises(BadInput, match=r"line 4: metrics\.ttft\.value.*'fast'"):
        read(AIPERF, path)
    warm = json.loads(lines[0])  # a warm-up record is checked too, though not used
    assert warm["metadata"]["credit_phase"] == "warmup"
    warm["metrics"]["ttft"]["value"] = "fast"
    lines = (DATA / "aiperf_profile_export.jsonl").read_text().splitlines()
    lines[0] = json.dumps(warm)
    path.write_text("\n".join(lines))
    with pytest.raises(BadInput, match=r"line 1: metrics\.ttft\.value"):
        read(AIPERF, path)


@pytest.mark.parametrize(
    "mutate, place",
    [
        (lambda b: b.update(metrics=[]), "benchmarks[0].metrics"),
        (lambda b: b["metrics"]["time_to_first_token_ms"].update(successful="x"), "time_to_first_token_ms.successful"),
        (lambda b: b["requests"]["successful"].__setitem__(0, "x"), "requests.successful[0]"),
        (lambda b: b["args"].update(strategy={"type_": "constant", "rate": "fast"}), "args.strategy.rate"),
    ],
)
def test_guidellm_wrong_types_are_bad_input(tmp_path, mutate, place) -> None:
    report = json.loads(GUIDE.read_text())
    mutate(report["benchmarks"][0])
    path = tmp_path / "g.json"
    path.write_text(json.dumps(report))
    with pytest.raises(BadInput) as err:
        read(GUIDELLM, path)
    assert place in str(err.value)


@pytest.mark.parametrize(
    "mutate, place",
    [
        (lambda d: d["successes"].update(latency="x"), "successes.latency"),
        (lambda d: d["successes"]["latency"]["time_to_first_token"].update(p95="fast"), "time_to_first_token.p95"),
        (lambda d: d.update(load_summary=[]), "load_summary"),
        (lambda d: d["load_summary"].update(requested_rate={"a": 1}), "load_summary.requested_rate"),
    ],
)
def test_inference_perf_wrong_types_are_bad_input(tmp_path, mutate, place) -> None:
    doc = json.loads(STAGE.read_text())
    mutate(doc)
    path = tmp_path / "stage_3_lifecycle_metrics.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(BadInput) as err:
        read(INFERENCE_PERF, path)
    assert place in str(err.value)


def test_wrong_type_cli_is_one_line_exit_2(tmp_path, wb_env) -> None:
    obj = _vllm_obj()
    obj["request_throughput"] = "fast"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(obj))
    out = run_wb("--store", f"sqlite:///{tmp_path / 'w.sqlite'}", "import", str(path))
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "request_throughput" in lines[0] and "fast" in lines[0]


@pytest.mark.parametrize(
    "section, replacement, place",
    [
        ("data:", "data: [1, 2]\n", "data: should be a mapping, not list"),
        ("data:", "data:\n  shared_prefix: 7\n", "data.shared_prefix: should be a mapping, not int"),
        ("load:", "load:\n  type: constant\n  sweep: linear\n", "load.sweep: should be a mapping, not str"),
    ],
)
def test_inference_perf_load_config_of_the_wrong_shape_is_one_line_exit_2(
    tmp_path, wb_env, section, replacement, place
) -> None:
    real = STAGE.parents[2] / "config.yaml"
    text = real.read_text()
    start = text.index(section)
    end = next((text.index(k, start + 1) for k in ("load:", "metrics:") if k in text[start + 1 :]), len(text))
    folder = tmp_path / "sweep"
    (folder / "vllm" / "results").mkdir(parents=True)
    (folder / "vllm" / "results" / STAGE.name).write_bytes(STAGE.read_bytes())
    (folder / "config.yaml").write_text(text[:start] + replacement + text[end:])
    out = run_wb("--store", f"sqlite:///{tmp_path / 'w.sqlite'}", "import", str(folder))
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "config.yaml" in lines[0] and place in lines[0]
