"""kubernetes-sigs/inference-perf reports, with the deployment that produced them.

A report folder holds ``stage_N_lifecycle_metrics.json`` (client side, seconds) and
``stage_N_prometheus_metrics.json`` (server side, PromQL over the stage), plus
``summary_*`` over all stages. Each stage is one load level: one run per stage, with
its load (requested and achieved rate) in ``meta["load"]``, the stages grouped as one
sweep (``meta["sweep"]``, see ``workbench.formats.load_sweep``). The summary files
mix every load, so they are the sweep's metadata (``meta["sweep"]["summary"]``), never
a level; a folder holding only summary files gives one run of window kind ``mixed``.
A value of the wrong type (an object where a number belongs...) is bad input.

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
from collections.abc import Iterator, Mapping
from pathlib import Path

import msgspec
from msgspec import UNSET

from store.records import Dimension, RunRecord
from workbench.errors import BadInput
from workbench.formats import engine_config, safe_yaml
from workbench.formats.bench_json import load_object
from workbench.formats.engine_config import EngineSite
from workbench.formats.inference_records import (
    Summary,
    as_object,
    inference_run,
    number,
    request_mix,
    stats_block,
    strict_number,
)
from workbench.formats.load_sweep import load_meta, mark_sweep
from workbench.importers.base import READ_ERRORS, Importer, ImportOptions, Probe, open_binary
from workbench.inputs import HEAD_BYTES, open_regular

_REPORT = re.compile(r"^(stage_(\d+)|summary)_(lifecycle|prometheus)_metrics\.json$")
LATENCIES = {
    "time_to_first_token": "ttft_ms",
    "time_per_output_token": "tpot_ms",
    "inter_token_latency": "itl_ms",
    "request_latency": "e2e_ms",
    "normalized_time_per_output_token": "normalized_tpot_ms",
}
MAX_JSON_BYTES = 64 << 20
# What inference-perf queries for a server block that reads all-zero on newer vLLM.
SILENT_RENAMES = {
    "kv_cache_usage_percentage": "inference-perf queried vllm:gpu_cache_usage_perc, renamed vllm:kv_cache_usage_perc "
    "in vLLM 0.9 "
    "and no longer fed from about 0.11 (kubernetes-sigs/inference-perf#277)",
    "num_requests_swapped": "vllm:num_requests_swapped exists in the V0 engine only",
}


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
            raise BadInput(
                extras[0] if extras else None,
                "a deployment manifest or load config alone holds no measurements; import it with its results folder",
            )
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
    return bool(
        re.search(r"(?m)^load:\s*$", head)
        and re.search(r"(?m)^(data|server|api):\s*$", head)
        and re.search(r"(?m)^report:\s*$", head)
    )


def _load_json(path: Path) -> dict[str, object]:
    obj = load_object(path, MAX_JSON_BYTES, "larger than 64 MiB; not an inference-perf report")
    if "successes" not in obj:
        raise BadInput(path, "not an inference-perf report (no 'successes')")
    return obj


class Companions(msgspec.Struct, frozen=True, kw_only=True):
    """The files beside a results folder that say how it was produced."""

    paths: dict[str, str]  # "manifest" / "load_config" -> the file read
    manifest: EngineSite | None = None  # the serving engine the deployment file runs
    load_config: Mapping[str, object] | None = None  # the load generator's config (untrusted YAML)


def _head(path: Path) -> str:
    """The first 64 KiB of a file imported beside the reports, to tell what it is: through
    the one door (no FIFO, device or /proc file), and never more than the head."""
    with open_regular(path) as f:
        try:
            return f.read(HEAD_BYTES).decode("utf-8", errors="replace")
        except OSError as exc:
            raise BadInput(path, f"cannot be read ({exc.strerror or exc})") from None


def _companions(folder: Path, extras: list[Path]) -> Companions:
    """The manifest and load config for a results folder: imported ones first, then beside it."""
    variant = folder.parent if folder.name == "results" else folder
    found: dict[str, Path] = {}
    for path in extras:
        head = _head(path)
        kind = "manifest" if _is_manifest(head) else "load_config" if _is_load_config(head) else None
        if kind and (variant == path.parent or variant.is_relative_to(path.parent)):
            # The nearest one wins (a variant's own manifest over a shared one).
            if kind not in found or len(path.parent.parts) > len(found[kind].parent.parts):
                found[kind] = path
    for kind, candidates in (
        ("manifest", [variant / "manifests.yaml", variant / "manifest.yaml"]),
        ("load_config", [variant / "config.yaml", variant.parent / "config.yaml"]),
    ):
        if kind not in found:
            for candidate in candidates:
                if candidate.is_file():
                    found[kind] = candidate
                    break
    manifest = engine_config.read_k8s_manifest(found["manifest"]) if "manifest" in found else None
    load_config = None
    if "load_config" in found:
        try:
            docs = safe_yaml.load_file(found["load_config"])
        except ValueError as exc:
            raise BadInput(found["load_config"], f"load config is not readable YAML ({exc})") from None
        load_config = docs[0] if docs and isinstance(docs[0], dict) else {}
    return Companions(paths={k: str(v) for k, v in found.items()}, manifest=manifest, load_config=load_config)


def _folder_runs(folder: Path, files: list[Path], extras: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
    parsed: dict[str, dict[str, Path]] = defaultdict(dict)
    for path in files:
        m = _REPORT.match(path.name)
        if not m:
            # Content sniffed as a report but named otherwise: one run of its own. Client
            # lifecycle reports nest latencies under "latency"; server ones do not.
            succ = _load_json(path).get("successes")
            kind = "lifecycle" if isinstance(succ, dict) and "latency" in succ else "prometheus"
            yield _run(options.label or path.stem, {kind: path}, folder, extras, options)
            continue
        stage = "summary" if m.group(1) == "summary" else m.group(2)
        parsed[stage][m.group(3)] = path
    if not parsed:
        return
    stages = sorted((s for s in parsed if s != "summary"), key=int)
    variant = folder.parent.name if folder.name == "results" else folder.name
    name = options.label or variant
    if not stages:
        # Only the summary over a whole sweep: one run, window "mixed" (it mixes loads).
        yield _run(name, parsed["summary"], folder, extras, options, summary_only=True)
        return
    summary_files = parsed.get("summary", {})
    sweep_summary = _sweep_summary(summary_files) if summary_files else None
    runs = []
    for stage in stages:
        run = _run(f"{name} stage {stage}", parsed[stage], folder, extras, options, stage=stage)
        run.sources.extend(p for p in summary_files.values() if p not in run.sources)
        runs.append(run)
    parts = [str(p.resolve()) for stage in stages for p in sorted(parsed[stage].values())]
    yield from mark_sweep(runs, tool="inference-perf", label=name, parts=parts, summary=sweep_summary)


def _sweep_summary(files: dict[str, Path]) -> dict[str, object]:
    """The summary files' figures: metadata of the sweep, never a load level
    (``meta["sweep"]["summary"]``: a note, the client and the server figures)."""
    out: dict[str, object] = {"note": "aggregated over every stage of the sweep: not a load level"}
    if "lifecycle" in files:
        life = lifecycle_summary(_load_json(files["lifecycle"]), files["lifecycle"])
        life.pop("_lengths", None)
        out["client"] = life
    if "prometheus" in files:
        out["server"], _ = server_summary(_load_json(files["prometheus"]), files["prometheus"])
    return out


def _run(
    label: str,
    files: dict[str, Path],
    folder: Path,
    extras: list[Path],
    options: ImportOptions,
    stage: str | None = None,
    summary_only: bool = False,
) -> RunRecord:
    summary: Summary = {}
    warnings: list[str] = []  # meta["warnings"], dropped at the end when empty
    meta: dict[str, object] = {"source_format": "inference-perf report", "warnings": warnings}
    sources: list[Path] = []
    if "lifecycle" in files:
        life = _load_json(files["lifecycle"])
        sources.append(files["lifecycle"])
        summary = lifecycle_summary(life, files["lifecycle"])
    if "prometheus" in files:
        prom = _load_json(files["prometheus"])
        sources.append(files["prometheus"])
        meta["server_summary"], unknown = server_summary(prom, files["prometheus"])
        if unknown:
            warnings.extend(unknown)
    if stage is not None:
        meta["stage"] = int(stage)
    if not summary_only:
        meta["load"] = load_meta(
            requested_rate=summary.get("requested_rate"),
            achieved_rate=summary.get("achieved_rate"),
            strategy="constant" if "requested_rate" in summary else None,
        )
    else:
        meta["sweep_summary_only"] = (
            "summary over a whole sweep (it mixes loads): import the stage files for one run per load level"
        )
    if "send_duration" in summary:
        summary["duration_s"] = summary["send_duration"]
    dims: dict[str, Dimension] = {}
    comp = _companions(folder, extras)
    meta["companions"] = comp.paths
    sources.extend(p for p in (Path(x) for x in comp.paths.values()) if p in extras)
    if comp.manifest:
        _manifest_facts(comp.manifest, dims, meta, warnings)
    if comp.load_config:
        _load_config_facts(comp.load_config, comp.paths.get("load_config"), stage, summary, dims, meta, warnings)
    measured = summary.pop("_lengths", None)
    if measured:
        meta["measured_lengths"] = measured
        if "request_mix" not in dims:
            mix = request_mix(
                measured.get("prompt_median", math.nan), measured.get("output_median", math.nan), "median"
            )
            if mix:
                dims["request_mix"] = Dimension(mix, "derived")
    if not warnings:
        del meta["warnings"]
    window = (
        {"kind": "mixed", "policy": "inference-perf summary over all stages"}
        if summary_only
        else {"kind": "steady", "policy": f"inference-perf stage {stage}" if stage is not None else "one stage"}
    )
    if "send_duration" in summary:
        window["duration_s"] = summary["send_duration"]
    return inference_run(
        label, samples=None, summary=summary, dimensions=dims, meta=meta, sources=sources, window=window
    )


def _manifest_facts(
    manifest: EngineSite, dims: dict[str, Dimension], meta: dict[str, object], warnings: list[str]
) -> None:
    """What the deployment manifest declares: model and weights, engine revision, hardware, engine config."""
    config = dict(manifest.config)
    generation = config.pop("engine_generation", None)
    gpus = manifest.gpus if manifest.gpus is not UNSET else None
    if manifest.model:
        dims["model"] = Dimension(str(manifest.model), "declared")
        dims["weights"] = Dimension(str(manifest.weights), "declared")
    if manifest.engine_revision:
        revision = f"{manifest.engine} {manifest.engine_revision}"
        if generation == "V0":
            revision += " (V0 engine)"
        dims["engine_revision"] = Dimension(revision, "declared")
    if manifest.accelerator:
        dims["hardware"] = Dimension(
            f"{gpus}x {manifest.accelerator}" if gpus else str(manifest.accelerator), "declared"
        )
    dims.update(engine_config.dimensions(config, "declared", gpus=gpus))
    meta["engine_config_sources"] = msgspec.to_builtins(manifest.sources)
    if manifest.also:
        warnings.append(
            f"the deployment file runs more engines than the one read ({manifest.where or 'first'}): "
            + ", ".join(manifest.also)
        )


def _load_config_facts(
    load_cfg: Mapping[str, object],
    config_file: str | None,
    stage: str | None,
    summary: Summary,
    dims: dict[str, Dimension],
    meta: dict[str, object],
    warnings: list[str],
) -> None:
    """What the load config declares: the request mix (shared prefix), the load and its sweep, the client's model."""
    data = _section(load_cfg, "data", config_file)
    sp = _section(data, "data.shared_prefix", config_file)
    if sp:
        mix = request_mix(
            number(sp.get("system_prompt_len")) + number(sp.get("question_len")),
            number(sp.get("output_len")),
            f"configured, shared prefix {sp.get('system_prompt_len')}",
        )
        if mix:
            dims["request_mix"] = Dimension(mix, "declared")
    load = _section(load_cfg, "load", config_file)
    sweep = _section(load, "load.sweep", config_file)
    if stage is not None and "requested_rate" in summary:
        dims["load"] = Dimension(
            f"{load.get('type')} load at {summary['requested_rate']:g} req/s (stage {stage} of a "
            f"{sweep.get('type', '?')} sweep)",
            "declared",
        )
    else:
        dims["load"] = Dimension(
            f"{load.get('type')} load, {sweep.get('type', 'no')} sweep of {sweep.get('num_stages', '?')} x "
            f"{sweep.get('stage_duration', '?')} s"
            if sweep
            else f"{load.get('type')} load",
            "declared",
        )
    client_model = _section(load_cfg, "server", config_file).get("model_name")
    if client_model and "model" in dims and client_model != dims["model"].value:
        warnings.append(f"load config names model {client_model!r}; the manifest serves {dims['model'].value!r}")
    load_config = {k: load_cfg.get(k) for k in ("api", "data", "load", "server") if k in load_cfg}
    meta["load_config"] = load_config
    server = load_config.get("server")
    if isinstance(server, dict):
        server.pop("token", None)


def lifecycle_summary(obj: Mapping[str, object], path: Path) -> Summary:
    """The client figures of one report; a value of the wrong type is bad input."""
    succ = as_object(obj.get("successes"), path, "successes")
    out: Summary = {}
    lat = as_object(succ.get("latency"), path, "successes.latency")
    for key, target in LATENCIES.items():
        block = stats_block(lat.get(key), 1000.0, path, f"successes.latency.{key}")
        if block:
            out[target] = block
    for key, target in (("prompt_len", "prompt_tokens"), ("output_len", "output_tokens")):
        block = stats_block(succ.get(key), 1.0, path, f"successes.{key}")
        if block:
            out[target] = block
    thr = as_object(succ.get("throughput"), path, "successes.throughput")
    for key, target in (
        ("requests_per_sec", "request_throughput"),
        ("output_tokens_per_sec", "output_throughput"),
        ("input_tokens_per_sec", "input_throughput"),
        ("total_tokens_per_sec", "total_token_throughput"),
    ):
        v = strict_number(thr.get(key), path, f"successes.throughput.{key}")
        if not math.isnan(v):
            out[target] = v
    v = strict_number(succ.get("count"), path, "successes.count")
    if not math.isnan(v):
        out["requests_completed"] = v
    failures = as_object(obj.get("failures"), path, "failures")
    v = strict_number(failures.get("count"), path, "failures.count")
    if not math.isnan(v):
        out["requests_failed"] = v
    load = as_object(obj.get("load_summary"), path, "load_summary")
    for key in ("requested_rate", "achieved_rate", "send_duration"):
        v = strict_number(load.get(key), path, f"load_summary.{key}")
        if not math.isnan(v):
            out[key] = v
    if "output_tokens" in out and "requests_completed" in out and "mean" in out["output_tokens"]:
        out["total_output_tokens"] = out["output_tokens"]["mean"] * out["requests_completed"]
    prompt, output = out.get("prompt_tokens"), out.get("output_tokens")
    if isinstance(prompt, dict) and isinstance(output, dict):
        out["_lengths"] = {
            "prompt_median": prompt.get("median", math.nan),
            "prompt_mean": prompt.get("mean", math.nan),
            "output_median": output.get("median", math.nan),
            "output_mean": output.get("mean", math.nan),
        }
    return out


def server_summary(
    obj: Mapping[str, object], path: Path | None = None
) -> tuple[dict[str, float | dict[str, float | bool]], list[str]]:
    """Server-side aggregates, with blocks that are silently zero under load set unknown."""
    succ = as_object(obj.get("successes"), path, "successes") if path is not None else (obj.get("successes") or {})
    out: dict[str, float | dict[str, float | bool]] = {}
    unknown: list[str] = []
    served = number(succ.get("count")) > 0 or number(succ.get("rate")) > 0
    for key, value in succ.items():
        where = f"successes.{key}"
        if not isinstance(value, dict):
            v = strict_number(value, path, where) if path is not None else number(value)
            if not math.isnan(v):
                out[key] = v
            continue
        block = {
            k: (strict_number(v, path, f"{where}.{k}") if path is not None else number(v)) for k, v in value.items()
        }
        block = {k: v for k, v in block.items() if not math.isnan(v)}
        if served and _silent_zero(key, block):
            why = SILENT_RENAMES.get(key, "a metric missing under this engine version's name?")
            unknown.append(
                f"server {key}: every statistic is 0 while the server served requests ({why}); recorded as unknown"
            )
            block = {k: v for k, v in block.items() if k == "rate"}
            block["unknown"] = True
        out[key] = block
    return out, unknown


# Blocks a server under load cannot have at zero: all zero means the engine named the metric otherwise.
_NEVER_ZERO_UNDER_LOAD = (
    "kv_cache_usage_percentage",
    "prompt_len",
    "output_len",
    "queue_len",
    "time_to_first_token",
    "request_latency",
)


def _silent_zero(key: str, block: Mapping[str, float]) -> bool:
    """Whether every statistic (its rate aside) of a block the served load cannot leave at zero is zero."""
    stats = [v for k, v in block.items() if k != "rate"]
    return key in _NEVER_ZERO_UNDER_LOAD and bool(stats) and all(v == 0.0 for v in stats)


def _section(config: Mapping[str, object], where: str, file: str | None) -> Mapping[str, object]:
    """The mapping at ``where`` (the last key of a dotted path) in the load config; absent or
    empty is an empty one, anything else but a mapping is bad input naming the place."""
    value = config.get(where.rpartition(".")[2])
    if not value:
        return {}
    if not isinstance(value, Mapping):
        raise BadInput(file, f"should be a mapping, not {type(value).__name__}", where=where)
    return value
