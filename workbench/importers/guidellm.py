"""GuideLLM benchmark reports (``guidellm benchmark``, ``{"benchmarks": [...]}``: the layouts in ``key_sets``).

One run per benchmark (one strategy of a sweep: synchronous, throughput, constant
rate ...), each with its load in ``meta["load"]``; the benchmarks of one report are the
levels of one sweep (``meta["sweep"]``). A value of the wrong type is bad input. Metric distributions (split by
successful/errored/incomplete) become the
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
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

from store.records import Dimension, RunRecord
from workbench.errors import BadInput
from workbench.formats.key_sets import KeySet, matching
from workbench.formats.inference_records import (
    SampleBuilder,
    Summary,
    as_list,
    as_object,
    inference_run,
    number,
    request_mix,
    stats_block,
    strict_number,
)
from workbench.formats.load_sweep import load_meta, mark_sweep
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

    # Checked against the writer's models (docs/importers.md "Key sets" names the commits): every
    # version writes type_ "generative_benchmark"; the scheduler refactor moved the strategy,
    # backend and request loader under "scheduler" and "benchmarker" (no "worker", "args",
    # "request_loader" any more). Most specific first: ``matching`` takes the first that fits.
    key_sets = (
        KeySet(
            "scheduler-refactor report (scheduler, benchmarker)",
            ("benchmarks", "generative_benchmark", "benchmarker"),
            sample="inference/guidellm_scheduler_report.json",
            origin="minimal, derived from vllm-project/guidellm src/guidellm/benchmark/objects.py at 414febe6",
        ),
        KeySet(
            "report with args, worker, request_loader (type_ generative_benchmark)",
            ("benchmarks", "generative_benchmark"),
            sample="inference/real/guidellm/benchmarks_stripped.json",
            origin="real (neuralmagic/guidellm test data)",
        ),
        KeySet(
            "report with request_loader",
            ("benchmarks", "request_loader"),
            sample="inference/guidellm_v03.json",
            origin="minimal, derived from neuralmagic/guidellm src/guidellm/benchmark/benchmark.py at f3b95006",
        ),
    )

    def sniff(self, probe: Probe) -> bool:
        return (
            probe.stripped.startswith("{")
            and '"benchmarks"' in probe.text[:4096]
            and matching(self.key_sets, probe.text) is not None
        )

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        for path in paths:
            report = _load(path)
            benchmarks = report.get("benchmarks")
            if not isinstance(benchmarks, list) or not benchmarks:
                raise BadInput(path, "no benchmarks in the report", where="benchmarks")
            runs = []
            for i, bench in enumerate(benchmarks):
                if not isinstance(bench, dict):
                    raise BadInput(path, "benchmark is not an object", where=f"benchmarks[{i}]")
                runs.append(_run(bench, path, i, len(benchmarks), options))
            # The benchmarks of one report are the levels of one sweep (its profile).
            label = options.label or f"guidellm {path.stem}"
            yield from mark_sweep(
                runs, tool="guidellm", label=label, parts=[str(path.resolve())], relabel=bool(options.label)
            )


IMPORTER = GuideLLMImporter()


def _load(path: Path) -> dict[str, object]:
    return load_object(path, MAX_BYTES, "larger than 1 GiB; not a GuideLLM report")


def _run(bench: Mapping[str, object], path: Path, index: int, count: int, options: ImportOptions) -> RunRecord:
    where = f"benchmarks[{index}]"
    summary, totals, duration = _summary(bench, path, where)

    requests = as_object(bench.get("requests"), path, f"{where}.requests")
    records: list[tuple[dict[str, object], float, str]] = []
    for status, ok in (("successful", 1.0), ("errored", 0.0), ("incomplete", math.nan)):
        for r, rec in enumerate(as_list(requests.get(status), path, f"{where}.requests.{status}")):
            records.append(
                (as_object(rec, path, f"{where}.requests.{status}[{r}]"), ok, f"{where}.requests.{status}[{r}]")
            )
    kept_all = (
        bool(records)
        and bench.get("request_samples") is None
        and all(len(requests.get(k) or []) == number(totals.get(k)) for k in ("successful", "errored", "incomplete"))
    )
    builder, client_queue = _samples(records, path)
    worker, loader, strategy_obj, backend = _sections(bench, path, where)
    dims = _declared(worker, backend, loader)
    strategy = str(strategy_obj.get("type_") or "?")
    rate = strategy_obj.get("rate")
    rate_value = strict_number(rate, path, f"{where}.args.strategy.rate")
    streams = strict_number(strategy_obj.get("streams"), path, f"{where}.args.strategy.streams")
    achieved = summary.get("request_throughput_dist", {}).get("mean")
    dims["load"] = Dimension(f"strategy={strategy}" + (f", rate={rate}" if rate is not None else ""), "declared")
    label = options.label or f"guidellm {strategy}" + (f" rate={rate}" if rate is not None else "")
    if count > 1:
        label += f" [{index}]"
    meta = {
        "source_format": "guidellm report",
        "benchmark_id": bench.get("id_"),
        "run_id": bench.get("run_id"),
        "backend": {k: worker.get(k) for k in ("backend_type", "backend_target", "backend_model")}
        if worker
        else {k: backend.get(k) for k in ("type_", "target", "model") if k in backend},
        "request_loader": {k: loader.get(k) for k in ("data", "processor")},
        "where": where,
        "note": "GuideLLM's queued time is the client scheduler's, not the server's queue",
        # synchronous = one request at a time; throughput = as fast as possible.
        "load": load_meta(
            requested_rate=rate_value if strategy in ("constant", "poisson") else None,
            concurrency=1 if strategy == "synchronous" else streams if strategy == "concurrent" else None,
            strategy=strategy,
            achieved_rate=achieved,
        ),
    }
    if not math.isnan(duration):
        meta["duration_s"] = duration
    window: dict[str, object] = {"kind": "steady", "policy": f"guidellm {strategy}"}
    if not math.isnan(duration):
        window["duration_s"] = duration
    run = inference_run(
        label,
        samples=builder if kept_all else None,
        summary=summary,
        dimensions=dims,
        meta=meta,
        sources=[path],
        window=window,
    )
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


def _summary(bench: Mapping[str, object], path: Path, where: str) -> tuple[Summary, Mapping[str, object], float]:
    """The report's own figures (successful requests' metrics, request totals, duration), its totals and duration."""
    metrics = as_object(bench.get("metrics"), path, f"{where}.metrics")
    summary: Summary = {}
    for key, (target, scale) in METRICS.items():
        split = as_object(metrics.get(key), path, f"{where}.metrics.{key}")
        stats = stats_block(split.get("successful"), scale, path, f"{where}.metrics.{key}.successful")
        if stats:
            summary[target] = stats
    totals = as_object(bench.get("request_totals"), path, f"{where}.request_totals")
    for key, target in (
        ("successful", "requests_completed"),
        ("errored", "requests_failed"),
        ("incomplete", "requests_incomplete"),
    ):
        v = strict_number(totals.get(key), path, f"{where}.request_totals.{key}")
        if not math.isnan(v):
            summary[target] = v
    duration = strict_number(bench.get("duration"), path, f"{where}.duration")
    if not math.isnan(duration):
        summary["duration_s"] = duration
    if "output_tokens" in summary and "requests_completed" in summary and "mean" in summary["output_tokens"]:
        summary["total_output_tokens"] = round(summary["output_tokens"]["mean"] * summary["requests_completed"])
    return summary, totals, duration


def _samples(records: list[tuple[dict[str, object], float, str]], path: Path) -> tuple[SampleBuilder, list[float]]:
    """The requests the report kept, as samples, and each one's time in the client's scheduler queue."""
    builder = SampleBuilder()
    client_queue: list[float] = []
    for rec, ok, at in records:
        sched = as_object(rec.get("scheduler_info"), path, f"{at}.scheduler_info")
        field = {
            k: strict_number(rec.get(k), path, f"{at}.{k}")
            for k in (
                "prompt_tokens",
                "output_tokens",
                "time_to_first_token_ms",
                "request_latency",
                "time_per_output_token_ms",
                "inter_token_latency_ms",
            )
        }
        builder.add(
            id=str(rec.get("request_id", "")),
            prompt_tokens=field["prompt_tokens"],
            output_tokens=field["output_tokens"],
            ttft_ms=field["time_to_first_token_ms"],
            e2e_ms=field["request_latency"] * 1000.0,
            tpot_ms=field["time_per_output_token_ms"],
            itl_ms=field["inter_token_latency_ms"],
            ok=ok,
        )
        client_queue.append(
            (
                strict_number(sched.get("dequeued_time"), path, f"{at}.scheduler_info.dequeued_time")
                - strict_number(sched.get("queued_time"), path, f"{at}.scheduler_info.queued_time")
            )
            * 1000.0
        )
    return builder, client_queue


def _sections(
    bench: Mapping[str, object], path: Path, where: str
) -> tuple[Mapping[str, object], Mapping[str, object], Mapping[str, object], Mapping[str, object]]:
    """(worker, request loader, strategy, backend), from either layout of the report."""
    worker = as_object(bench.get("worker"), path, f"{where}.worker")
    loader = as_object(bench.get("request_loader"), path, f"{where}.request_loader")
    args = as_object(bench.get("args"), path, f"{where}.args")
    strategy_obj = as_object(args.get("strategy"), path, f"{where}.args.strategy")
    # The scheduler-refactor layout: the strategy under "scheduler", backend and requests under "benchmarker".
    benchmarker = as_object(bench.get("benchmarker"), path, f"{where}.benchmarker")
    if not strategy_obj:
        scheduler = as_object(bench.get("scheduler"), path, f"{where}.scheduler")
        strategy_obj = as_object(scheduler.get("strategy"), path, f"{where}.scheduler.strategy")
    backend = as_object(benchmarker.get("backend"), path, f"{where}.benchmarker.backend")
    if not loader:
        loader = as_object(benchmarker.get("requests"), path, f"{where}.benchmarker.requests")
    return worker, loader, strategy_obj, backend


def _declared(
    worker: Mapping[str, object], backend: Mapping[str, object], loader: Mapping[str, object]
) -> dict[str, Dimension]:
    """The model and the request mix the report's configuration states."""
    dims: dict[str, Dimension] = {}
    model = worker.get("backend_model") or backend.get("model")
    if model:
        dims["model"] = Dimension(str(model), "declared")
    data = str(loader.get("data") or "")
    m_in, m_out = re.search(r"prompt_tokens=(\d+)", data), re.search(r"output_tokens=(\d+)", data)
    if m_in and m_out:
        dims["request_mix"] = Dimension(
            request_mix(float(m_in.group(1)), float(m_out.group(1)), "configured"), "declared"
        )
    return dims
