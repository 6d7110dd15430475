"""NVIDIA AIPerf / GenAI-Perf profile exports.

- ``profile_export.jsonl`` (AIPerf): one record per request, ``{"metadata", "metrics":
  {name: {"value", "unit"}}, "error"}``. Both key sets are read: the current
  (``time_to_first_token``, ``request_start_ns``, ``benchmark_phase``) and the older
  (``ttft``, ``timestamp_ns``, ``credit_phase``). Warm-up records are excluded and
  counted; an ``error`` or a cancelled request is a failed sample (``ok`` 0). Units
  come from each metric's ``unit`` (ns, us, ms, s), never assumed.
- ``profile_export.json`` (GenAI-Perf raw, written by Perf Analyzer): ``experiments[]``
  with ``requests[]`` holding ``timestamp`` and ``response_timestamps`` (ns): TTFT =
  first response − send, E2E = last response − send, ITL = mean gap. One run per
  experiment (concurrency or request-rate value). No token counts (unknown).
- ``profile_export_aiperf.json`` / GenAI-Perf ``profile_export_genai_perf.json``
  (aggregates): one block per metric ``{unit, avg, p1 ... p99, std ...}``, either at the
  top level or wrapped in ``"records"`` (AIPerf v0.1.x). A summary-only run: only the
  percentiles present are kept.

AIPerf's client-side timings never include the server's queue/prefill split.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from store.records import Dimension, RunRecord
from workbench.errors import BadInput
from workbench.formats import bench_json
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
from workbench.formats.load_sweep import group_levels, load_meta, mark_sweep
from workbench.importers.base import Importer, ImportOptions, Probe

UNIT_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0, "sec": 1000.0}
# metric name(s) -> sample column (durations) or token column
PER_REQUEST = {
    "ttft_ms": ("time_to_first_token", "ttft"),
    "e2e_ms": ("request_latency",),
    "itl_ms": ("inter_token_latency",),
}
TOKENS = {
    "prompt_tokens": ("input_sequence_length", "isl"),
    "output_tokens": ("output_sequence_length", "output_token_count", "osl"),
}
AGGREGATE = {
    "time_to_first_token": "ttft_ms",
    "ttft": "ttft_ms",
    "request_latency": "e2e_ms",
    "inter_token_latency": "itl_ms",
    "time_to_second_token": "ttst_ms",
    "input_sequence_length": "prompt_tokens",
    "output_sequence_length": "output_tokens",
}


class AIPerfImporter(Importer):
    name = "aiperf"
    version = "1"
    description = "AIPerf profile_export.jsonl / profile_export_aiperf.json, GenAI-Perf profile_export_genai_perf.json"
    priority = 30

    key_sets = (
        KeySet(
            "AIPerf profile_export.jsonl, current (request_start_ns, benchmark_phase)",
            ("metadata", "metrics", "request_start_ns"),
            sample="inference/aiperf_profile_export_current.jsonl",
            origin="minimal, derived from aiperf/common/models/record_models.py",
        ),
        KeySet(
            "AIPerf profile_export.jsonl, early (timestamp_ns, credit_phase)",
            ("metadata", "metrics", "timestamp_ns"),
            sample="inference/aiperf_profile_export.jsonl",
            origin="minimal, derived from aiperf (early 2025 record layout)",
        ),
        KeySet(
            "AIPerf profile_export_aiperf.json, aggregate (records)",
            ("records",),
            ("ttft", "time_to_first_token", "request_latency"),
            sample="inference/aiperf_profile_export_aiperf.json",
            origin="minimal, derived from aiperf's JSON exporter",
        ),
        KeySet(
            "AIPerf/GenAI-Perf aggregate (input_config or schema_version)",
            ("time_to_first_token",),
            ("input_config", "schema_version"),
            sample="inference/genai_perf_aggregate.json",
            origin="minimal, derived from genai-perf's JsonExporter",
        ),
        KeySet(
            "GenAI-Perf profile_export.json (raw experiments)",
            ("experiments",),
            ("response_timestamps", "experiment"),
            sample="inference/genai_perf_profile_export.json",
            origin="minimal, derived from perf_analyzer's profile export",
        ),
    )

    def sniff(self, probe: Probe) -> bool:
        if not probe.stripped.startswith("{"):
            return False
        head = probe.text
        if ('"input_config"' in head or '"schema_version"' in head or '"records"' in head) and any(
            f'"{k}"' in head for k in ("time_to_first_token", "ttft", "request_latency")
        ):
            return True  # an aggregate names its metrics under several names
        return matching(self.key_sets, head) is not None

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        runs: list[RunRecord] = []
        for path in paths:
            objs = list(bench_json.read_objects(path))
            first = objs[0][1]
            if isinstance(first.get("experiments"), list):
                yield from _raw_runs(path, first, options)
            elif "metadata" in first and "metrics" in first:
                runs.append(_per_request_run(path, objs, options))
            else:
                runs.extend(_aggregate_run(path, line, obj, options) for line, obj in objs)
        # One profile per load (artifacts/<model>-...-concurrency<N>/ for each N): a sweep.
        yield from group_levels(runs, "aiperf", options.label)


IMPORTER = AIPerfImporter()


def _metric_ms(metrics: Mapping[str, object], names: tuple[str, ...], path: Path, where: str) -> float:
    for name in names:
        block = as_object(metrics.get(name), path, f"{where}: metrics.{name}")
        if "value" in block:
            value = block["value"]
            at = f"{where}: metrics.{name}.value"
            if isinstance(value, list):  # e.g. per-chunk latencies: the request's mean
                vals = [strict_number(v, path, f"{at}[{i}]") for i, v in enumerate(value)]
                vals = [v for v in vals if not math.isnan(v)]
                value = sum(vals) / len(vals) if vals else None
            unit = str(block.get("unit") or "").strip()
            if unit not in UNIT_MS:
                raise BadInput(path, f"metric {name!r} has unit {unit!r} (expected ns, us, ms or s)", where=where)
            return strict_number(value, path, at) * UNIT_MS[unit]
    return math.nan


def _metric_count(metrics: Mapping[str, object], names: tuple[str, ...], path: Path, where: str) -> float:
    for name in names:
        block = as_object(metrics.get(name), path, f"{where}: metrics.{name}")
        if "value" in block:
            return strict_number(block["value"], path, f"{where}: metrics.{name}.value")
    return math.nan


_CONCURRENCY_DIR = re.compile(r"concurrency(\d+)$")
_RATE_DIR = re.compile(r"request_rate(\d+(?:\.\d+)?)$")


def _folder_load(path: Path) -> dict[str, float | None]:
    """GenAI-Perf/AIPerf artifact folders end in ``-concurrency<N>`` or ``-request_rate<R>``."""
    name = path.parent.name
    c, r = _CONCURRENCY_DIR.search(name), _RATE_DIR.search(name)
    return {"concurrency": float(c.group(1)) if c else None, "requested_rate": float(r.group(1)) if r else None}


def _folder_load_meta(path: Path, summary: Summary) -> dict[str, object]:
    """The load the artifact folder's name states (concurrency or rate), beside the rate achieved."""
    folder = _folder_load(path)
    out: dict[str, object] = {
        "load": load_meta(
            requested_rate=folder["requested_rate"],
            concurrency=folder["concurrency"],
            achieved_rate=summary.get("request_throughput"),
        )
    }
    if folder["concurrency"] is not None or folder["requested_rate"] is not None:
        out["load_source"] = "artifact folder name"
    return out


def _per_request_run(path: Path, objs: list[tuple[int, dict[str, object]]], options: ImportOptions) -> RunRecord:
    builder = SampleBuilder()
    warmup = 0
    errors: dict[str, int] = {}
    first_start, last_end = math.inf, -math.inf
    for line, rec in objs:
        where = f"line {line}"
        meta = rec.get("metadata") or {}
        metrics = rec.get("metrics") or {}
        if not isinstance(meta, dict) or not isinstance(metrics, dict):
            raise BadInput(path, "record without metadata/metrics objects", where=where)
        phase = meta.get("benchmark_phase", meta.get("credit_phase"))
        # Read (and check) every record, warm-up too: a wrong type is bad input anywhere.
        values = {col: _metric_ms(metrics, names, path, where) for col, names in PER_REQUEST.items()}
        tokens = {col: _metric_count(metrics, names, path, where) for col, names in TOKENS.items()}
        if phase == "warmup":
            warmup += 1
            continue
        err = rec.get("error")
        failed = bool(err) or bool(meta.get("was_cancelled"))
        if err:
            kind = _error_kind(err)
            errors[kind] = errors.get(kind, 0) + 1
        start, end = _request_span(meta, values["e2e_ms"], path, where)
        if not math.isnan(start):
            first_start = min(first_start, start)
        if not math.isnan(end):
            last_end = max(last_end, end)
        if failed:
            values = {k: math.nan for k in values}
        builder.add(
            id=str(meta.get("x_request_id") or meta.get("session_num") or line),
            ok=0.0 if failed else 1.0,
            **values,
            **tokens,
        )
    if not len(builder):
        raise BadInput(path, f"no profiling records ({warmup} warm-up records)")
    meta_out: dict[str, object] = {
        "source_format": "aiperf profile_export.jsonl",
        "warmup_records_excluded": warmup,
        "errors": errors,
    }
    window: dict[str, object] = {"kind": "steady", "warmup_excluded": warmup, "policy": "benchmark_phase != warmup"}
    summary: Summary = {}
    if last_end > first_start:
        # First send to last response of the profiling records: the measured window.
        completed = sum(1 for ok in builder.cols["ok"] if ok == 1.0)
        window["duration_s"] = summary["duration_s"] = (last_end - first_start) / 1e9
        summary["request_throughput"] = completed / summary["duration_s"]
    meta_out.update(_folder_load_meta(path, summary))
    meta_out["_setup"] = json.dumps(["per-request", str(path.parent.parent.resolve())])
    meta_out["_sweep_label"] = f"aiperf {path.parent.parent.name or path.stem}"
    label = options.label or f"aiperf {path.parent.name or path.stem}"
    return inference_run(
        label, samples=builder, summary=summary, dimensions={}, meta=meta_out, sources=[path], window=window
    )


def _aggregate_run(path: Path, line: int, obj: Mapping[str, object], options: ImportOptions) -> RunRecord:
    summary = _aggregate_summary(obj, path, line)
    if not summary:
        raise BadInput(path, "no latency metrics in the aggregate export", where=f"line {line}")
    cfg = obj.get("input_config") or {}
    dims = _configured(cfg)
    loadgen = (
        cfg.get("loadgen")
        if isinstance(cfg, dict) and isinstance(cfg.get("loadgen"), dict)
        else cfg
        if isinstance(cfg, dict)
        else {}
    )
    folder = _folder_load(path)
    conc = strict_number(loadgen.get("concurrency"), path, f"line {line}: input_config.concurrency")
    rate = strict_number(loadgen.get("request_rate"), path, f"line {line}: input_config.request_rate")
    load = load_meta(
        requested_rate=rate if not math.isnan(rate) else folder["requested_rate"],
        concurrency=conc if not math.isnan(conc) else folder["concurrency"],
        achieved_rate=summary.get("request_throughput"),
    )
    meta = {
        "source_format": "aiperf/genai-perf aggregate",
        "schema_version": obj.get("schema_version"),
        "load": load,
        "tool_version": obj.get("aiperf_version") or obj.get("version"),
        "input_config": cfg if isinstance(cfg, dict) else {},
        "error_summary": obj.get("error_summary"),
    }
    label = options.label or f"aiperf {path.parent.name or path.stem}"
    meta = json.loads(json.dumps(meta, default=str))
    meta["_setup"] = json.dumps(
        [
            "aggregate",
            dims["model"].value if "model" in dims else None,
            dims["request_mix"].value if "request_mix" in dims else None,
        ],
        default=str,
    )
    meta["_sweep_label"] = f"aiperf {dims['model'].value if 'model' in dims else path.stem}"
    return inference_run(
        label, samples=None, summary=summary, dimensions=dims, meta=meta, sources=[path], window={"kind": "steady"}
    )


def _error_kind(err: object) -> str:
    return str(err.get("type") or err.get("code") or "error") if isinstance(err, dict) else "error"


def _request_span(meta: Mapping[str, object], e2e_ms: float, path: Path, where: str) -> tuple[float, float]:
    """When a request was sent and answered (ns); its end from its latency when the record has none."""
    start_key = "request_start_ns" if "request_start_ns" in meta else "timestamp_ns"
    start = strict_number(meta.get(start_key), path, f"{where}: metadata.{start_key}")
    end = strict_number(meta.get("request_end_ns"), path, f"{where}: metadata.request_end_ns")
    if math.isnan(end) and not math.isnan(e2e_ms):
        end = start + e2e_ms * 1e6
    return start, end


def _aggregate_summary(obj: Mapping[str, object], path: Path, line: int) -> Summary:
    """The aggregate export's statistics blocks (latencies in ms, counts as given) and its throughputs."""
    blocks = obj.get("records") if isinstance(obj.get("records"), dict) else obj
    summary: Summary = {}
    for name, target in AGGREGATE.items():
        block = as_object(blocks.get(name), path, f"line {line}: {name}")
        if not block or target in summary:
            continue
        unit = str(block.get("unit") or "").strip()
        at = f"line {line}: {name}"
        if target.endswith("_ms"):
            if unit not in UNIT_MS:
                raise BadInput(
                    path, f"metric {name!r} has unit {unit!r} (expected ns, us, ms or s)", where=f"line {line}"
                )
            summary[target] = stats_block(
                {k: v for k, v in block.items() if k not in ("unit", "tag", "header")}, UNIT_MS[unit], path, at
            )
        else:
            summary[target] = stats_block(
                {k: v for k, v in block.items() if k not in ("unit", "tag", "header")}, 1.0, path, at
            )
    for name, target in (
        ("request_throughput", "request_throughput"),
        ("output_token_throughput", "output_throughput"),
        ("request_count", "requests_completed"),
    ):
        block = as_object(blocks.get(name), path, f"line {line}: {name}")
        if block:
            key = "avg" if "avg" in block else "value"
            v = strict_number(block.get(key), path, f"line {line}: {name}.{key}")
            if not math.isnan(v):
                summary[target] = v
    return summary


def _configured(cfg: object) -> dict[str, Dimension]:
    """The model and the request mix the export's input config names."""
    dims: dict[str, Dimension] = {}
    model = cfg.get("model") or (cfg.get("endpoint") or {}).get("model_names") if isinstance(cfg, dict) else None
    if isinstance(model, list):
        model = model[0] if len(model) == 1 else None
    if model:
        dims["model"] = Dimension(str(model), "declared")
    mix = (
        request_mix(number(cfg.get("synthetic_input_tokens_mean")), number(cfg.get("output_tokens_mean")), "configured")
        if isinstance(cfg, dict)
        else None
    )
    if mix:
        dims["request_mix"] = Dimension(mix, "declared")
    return dims


def _raw_runs(path: Path, obj: Mapping[str, object], options: ImportOptions) -> Iterator[RunRecord]:
    experiments = obj["experiments"]
    if not experiments:
        raise BadInput(path, "no experiments", where="experiments")
    runs = []
    for e, exp in enumerate(experiments):
        where = f"experiments[{e}]"
        if not isinstance(exp, dict) or not isinstance(exp.get("requests"), list):
            raise BadInput(path, "experiment without a requests list", where=where)
        builder, first, last, completed = _experiment_requests(exp["requests"], path, where)
        if not len(builder):
            raise BadInput(path, "experiment has no requests", where=where)
        setting = as_object(exp.get("experiment"), path, f"{where}.experiment")
        mode = setting.get("mode")
        value = strict_number(setting.get("value"), path, f"{where}.experiment.value")
        label = options.label or f"genai-perf {mode}={value}"
        if len(experiments) > 1 and options.label:
            label += f" [{e}]"
        meta = {
            "source_format": "genai-perf profile_export.json",
            "experiment": exp.get("experiment"),
            "tool_version": obj.get("version"),
            "service_kind": obj.get("service_kind"),
            "endpoint": obj.get("endpoint"),
        }
        dims = {"load": Dimension(f"{mode}={value:g}", "declared")} if mode else {}
        window: dict[str, object] = {"kind": "steady", "policy": "perf analyzer measurement window"}
        summary: Summary = {}
        if last > first:
            window["duration_s"] = summary["duration_s"] = (last - first) / 1e9
            summary["request_throughput"] = completed / window["duration_s"]
        meta["load"] = load_meta(
            concurrency=value if mode == "concurrency" else None,
            requested_rate=value if mode == "request_rate" else None,
            achieved_rate=summary.get("request_throughput"),
        )
        runs.append(
            inference_run(
                label, samples=builder, summary=summary, dimensions=dims, meta=meta, sources=[path], window=window
            )
        )
    yield from mark_sweep(
        runs,
        tool="genai-perf",
        label=options.label or f"genai-perf {path.parent.name or path.stem}",
        parts=[str(path.resolve())],
        relabel=False,
    )


def _experiment_requests(requests: list[object], path: Path, where: str) -> tuple[SampleBuilder, float, float, int]:
    """An experiment's requests as samples (TTFT, end to end, mean ITL from the response times; a request
    without a response failed), the first send, the last response and how many completed."""
    builder = SampleBuilder()
    first, last, completed = math.inf, -math.inf, 0
    for r, req in enumerate(requests):
        if not isinstance(req, dict):
            raise BadInput(path, "request is not an object", where=f"{where}.requests[{r}]")
        at = f"{where}.requests[{r}]"
        sent = strict_number(req.get("timestamp"), path, f"{at}.timestamp")
        responses = [
            strict_number(t, path, f"{at}.response_timestamps")
            for t in as_list(req.get("response_timestamps"), path, f"{at}.response_timestamps")
        ]
        responses = [t for t in responses if not math.isnan(t)]
        if math.isnan(sent) or not responses:
            builder.add(id=str(req.get("sequence_id", r)), ok=0.0)
            continue
        if any(t < sent for t in responses):
            raise BadInput(path, "a response precedes its request", where=f"{where}.requests[{r}].response_timestamps")
        gaps = [b - a for a, b in zip(responses, responses[1:])]
        first, last, completed = min(first, sent), max(last, responses[-1]), completed + 1
        builder.add(
            id=str(req.get("sequence_id", r)),
            ok=1.0,
            ttft_ms=(responses[0] - sent) / 1e6,
            e2e_ms=(responses[-1] - sent) / 1e6,
            itl_ms=(sum(gaps) / len(gaps) / 1e6) if gaps else None,
        )
    return builder, first, last, completed
