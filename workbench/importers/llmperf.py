"""LLMPerf (ray-project/llmperf ``token_benchmark_ray.py``) results: ``<name>_summary.json`` and
``<name>_individual_responses.json``.

What the writer puts there (results version ``2023-08-31``): the individual responses are a
list of the client's per-request metrics (``ttft_s``, ``end_to_end_latency_s``,
``number_input_tokens``, ``number_output_tokens``, ``error_code`` None on success, the code
of the HTTP error otherwise, with ``ttft_s`` and the latency left at 0); the summary is that
run's metadata (``model``, ``mean_input_tokens``, ``num_concurrent_requests`` ...) and
``metrics_summary`` flattened with ``_`` (``results_ttft_s_quantiles_p95``,
``results_ttft_s_mean``, ``results_num_requests_started``, ``results_number_errors`` ...),
computed over the requests without an error code.

A summary and the responses of one name in one folder are one run: the requests are its
samples and the summary its stated figures; either file alone is a run too. A request that
came back empty (no error code, no token) is a failed request like any other: the inference
lens's check decides that, not this reader. LLMPerf's ``inter_token_latency_s`` is the sum of
every gap *including the first token's wait* over the output tokens: it is neither vLLM's
ITL nor TPOT, so it is kept under its own name (``llmperf_inter_token_ms``), never as ITL;
TPOT is (E2E − TTFT) / (output − 1), as for the other clients.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

from store.records import Dimension, RunRecord
from workbench.errors import BadInput
from workbench.formats.inference_records import (
    SampleBuilder,
    Summary,
    as_object,
    inference_run,
    request_mix,
    stats_block,
    strict_number,
)
from workbench.formats.key_sets import KeySet, matching
from workbench.formats.load_sweep import load_meta
from workbench.importers.base import Importer, ImportOptions, Probe, probe_file, read_bounded
from workbench.limits import MAX_ROWS, exceeded

MAX_BYTES = 1 << 30
SUMMARY_SUFFIX = "_summary"
RESPONSES_SUFFIX = "_individual_responses"
# LLMPerf's metric -> (summary key, scale to ms or 1).
METRICS = {
    "ttft_s": ("ttft_ms", 1000.0),
    "end_to_end_latency_s": ("e2e_ms", 1000.0),
    "inter_token_latency_s": ("llmperf_inter_token_ms", 1000.0),
    "number_input_tokens": ("prompt_tokens", 1.0),
    "number_output_tokens": ("output_tokens", 1.0),
    "request_output_throughput_token_per_s": ("request_output_throughput", 1.0),
}
_STAT = re.compile(r"^results_(?P<metric>[a-z_]+?)_(?:quantiles_)?(?P<stat>p\d+|mean|min|max|stddev)$")


class LLMPerfImporter(Importer):
    name = "llmperf"
    version = "1"
    description = "LLMPerf (ray-project/llmperf) token benchmark: *_summary.json and *_individual_responses.json"
    priority = 35

    key_sets = (
        KeySet(
            "token_benchmark_ray.py summary (results version 2023-08-31)",
            ("results_ttft_s_mean", "results_num_completed_requests"),
            sample="shapes/llmperf/meta-llama-Llama-2-7b-chat-hf_550_150_summary.json",
            origin="minimal, derived from ray-project/llmperf token_benchmark_ray.py (metrics_summary, flatten_dict)",
        ),
        KeySet(
            "token_benchmark_ray.py individual responses",
            ("ttft_s", "end_to_end_latency_s", "number_output_tokens"),
            sample="shapes/llmperf/meta-llama-Llama-2-7b-chat-hf_550_150_individual_responses.json",
            origin="minimal, derived from ray-project/llmperf openai_chat_completions_client.py and common_metrics.py",
        ),
    )

    def sniff(self, probe: Probe) -> bool:
        return probe.stripped.startswith(("{", "[")) and matching(self.key_sets, probe.text) is not None

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        groups: dict[tuple[Path, str], dict[str, Path]] = {}
        for path in paths:
            kind, stem = _kind(path)
            groups.setdefault((path.parent, stem), {})[kind] = path
        for (_folder, stem), files in sorted(groups.items()):
            yield _run(stem, files.get("summary"), files.get("responses"), options)


IMPORTER = LLMPerfImporter()


def _kind(path: Path) -> tuple[str, str]:
    """``("summary" | "responses", the name both files share)``: by content, the name only pairs them."""
    responses = probe_file(path).stripped.startswith("[")
    stem = path.stem
    for suffix in (SUMMARY_SUFFIX, RESPONSES_SUFFIX):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    return ("responses" if responses else "summary"), stem


def _load(path: Path) -> object:
    data = read_bounded(path, MAX_BYTES, "larger than 1 GiB; not an LLMPerf result")
    try:
        # json.dump writes NaN for a metric pandas could not compute: unknown, never a number.
        return json.loads(data.decode("utf-8", errors="replace"), parse_constant=lambda _c: None)
    except (ValueError, RecursionError) as exc:
        raise BadInput(
            path, f"invalid JSON ({getattr(exc, 'msg', exc)}; truncated?)", where=f"line {getattr(exc, 'lineno', '?')}"
        ) from None


def _summary(doc: Mapping[str, object], path: Path) -> Summary:
    """The flattened statistics as ``meta["summary"]`` (ms, statistics named as wb names them)."""
    blocks: dict[str, dict[str, object]] = {}
    for key, value in doc.items():
        m = _STAT.match(key)
        if m and m.group("metric") in METRICS:
            stat = "std" if m.group("stat") == "stddev" else m.group("stat")
            blocks.setdefault(m.group("metric"), {})[stat] = value
    summary: Summary = {}
    for metric, raw in blocks.items():
        target, scale = METRICS[metric]
        block = stats_block(raw, scale, path, metric)
        if block:
            summary[target] = block
    for key, target, scale in (
        ("results_num_completed_requests", "requests_completed", 1.0),
        ("results_number_errors", "requests_failed", 1.0),
        ("results_num_requests_started", "requests_planned", 1.0),
        ("results_mean_output_throughput_token_per_s", "output_throughput", 1.0),
        ("results_num_completed_requests_per_min", "request_throughput", 1 / 60),
    ):
        v = strict_number(doc.get(key), path, key)
        if not math.isnan(v):
            summary[target] = v * scale
    return summary


def _samples(rows: object, path: Path) -> SampleBuilder:
    if not isinstance(rows, list):
        raise BadInput(path, "expected a list of responses")
    if len(rows) > MAX_ROWS:
        raise exceeded(path, f"holds {len(rows):,} responses, more than", f"{MAX_ROWS:,}")
    builder = SampleBuilder()
    for i, raw in enumerate(rows):
        row = as_object(raw, path, f"[{i}]")

        def num(key: str, scale: float = 1.0, row: dict[str, object] = row, i: int = i) -> float:
            return strict_number(row.get(key), path, f"[{i}].{key}") * scale

        ttft, e2e, out = num("ttft_s", 1000.0), num("end_to_end_latency_s", 1000.0), num("number_output_tokens")
        error = row.get("error_code")
        failed = error is not None and error != ""
        with np.errstate(invalid="ignore"):
            tpot = (e2e - ttft) / (out - 1) if out > 1 and not failed else math.nan
        builder.add(
            str(i),
            prompt_tokens=num("number_input_tokens"),
            output_tokens=math.nan if failed else out,
            ttft_ms=math.nan if failed else ttft,
            e2e_ms=math.nan if failed else e2e,
            tpot_ms=tpot,
            ok=0.0 if failed else 1.0,
        )
    return builder


def _run(stem: str, summary_path: Path | None, responses_path: Path | None, options: ImportOptions) -> RunRecord:
    doc = as_object(_load(summary_path), summary_path, "the summary") if summary_path else {}
    if summary_path and "results_ttft_s_mean" not in doc and "results_num_completed_requests" not in doc:
        raise BadInput(summary_path, "an LLMPerf summary without results (no results_ttft_s_mean)")
    summary = _summary(doc, summary_path) if summary_path else {}
    samples = _samples(_load(responses_path), responses_path) if responses_path else None
    dims: dict[str, Dimension] = {}
    if doc.get("model"):
        dims["model"] = Dimension(str(doc["model"]), "declared")
    tokens_in, tokens_out = (
        strict_number(doc.get(k), summary_path, k) for k in ("mean_input_tokens", "mean_output_tokens")
    )
    mix = request_mix(tokens_in, tokens_out, "configured")
    if mix:
        dims["request_mix"] = Dimension(mix, "declared")
    concurrency = strict_number(doc.get("num_concurrent_requests"), summary_path, "num_concurrent_requests")
    label = options.label or str(doc.get("name") or stem).removesuffix(SUMMARY_SUFFIX)
    meta: dict[str, object] = {
        "source_format": "llmperf token benchmark",
        "results_version": doc.get("version"),
        "timestamp": doc.get("timestamp"),
        "error_code_frequency": doc.get("results_error_code_frequency"),
        "load": load_meta(
            concurrency=None if math.isnan(concurrency) else concurrency,
            strategy="closed loop" if not math.isnan(concurrency) else None,
            achieved_rate=summary.get("request_throughput"),
        ),
        "notes": [
            "LLMPerf's inter_token_latency_s counts the first token's wait in: kept as llmperf_inter_token_ms, not ITL"
        ],
    }
    sources = [p for p in (summary_path, responses_path) if p is not None]
    return inference_run(
        label,
        samples=samples,
        summary=summary,
        dimensions=dims,
        meta=meta,
        sources=sources,
        window={"kind": "steady", "policy": "LLMPerf's requests, all of them (it runs no warm-up)"},
    )
