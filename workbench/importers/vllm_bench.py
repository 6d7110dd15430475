"""vLLM ``benchmark_serving.py`` / ``vllm bench serve --save-result`` result JSON.

Every version's quirks: one object per file or several appended one per line
(``--append-result``, or wrapper scripts concatenating results), the
``"request_goodput:"`` key with a stray colon, ``request_rate: "inf"`` as a string,
per-request arrays present or absent (``--save-detailed``), and summaries holding only
the percentiles the run asked for (p99 by default: a p95 is then absent, not derived).
``--metadata KEY=VALUE`` pairs sit at the top level as strings; known ones become
declared dimensions (``gpu`` -> hardware, ``tp`` -> topology, ``version`` -> engine
revision, engine knobs -> engine_config).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from store.records import Dimension, RunRecord
from workbench.formats import bench_json
from workbench.formats.engine_config import dimensions as engine_dimensions
from workbench.formats.key_sets import KeySet, matching
from workbench.formats.inference_records import RequestColumns, inference_run, number, request_mix, strict_number
from workbench.formats.load_sweep import ALL_AT_ONCE, LoadDoc, group_levels, load_meta
from workbench.importers.base import Importer, ImportOptions, Probe

if TYPE_CHECKING:
    import numpy as np

KNOWN = {
    "date",
    "endpoint_type",
    "backend",
    "label",
    "model_id",
    "tokenizer_id",
    "num_prompts",
    "request_rate",
    "burstiness",
    "max_concurrency",
    "ramp_up_strategy",
    "ramp_up_start_rps",
    "ramp_up_end_rps",
    "rtfx",
    "generated_texts",
    "start_times",
    "queue_times",
    "rps_change_events",
    *bench_json.ARRAY_KEYS,
    *bench_json.SCALARS,
}
_STAT = re.compile(r"^(mean|median|std|p\d+(\.\d+)?)_")
HARDWARE_KEYS = ("gpu", "gpus", "hardware", "accelerator", "device")
REVISION_KEYS = ("engine_revision", "vllm_version", "version", "image", "engine_version")
ENGINE_KNOBS = {
    "max_num_seqs": int,
    "max_num_batched_tokens": int,
    "chunked_prefill": str,
    "enable_chunked_prefill": str,
    "prefix_caching": str,
    "enable_prefix_caching": str,
    "dtype": str,
    "quantization": str,
    "kv_cache_dtype": str,
    "tp": int,
    "tensor_parallel_size": int,
    "pp": int,
    "pipeline_parallel_size": int,
    "enforce_eager": str,
}


class VllmBenchImporter(Importer):
    name = "vllm-bench"
    version = "1"
    description = "vLLM benchmark_serving / vllm bench serve result JSON (one object, or one per line)"
    priority = 30

    # Its own words: the --model value as "model_id", beside its throughput or TTFT fields.
    key_sets = (
        KeySet(
            "benchmark_serving.py 0.4-0.6 (--save-result)",
            ("model_id", "request_throughput", "mean_ttft_ms"),
            sample="inference/vllm_bench_summaries.jsonl",
            origin="minimal, derived from vllm/benchmarks/benchmark_serving.py (0.4-0.6)",
        ),
        KeySet(
            "vllm bench serve (0.7+, endpoint_type)",
            ("model_id", "endpoint_type", "request_throughput"),
            sample="inference/vllm_bench_serve.json",
            origin="minimal, derived from vllm/benchmarks/serve.py (vllm bench serve)",
        ),
        KeySet(
            "per-request arrays (--save-detailed)",
            ("model_id", "ttfts"),
            sample="inference/vllm_bench_detailed.json",
            origin="minimal, derived from vllm/benchmarks/benchmark_serving.py",
        ),
        KeySet(
            "latency statistics only (no throughput, no duration)",
            ("model_id",),
            any_of=("mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "mean_itl_ms"),
            sample="shapes/vllm_statistics_only.json",
            origin="minimal, derived from vllm/benchmarks/serve.py, kept to its TTFT/TPOT/ITL statistics",
        ),
        KeySet(
            "throughput only (no TTFT statistics)",
            ("model_id", "request_throughput"),
            sample="inference/vllm_bench_summaries.jsonl",
            origin="minimal, derived from vllm/benchmarks/benchmark_serving.py",
        ),
    )

    def sniff(self, probe: Probe) -> bool:
        return probe.stripped.startswith("{") and matching(self.key_sets, probe.text) is not None

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        runs: list[RunRecord] = []
        for path in paths:
            objs = list(bench_json.read_objects(path))
            for index, (line, obj) in enumerate(objs):
                runs.append(result_run(obj, path, line, index if len(objs) > 1 else None, options))
        yield from group_levels(runs, "vllm bench", options.label)


IMPORTER = VllmBenchImporter()


def _bool(value: object) -> bool | None:
    s = str(value).strip().lower()
    return True if s in ("1", "true", "yes", "on") else False if s in ("0", "false", "no", "off") else None


def result_run(
    obj: Mapping[str, object], path: Path, line: int, index: int | None, options: ImportOptions
) -> RunRecord:
    where = f"line {line}"
    metadata = {
        k: v
        for k, v in obj.items()
        if k not in KNOWN and not _STAT.match(k) and not k.startswith(("probe_", "spec_decode_", "diffusion_"))
    }
    dims = _declared_dimensions(obj, metadata)
    in_len = number(metadata.get("input_len", metadata.get("random_input_len")))
    out_len = number(metadata.get("output_len", metadata.get("random_output_len")))
    mix = request_mix(in_len, out_len, "configured")
    if mix:
        dims["request_mix"] = Dimension(mix, "declared")
    rate = obj.get("request_rate")
    workload = _workload(obj, rate)
    dims["load"] = Dimension(
        ", ".join(f"{k}={workload[k]}" for k in ("request_rate", "burstiness", "max_concurrency", "num_prompts")),
        "declared",
    )
    if isinstance(rate, str) and rate.strip().lower() not in ("inf", "infinity"):
        strict_number(rate, path, f"{where}: request_rate")
    summary = bench_json.flat_summary(obj, path, where)
    planned = strict_number(obj.get("num_prompts"), path, f"{where}: num_prompts")
    if planned > 0:  # every prompt is sent: completed against planned is the error rate of a summary
        summary["requests_planned"] = planned
    samples, tables = _per_request(obj, path, where)
    quirks = _quirks(obj, rate, samples)
    meta = {
        "source_format": "vllm bench result",
        "date": obj.get("date"),
        "workload": workload,
        "metadata": metadata,
        "line": line,
        "quirks": quirks,
    }
    if not math.isnan(in_len) or not math.isnan(out_len):
        meta["declared_lengths"] = {"input_len": in_len, "output_len": out_len}
    meta["load"] = _load(obj, rate, summary, path, where)
    if "duration_s" in summary:
        meta["duration_s"] = summary["duration_s"]
    setup = {k: v for k, v in metadata.items() if k not in ("date",)}
    meta["_setup"] = json.dumps(
        [obj.get("model_id"), obj.get("backend"), obj.get("label"), setup], sort_keys=True, default=str
    )
    meta["_sweep_label"] = _default_label(obj, metadata, with_load=False)
    window: dict[str, object] = {"kind": "steady"}
    if "duration_s" in summary:
        window["duration_s"] = summary["duration_s"]
    if isinstance(obj.get("num_warmups"), int):
        window["warmup_excluded"] = obj["num_warmups"]  # only when the file says
    run = inference_run(
        _label(obj, metadata, options, index, line),
        samples=samples,
        summary=summary,
        dimensions=dims,
        meta=meta,
        sources=[path],
        window=window,
    )
    if "request_mix" not in run.dimensions:
        _derive_mix(run, summary)
    run.tables.update(tables)
    return run


def _workload(obj: Mapping[str, object], rate: object) -> dict[str, object]:
    """The benchmark as the file states it: the tool, the backend and the load it was asked to make."""
    return {
        "tool": "vllm bench serve" if "endpoint_type" in obj else "benchmark_serving.py",
        "backend": obj.get("backend"),
        "request_rate": rate if isinstance(rate, str) else number(rate) if rate is not None else None,
        "burstiness": obj.get("burstiness"),
        "max_concurrency": obj.get("max_concurrency"),
        "num_prompts": obj.get("num_prompts"),
    }


def _per_request(
    obj: Mapping[str, object], path: Path, where: str
) -> tuple[RequestColumns | None, dict[str, dict[str, np.ndarray]]]:
    """The per-request samples and the inter-token table, when the file saved them (--save-detailed)."""
    if not bench_json.has_arrays(obj, path, where):
        return None, {}
    samples = bench_json.samples_from_arrays(obj, path, where)
    itl = bench_json.itl_table(obj, path, where)
    return samples, ({"itl": itl} if itl else {})


def _label(
    obj: Mapping[str, object], metadata: Mapping[str, object], options: ImportOptions, index: int | None, line: int
) -> str:
    """The label given, the file's, or one made from the setup; a file of many results tells them apart."""
    label = options.label or str(obj.get("label") or "") or _default_label(obj, metadata)
    if index is None:
        return label
    return f"{label} #{index + 1}" if options.label else f"{label} (line {line})"


def _load(obj: Mapping[str, object], rate: object, summary: Mapping[str, object], path: Path, where: str) -> LoadDoc:
    """The load the benchmark asked for (rate, concurrency, arrival) and the rate it achieved."""
    rate_value = None if isinstance(rate, str) else strict_number(rate, path, f"{where}: request_rate")
    concurrency = strict_number(obj.get("max_concurrency"), path, f"{where}: max_concurrency")
    burstiness = strict_number(obj.get("burstiness"), path, f"{where}: burstiness")
    if rate_value is not None and math.isnan(rate_value):
        rate_value = None
    return load_meta(
        requested_rate=rate_value,
        concurrency=None if math.isnan(concurrency) else concurrency,
        strategy=_arrival(rate, rate_value, burstiness),
        achieved_rate=summary.get("request_throughput"),
    )


def _declared_dimensions(obj: Mapping[str, object], metadata: Mapping[str, object]) -> dict[str, Dimension]:
    """The model, the hardware, the engine's revision and its configuration, as the file declares them."""
    dims: dict[str, Dimension] = {}
    if obj.get("model_id"):
        dims["model"] = Dimension(str(obj["model_id"]), "declared")
    for name, keys in (("hardware", HARDWARE_KEYS), ("engine_revision", REVISION_KEYS)):
        stated = next((metadata[key] for key in keys if metadata.get(key)), None)
        if stated is not None:
            dims[name] = Dimension(str(stated), "declared")
    dims.update(engine_dimensions(_engine_config(metadata), "declared"))
    return dims


_KNOB_KEYS = {
    "enable_chunked_prefill": "chunked_prefill",
    "enable_prefix_caching": "prefix_caching",
    "tensor_parallel_size": "tp",
    "pipeline_parallel_size": "pp",
}


def _engine_config(metadata: Mapping[str, object]) -> dict[str, object]:
    """The engine_config object (formats/engine_config.py) of the knobs the metadata states."""
    config: dict[str, object] = {}
    for key, kind in ENGINE_KNOBS.items():
        if key not in metadata:
            continue
        canon, value = _KNOB_KEYS.get(key, key), metadata[key]
        if kind is int:
            value = int(number(value)) if not math.isnan(number(value)) else value
        elif canon in ("chunked_prefill", "prefix_caching"):
            value = _bool(value)
        elif key == "enforce_eager":
            canon, value = "cuda_graphs", (None if _bool(value) is None else not _bool(value))
        if value is not None:
            config[canon] = value
    return config


def _quirks(obj: Mapping[str, object], rate: object, samples: object) -> list[str]:
    quirks = []
    if "request_goodput:" in obj:
        quirks.append("'request_goodput:' key (stray colon, older vLLM)")
    if isinstance(rate, str):
        quirks.append(f"request_rate given as the string {rate!r}")
    if samples is None:
        quirks.append("no per-request arrays: summary only (sample-level figures unknown)")
    return quirks


def _arrival(rate: object, rate_value: float | None, burstiness: float) -> str | None:
    """How requests arrived: all at once (rate inf), Poisson (burstiness 1) or gamma; None when not stated."""
    if rate is None:
        return None
    if rate_value is None:
        return ALL_AT_ONCE
    if burstiness == 1.0:
        return "poisson"
    return f"gamma (burstiness {burstiness:g})" if not math.isnan(burstiness) else None


def _derive_mix(run: RunRecord, summary: Mapping[str, object]) -> None:
    """The request mix from the summary's token totals (mean lengths), when the file declared none."""
    completed, tin, tout = (
        number(summary.get(k)) for k in ("requests_completed", "total_input_tokens", "total_output_tokens")
    )
    if completed > 0:
        mix = request_mix(tin / completed, tout / completed, "mean")
        if mix:
            run.dimensions["request_mix"] = Dimension(mix, "derived")


def _default_label(obj: Mapping[str, object], metadata: Mapping[str, object], with_load: bool = True) -> str:
    model = str(obj.get("model_id") or "model?").rstrip("/").rsplit("/", 1)[-1]
    parts = [str(obj.get("backend") or "vllm"), model]
    if with_load:
        parts.append(f"rate={obj.get('request_rate')}")
        if obj.get("max_concurrency") is not None:
            parts.append(f"concurrency={obj.get('max_concurrency')}")
    for key in ("deployment", "label", "tag"):
        if metadata.get(key):
            parts.append(str(metadata[key]))
    if with_load and obj.get("date"):
        parts.append(str(obj["date"]))
    return " ".join(parts)
