"""SGLang ``python -m sglang.bench_serving`` results: JSON Lines, one object per run.

Since late 2025 each line embeds ``server_info`` (the server's own ``/get_server_info``,
null when that request failed): the best engine-configuration source any benchmark
client writes, recorded as ``measured``; older lines have none (``key_sets``).
There is no top-level model field (the model path is in ``server_info``) and no p95
TTFT; ``--output-details`` adds the same per-request arrays as vLLM's benchmark.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

from store.records import Dimension, RunRecord
from workbench.formats import bench_json, engine_config
from workbench.formats.key_sets import KeySet, matching
from workbench.formats.inference_records import as_object, inference_run, number, request_mix, strict_number
from workbench.formats.load_sweep import ALL_AT_ONCE, group_levels, load_meta
from workbench.importers.base import Importer, ImportOptions, Probe


class SglangBenchImporter(Importer):
    name = "sglang-bench"
    version = "1"
    description = "SGLang bench_serving JSONL results (with server_info)"
    priority = 30

    # Its own words: the /get_server_info response and the e2e-latency names.
    key_sets = (
        # Checked against the writer's result dict (python/sglang/bench_serving.py, docs/importers.md
        # "Key sets" says at which commits): late 2025 adds server_info (null when the
        # server's /get_server_info failed), mid 2025 has accept_length but no server_info.
        KeySet(
            "bench_serving 2025 (with server_info)",
            ("server_info", "mean_ttft_ms"),
            sample="inference/sglang_bench.jsonl",
            origin="minimal, derived from sglang/bench_serving.py (2025)",
        ),
        KeySet(
            "bench_serving mid 2025 (accept_length, no server_info)",
            ("accept_length", "mean_ttft_ms"),
            sample="inference/sglang_bench_2025_mid.jsonl",
            origin="minimal, derived from sglang/bench_serving.py at 0033168f (mid 2025)",
        ),
        KeySet(
            "bench_serving late 2024 (mean and p99 TTFT, no server_info)",
            ("mean_e2e_latency_ms", "mean_ttft_ms"),
            sample="inference/sglang_bench_2024_late.jsonl",
            origin="minimal, derived from sglang/bench_serving.py (v0.3, late 2024)",
        ),
        KeySet(
            "bench_serving 2024 (median TTFT only)",
            ("mean_e2e_latency_ms", "median_ttft_ms", "total_output_tokens_retokenized"),
            sample="inference/sglang_bench_2024.jsonl",
            origin="minimal, derived from sglang/bench_serving.py (v0.2, 2024)",
        ),
    )

    def sniff(self, probe: Probe) -> bool:
        return probe.stripped.startswith("{") and matching(self.key_sets, probe.text) is not None

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        runs = []
        for path in paths:
            objs = list(bench_json.read_objects(path))
            for index, (line, obj) in enumerate(objs):
                runs.append(_run(obj, path, line, index if len(objs) > 1 else None, options))
        yield from group_levels(runs, "sglang bench", options.label)


IMPORTER = SglangBenchImporter()


def _run(obj: Mapping[str, object], path: Path, line: int, index: int | None, options: ImportOptions) -> RunRecord:
    info = as_object(obj.get("server_info"), path, f"line {line}: server_info")
    config = engine_config.from_sglang_server_info(info)
    dims = _server_dimensions(obj, info, config)
    workload = {
        k: obj.get(k)
        for k in (
            "backend",
            "dataset_name",
            "request_rate",
            "max_concurrency",
            "random_input_len",
            "random_output_len",
            "random_range_ratio",
            "sharegpt_output_len",
        )
    }
    dims["load"] = Dimension(", ".join(f"{k}={workload[k]}" for k in ("request_rate", "max_concurrency")), "declared")
    where = f"line {line}"
    summary = bench_json.flat_summary(obj, path, where)
    samples = bench_json.samples_from_arrays(obj, path, where) if bench_json.has_arrays(obj, path, where) else None
    label = (
        options.label
        or " ".join(
            str(x)
            for x in (
                "sglang",
                str(config.get("model", "")).rsplit("/", 1)[-1],
                f"rate={obj.get('request_rate')}",
                obj.get("tag") or "",
            )
            if x
        ).strip()
    )
    if index is not None:
        label = f"{label} (line {line})"
    meta = {
        "source_format": "sglang bench_serving",
        "workload": workload,
        "server_info": info,
        "line": line,
        "quirks": [] if samples is not None else ["no per-request arrays: summary only (sample-level figures unknown)"],
    }
    rate = obj.get("request_rate")
    rate_value = None if isinstance(rate, str) else strict_number(rate, path, f"{where}: request_rate")
    concurrency = strict_number(obj.get("max_concurrency"), path, f"{where}: max_concurrency")
    meta["load"] = load_meta(
        requested_rate=rate_value,
        concurrency=concurrency,
        strategy=_strategy(rate),
        achieved_rate=summary.get("request_throughput"),
    )
    setup = {k: v for k, v in workload.items() if k not in ("request_rate", "max_concurrency")}
    meta["_setup"] = json.dumps([config.get("model"), obj.get("tag"), setup], sort_keys=True, default=str)
    meta["_sweep_label"] = " ".join(
        str(x) for x in ("sglang", str(config.get("model", "")).rsplit("/", 1)[-1], obj.get("tag") or "") if x
    ).strip()
    window: dict[str, object] = {"kind": "steady"}
    if "duration_s" in summary:
        window["duration_s"] = summary["duration_s"]
    run = inference_run(
        label, samples=samples, summary=summary, dimensions=dims, meta=meta, sources=[path], window=window
    )
    if "request_mix" not in run.dimensions:
        _derive_mix(run, summary)
    itl = bench_json.itl_table(obj, path, where)
    if itl:
        run.tables["itl"] = itl
    return run


def _server_dimensions(
    obj: Mapping[str, object], info: Mapping[str, object], config: dict[str, object]
) -> dict[str, Dimension]:
    """What the server reported (model, engine configuration, version) and the request mix the run configured."""
    dims: dict[str, Dimension] = {}
    if config.get("model"):
        dims["model"] = Dimension(str(config["model"]), "measured")
    dims.update(engine_config.dimensions(config, "measured"))
    if info.get("version"):
        dims["engine_revision"] = Dimension(f"sglang {info['version']}", "measured")
    if obj.get("dataset_name") == "random" and obj.get("random_range_ratio") == 1.0:
        # Fixed lengths only when range ratio is 1 (SGLang's 0 means uniform [1, len]).
        mix = request_mix(number(obj.get("random_input_len")), number(obj.get("random_output_len")), "configured")
        if mix:
            dims["request_mix"] = Dimension(mix, "declared")
    return dims


def _derive_mix(run: RunRecord, summary: Mapping[str, object]) -> None:
    """The request mix from the summary's token totals (mean lengths), when the run configured none."""
    if number(summary.get("requests_completed")) <= 0:
        return
    c = summary["requests_completed"]
    mix = request_mix(
        number(summary.get("total_input_tokens")) / c, number(summary.get("total_output_tokens")) / c, "mean"
    )
    if mix:
        run.dimensions["request_mix"] = Dimension(mix, "derived")


def _strategy(rate: object) -> str | None:
    """How requests were sent: Poisson at a rate, every one at once (``"inf"``), or the tool's word."""
    if rate is None:
        return None
    if not isinstance(rate, str):
        return "poisson"
    return ALL_AT_ONCE if rate.strip().lower() in ("inf", "infinity") else rate
