"""kubernetes-sigs/inference-perf reports, with the deployment that produced them.

A report folder holds ``stage_N_lifecycle_metrics.json`` (client side, seconds) and
``stage_N_prometheus_metrics.json`` (server side, PromQL over the stage), plus
``summary_*`` over all stages. One folder becomes **one run** from the summary files,
with every stage in a ``stages`` table (requested and achieved rate, count, TTFT
p50/p95, TPOT p95...). A folder without summary files gives one run per stage.

Engine configuration comes from the Kubernetes ``manifests.yaml`` next to the results
(the variant folder) and the workload from the load ``config.yaml`` one level up; both
are read when imported and also when merely present there (recorded in
``meta["companions"]``). Image tag -> ``engine_revision`` (with ``VLLM_USE_V1=0`` making
it ``(V0 engine)``: version and engine change together, and the revision says both),
server args -> ``engine_config``, GPU limit and node selector -> ``hardware``.

Server-side traps handled: figures the client does not measure stay in
``meta["server_summary"]``; a block that is all zeros while the server served
requests (the v0.11 ``kv_cache_usage_percentage`` queried under its old name,
``prompt_len.mean`` = 0 with a non-zero rate) is recorded as unknown with the reason.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from store.records import Dimension, RunRecord
from workbench.errors import BadInput
from workbench.formats import engine_config, safe_yaml
from workbench.formats.bench_json import load_object
from workbench.formats.inference_records import inference_run, number, request_mix, stats_block
from workbench.importers.base import READ_ERRORS, Importer, ImportOptions, Probe, open_binary

_REPORT = re.compile(r"^(stage_(\d+)|summary)_(lifecycle|prometheus)_metrics\.json$")
LATENCIES = {
    "time_to_first_token": "ttft_ms",
    "time_per_output_token": "tpot_ms",
    "inter_token_latency": "itl_ms",
    "request_latency": "e2e_ms",
    "normalized_time_per_output_token": "normalized_tpot_ms",
}
MAX_JSON_BYTES = 64 << 20


class InferencePerfImporter(Importer):
    name = "inference-perf"
    version = "1"
    description = "inference-perf lifecycle/prometheus reports (+ manifests.yaml and load config.yaml beside them)"
    priority = 30

    def sniff(self, probe: Probe) -> bool:
        text = probe.stripped
        head = probe.text
        if text.startswith("{"):
            return '"load_summary"' in head and '"successes"' in head
        return _is_manifest(head) or _is_load_config(head)

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        reports: dict[Path, list[Path]] = defaultdict(list)
        extras: list[Path] = []
        for path in paths:
            (reports[path.parent] if path.suffix == ".json" or _looks_json(path) else extras).append(path)
        if not reports:
            raise BadInput(extras[0] if extras else None, "a deployment manifest or load config alone holds no measurements; import it with its results folder")
        for folder, files in sorted(reports.items()):
            yield from _folder_runs(folder, files, extras, options)


IMPORTER = InferencePerfImporter()


def _looks_json(path: Path) -> bool:
    try:
        with open_binary(path) as f:
            return f.read(64).lstrip().startswith(b"{")
    except READ_ERRORS:
        return False


def _is_manifest(head: str) -> bool:
    return engine_config.looks_like_deployment(head)


def _is_load_config(head: str) -> bool:
    return bool(re.search(r"(?m)^load:\s*$", head) and re.search(r"(?m)^(data|server|api):\s*$", head) and re.search(r"(?m)^report:\s*$", head))


def _load_json(path: Path) -> dict[str, Any]:
    obj = load_object(path, MAX_JSON_BYTES, "larger than 64 MiB; not an inference-perf report")
    if "successes" not in obj:
        raise BadInput(path, "not an inference-perf report (no 'successes')")
    return obj


def _companions(folder: Path, extras: list[Path]) -> dict[str, Any]:
    """The manifest and load config for a results folder: imported ones first, then beside it."""
    variant = folder.parent if folder.name == "results" else folder
    found: dict[str, Path] = {}
    for path in extras:
        head = path.read_text(encoding="utf-8", errors="replace")[:65536]
        kind = "manifest" if _is_manifest(head) else "load_config" if _is_load_config(head) else None
        if kind and (variant == path.parent or variant.is_relative_to(path.parent)):
            # The nearest one wins (a variant's own manifest over a shared one).
            if kind not in found or len(path.parent.parts) > len(found[kind].parent.parts):
                found[kind] = path
    for kind, candidates in (("manifest", [variant / "manifests.yaml", variant / "manifest.yaml"]),
                             ("load_config", [variant / "config.yaml", variant.parent / "config.yaml"])):
        if kind not in found:
            for candidate in candidates:
                if candidate.is_file():
                    found[kind] = candidate
                    break
    out: dict[str, Any] = {"paths": {k: str(v) for k, v in found.items()}}
    if "manifest" in found:
        out["manifest"] = engine_config.read_k8s_manifest(found["manifest"])
    if "load_config" in found:
        try:
            docs = safe_yaml.load_file(found["load_config"])
        except ValueError as exc:
            raise BadInput(found["load_config"], f"load config is not readable YAML ({exc})") from None
        out["load_config"] = docs[0] if docs and isinstance(docs[0], dict) else {}
    return out


def _folder_runs(folder: Path, files: list[Path], extras: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
    parsed: dict[str, dict[str, Path]] = defaultdict(dict)
    for path in files:
        m = _REPORT.match(path.name)
        if not m:
            # Content sniffed as a report but named otherwise: one run of its own. Client
            # lifecycle reports nest latencies under "latency"; server ones do not.
            succ = _load_json(path).get("successes") or {}
            kind = "lifecycle" if isinstance(succ, dict) and "latency" in succ else "prometheus"
            yield _run(options.label or path.stem, {kind: path}, {}, [], folder, extras, options)
            continue
        stage = "summary" if m.group(1) == "summary" else m.group(2)
        parsed[stage][m.group(3)] = path
    if not parsed:
        return
    stages = sorted((s for s in parsed if s != "summary"), key=int)
    variant = folder.parent.name if folder.name == "results" else folder.name
    if "summary" in parsed:
        yield _run(options.label or variant, parsed["summary"], parsed, stages, folder, extras, options)
    else:
        for stage in stages:
            yield _run(f"{options.label or variant} stage {stage}", parsed[stage], {}, [], folder, extras, options)


def _run(label: str, files: dict[str, Path], all_stages: dict[str, dict[str, Path]], stages: list[str],
         folder: Path, extras: list[Path], options: ImportOptions) -> RunRecord:
    summary: dict[str, Any] = {}
    meta: dict[str, Any] = {"source_format": "inference-perf report", "warnings": []}
    sources: list[Path] = []
    if "lifecycle" in files:
        life = _load_json(files["lifecycle"])
        sources.append(files["lifecycle"])
        summary = lifecycle_summary(life, files["lifecycle"])
    if "prometheus" in files:
        prom = _load_json(files["prometheus"])
        sources.append(files["prometheus"])
        meta["server_summary"], unknown = server_summary(prom)
        if unknown:
            meta["warnings"].extend(unknown)
    if stages:
        table, stage_sources = _stage_table(all_stages, stages)
        meta["stages_note"] = ("stage rates are calibrated per run: compare stages at matched requested_rate, "
                               "not by stage number; the summary aggregates the whole sweep")
        sources.extend(stage_sources)
    dims: dict[str, Dimension] = {}
    comp = _companions(folder, extras)
    meta["companions"] = comp["paths"]
    sources.extend(p for p in (Path(x) for x in comp["paths"].values()) if p in extras)
    manifest = comp.get("manifest")
    if manifest:
        config = dict(manifest.get("config", {}))
        generation = config.pop("engine_generation", None)
        if manifest.get("model"):
            dims["model"] = Dimension(str(manifest["model"]), "declared")
            dims["weights"] = Dimension(str(manifest["weights"]), "declared")
        if manifest.get("engine_revision"):
            revision = f"{manifest['engine']} {manifest['engine_revision']}"
            if generation == "V0":
                revision += " (V0 engine)"
            dims["engine_revision"] = Dimension(revision, "declared")
        if manifest.get("accelerator"):
            gpus = manifest.get("gpus")
            dims["hardware"] = Dimension(f"{gpus}x {manifest['accelerator']}" if gpus else str(manifest["accelerator"]), "declared")
        dims.update(engine_config.dimensions(config, "declared", gpus=manifest.get("gpus")))
        meta["engine_config_sources"] = manifest.get("sources", [])
        if manifest.get("also"):
            meta["warnings"].append(f"the deployment file runs more engines than the one read ({manifest['where'] or 'first'}): "
                                    + ", ".join(manifest["also"]))
    load_cfg = comp.get("load_config")
    if load_cfg:
        data = load_cfg.get("data") or {}
        sp = data.get("shared_prefix") or {}
        if sp:
            mix = request_mix(number(sp.get("system_prompt_len")) + number(sp.get("question_len")), number(sp.get("output_len")))
            if mix:
                dims["request_mix"] = Dimension(f"{mix} (shared prefix {sp.get('system_prompt_len')})", "declared")
        load = load_cfg.get("load") or {}
        sweep = load.get("sweep") or {}
        dims["load"] = Dimension(
            f"{load.get('type')} load, {sweep.get('type', 'no')} sweep of {sweep.get('num_stages', '?')} x {sweep.get('stage_duration', '?')} s"
            if sweep else f"{load.get('type')} load", "declared")
        client_model = (load_cfg.get("server") or {}).get("model_name")
        if client_model and "model" in dims and client_model != dims["model"].value:
            meta["warnings"].append(f"load config names model {client_model!r}; the manifest serves {dims['model'].value!r}")
        meta["load_config"] = {k: load_cfg.get(k) for k in ("api", "data", "load", "server") if k in load_cfg}
        meta["load_config"].get("server", {}).pop("token", None)
    measured = summary.pop("_lengths", None)
    if measured:
        meta["measured_lengths"] = measured
        if "request_mix" not in dims:
            mix = request_mix(measured.get("prompt_median", math.nan), measured.get("output_median", math.nan))
            if mix:
                dims["request_mix"] = Dimension(mix, "derived")
    if not meta["warnings"]:
        del meta["warnings"]
    run = inference_run(label, samples=None, summary=summary, dimensions=dims, meta=meta, sources=sources,
                        window={"kind": "mixed" if stages else "steady", "policy": "inference-perf stages" if stages else "one stage"})
    if stages:
        run.tables["stages"] = table
    return run


def lifecycle_summary(obj: dict[str, Any], path: Path) -> dict[str, Any]:
    succ = obj.get("successes") or {}
    if not isinstance(succ, dict):
        raise BadInput(path, "'successes' is not an object")
    out: dict[str, Any] = {}
    lat = succ.get("latency") or {}
    for key, target in LATENCIES.items():
        block = stats_block(lat.get(key), 1000.0)
        if block:
            out[target] = block
    for key, target in (("prompt_len", "prompt_tokens"), ("output_len", "output_tokens")):
        block = stats_block(succ.get(key))
        if block:
            out[target] = block
    thr = succ.get("throughput") or {}
    for key, target in (("requests_per_sec", "request_throughput"), ("output_tokens_per_sec", "output_throughput"),
                        ("input_tokens_per_sec", "input_throughput"), ("total_tokens_per_sec", "total_token_throughput")):
        v = number(thr.get(key))
        if not math.isnan(v):
            out[target] = v
    for key, target in (("count", "requests_completed"),):
        v = number(succ.get(key))
        if not math.isnan(v):
            out[target] = v
    failures = obj.get("failures") or {}
    v = number(failures.get("count")) if isinstance(failures, dict) else math.nan
    if not math.isnan(v):
        out["requests_failed"] = v
    load = obj.get("load_summary") or {}
    for key in ("requested_rate", "achieved_rate", "send_duration"):
        v = number(load.get(key))
        if not math.isnan(v):
            out[key] = v
    if "output_tokens" in out and "requests_completed" in out and "mean" in out["output_tokens"]:
        out["total_output_tokens"] = out["output_tokens"]["mean"] * out["requests_completed"]
    if "prompt_tokens" in out and "output_tokens" in out:
        out["_lengths"] = {
            "prompt_median": out["prompt_tokens"].get("median", math.nan), "prompt_mean": out["prompt_tokens"].get("mean", math.nan),
            "output_median": out["output_tokens"].get("median", math.nan), "output_mean": out["output_tokens"].get("mean", math.nan),
        }
    return out


def server_summary(obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Server-side aggregates, with blocks that are silently zero under load set unknown."""
    succ = obj.get("successes") or {}
    out: dict[str, Any] = {}
    unknown: list[str] = []
    served = number(succ.get("count")) > 0 or number(succ.get("rate")) > 0
    for key, value in succ.items():
        if not isinstance(value, dict):
            v = number(value)
            if not math.isnan(v):
                out[key] = v
            continue
        block = {k: number(v) for k, v in value.items() if not math.isnan(number(v))}
        stats = {k: v for k, v in block.items() if k != "rate"}
        if served and key in ("kv_cache_usage_percentage", "prompt_len", "output_len", "queue_len", "time_to_first_token", "request_latency") \
                and stats and all(v == 0.0 for v in stats.values()):
            unknown.append(f"server {key}: every statistic is 0 while the server served requests "
                           f"(a metric missing under this engine version's name?); recorded as unknown")
            block = {k: v for k, v in block.items() if k == "rate"}
            block["unknown"] = True
        out[key] = block
    return out, unknown


def _stage_table(all_stages: dict[str, dict[str, Path]], stages: list[str]) -> tuple[dict[str, np.ndarray], list[Path]]:
    cols: dict[str, list[float]] = defaultdict(list)
    sources: list[Path] = []
    for stage in stages:
        files = all_stages[stage]
        s: dict[str, Any] = {}
        if "lifecycle" in files:
            s = lifecycle_summary(_load_json(files["lifecycle"]), files["lifecycle"])
            sources.append(files["lifecycle"])
        srv: dict[str, Any] = {}
        if "prometheus" in files:
            srv, _ = server_summary(_load_json(files["prometheus"]))
            sources.append(files["prometheus"])
        cols["stage"].append(float(stage))
        for key in ("requested_rate", "achieved_rate", "requests_completed", "requests_failed", "request_throughput"):
            cols[key].append(number(s.get(key)))
        for metric, stat in (("ttft_ms", "median"), ("ttft_ms", "p95"), ("ttft_ms", "p99"), ("tpot_ms", "p95"), ("e2e_ms", "p95")):
            cols[f"{metric[:-3]}_{stat}_ms"].append(number(s.get(metric, {}).get(stat)))
        cols["server_count"].append(number(srv.get("count")))
        cols["server_ttft_mean_ms"].append(number((srv.get("time_to_first_token") or {}).get("mean")) * 1000.0)
    return {k: np.array(v, dtype=np.float64) for k, v in cols.items()}, sources
