"""GuideLLM benchmark reports (``guidellm benchmark``, v0.2/v0.3 ``{"benchmarks": [...]}``).

One run per benchmark (one strategy of a sweep: synchronous, throughput, constant
rate ...). Metric distributions (split by successful/errored/incomplete) become the
summary from the ``successful`` split, with GuideLLM's ``p001``/``p01``/``p05`` read as
0.1 %/1 %/5 %. Per-request records become samples only when the report kept every
request; a report that kept a sample of them (``request_samples``) gives a
summary-only run with those records in a ``sampled_requests`` table, so a p95 is
never computed from a subsample. GuideLLM's ``queued_time`` is the *client*
scheduler's queue, not the server's: it is kept as ``client_queue_ms`` in the table,
never as ``queue_ms``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from store.records import Dimension, RunRecord
from workbench.errors import BadInput
from workbench.formats.inference_records import SampleBuilder, inference_run, number, request_mix, stats_block
from workbench.formats.bench_json import load_object
from workbench.importers.base import Importer, ImportOptions, Probe

MAX_BYTES = 1 << 30
METRICS = {
    "time_to_first_token_ms": ("ttft_ms", 1.0),
    "time_per_output_token_ms": ("tpot_ms", 1.0),
    "inter_token_latency_ms": ("itl_ms", 1.0),
    "request_latency": ("e2e_ms", 1000.0),
    "prompt_token_count": ("prompt_tokens", 1.0),
    "output_token_count": ("output_tokens", 1.0),
    "requests_per_second": ("request_throughput_dist", 1.0),
    "request_concurrency": ("request_concurrency", 1.0),
    "output_tokens_per_second": ("output_throughput_dist", 1.0),
}


class GuideLLMImporter(Importer):
    name = "guidellm"
    version = "1"
    description = "GuideLLM benchmark report JSON (v0.2/v0.3)"
    priority = 30

    def sniff(self, probe: Probe) -> bool:
        text = probe.stripped
        return text.startswith("{") and '"benchmarks"' in probe.text[:4096] and (
            "generative_benchmark" in probe.text or '"request_loader"' in probe.text)

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        for path in paths:
            report = _load(path)
            benchmarks = report.get("benchmarks")
            if not isinstance(benchmarks, list) or not benchmarks:
                raise BadInput(path, "no benchmarks in the report", where="benchmarks")
            for i, bench in enumerate(benchmarks):
                if not isinstance(bench, dict):
                    raise BadInput(path, "benchmark is not an object", where=f"benchmarks[{i}]")
                yield _run(bench, path, i, len(benchmarks), options)


IMPORTER = GuideLLMImporter()


def _load(path: Path) -> dict[str, Any]:
    return load_object(path, MAX_BYTES, "larger than 1 GiB; not a GuideLLM report")


def _run(bench: dict[str, Any], path: Path, index: int, count: int, options: ImportOptions) -> RunRecord:
    where = f"benchmarks[{index}]"
    metrics = bench.get("metrics") or {}
    summary: dict[str, Any] = {}
    for key, (target, scale) in METRICS.items():
        block = ((metrics.get(key) or {}).get("successful")) if isinstance(metrics.get(key), dict) else None
        stats = stats_block(block, scale)
        if stats:
            summary[target] = stats
    totals = bench.get("request_totals") or {}
    for key, target in (("successful", "requests_completed"), ("errored", "requests_failed"), ("incomplete", "requests_incomplete")):
        v = number(totals.get(key))
        if not math.isnan(v):
            summary[target] = v
    duration = number(bench.get("duration"))
    if not math.isnan(duration):
        summary["duration_s"] = duration
    if "output_tokens" in summary and "requests_completed" in summary and "mean" in summary["output_tokens"]:
        summary["total_output_tokens"] = round(summary["output_tokens"]["mean"] * summary["requests_completed"])

    requests = bench.get("requests") or {}
    records: list[tuple[dict[str, Any], float]] = []
    for status, ok in (("successful", 1.0), ("errored", 0.0), ("incomplete", math.nan)):
        for rec in requests.get(status) or []:
            if isinstance(rec, dict):
                records.append((rec, ok))
    kept_all = bool(records) and bench.get("request_samples") is None and all(
        len(requests.get(k) or []) == number(totals.get(k)) for k in ("successful", "errored", "incomplete"))
    builder = SampleBuilder()
    client_queue: list[float] = []
    for rec, ok in records:
        sched = rec.get("scheduler_info") or {}
        builder.add(
            id=str(rec.get("request_id", "")),
            prompt_tokens=rec.get("prompt_tokens"),
            output_tokens=rec.get("output_tokens"),
            ttft_ms=rec.get("time_to_first_token_ms"),
            e2e_ms=number(rec.get("request_latency")) * 1000.0,
            tpot_ms=rec.get("time_per_output_token_ms"),
            itl_ms=rec.get("inter_token_latency_ms"),
            ok=ok,
        )
        client_queue.append((number(sched.get("dequeued_time")) - number(sched.get("queued_time"))) * 1000.0)

    worker = bench.get("worker") or {}
    loader = bench.get("request_loader") or {}
    args = bench.get("args") or {}
    dims: dict[str, Dimension] = {}
    if worker.get("backend_model"):
        dims["model"] = Dimension(str(worker["backend_model"]), "declared")
    data = str(loader.get("data") or "")
    m_in, m_out = re.search(r"prompt_tokens=(\d+)", data), re.search(r"output_tokens=(\d+)", data)
    if m_in and m_out:
        dims["request_mix"] = Dimension(request_mix(float(m_in.group(1)), float(m_out.group(1))), "declared")  # type: ignore[arg-type]
    strategy = (args.get("strategy") or {}).get("type_") or "?"
    rate = (args.get("strategy") or {}).get("rate")
    dims["load"] = Dimension(f"strategy={strategy}" + (f", rate={rate}" if rate is not None else ""), "declared")
    label = options.label or f"guidellm {strategy}" + (f" rate={rate}" if rate is not None else "")
    if count > 1:
        label += f" [{index}]"
    meta = {
        "source_format": "guidellm report",
        "benchmark_id": bench.get("id_"),
        "run_id": bench.get("run_id"),
        "backend": {k: worker.get(k) for k in ("backend_type", "backend_target", "backend_model")},
        "request_loader": {k: loader.get(k) for k in ("data", "processor")},
        "where": where,
        "note": "GuideLLM's queued time is the client scheduler's, not the server's queue",
    }
    run = inference_run(label, samples=builder if kept_all else None, summary=summary, dimensions=dims, meta=meta,
                        sources=[path], window={"kind": "steady", "policy": f"guidellm {strategy}"})
    if records and not kept_all:
        table = builder.table()
        table["client_queue_ms"] = np.array(client_queue, dtype=np.float64)
        run.tables["sampled_requests"] = table
        total = number(totals.get("total"))
        of = f" of {int(total)}" if math.isfinite(total) else ""
        run.meta["sampled_requests"] = f"{len(records)}{of} requests kept by the report: summary only"
    elif kept_all:
        run.tables["client_queue"] = {"client_queue_ms": np.array(client_queue, dtype=np.float64)}
    return run
