"""Prometheus text scrapes of a serving engine (vLLM, SGLang, TGI, TensorRT-LLM).

``wb import before.prom after.prom --scrape-pair``: the two scrapes, in that order,
become one summary-only inference run over the window between them: exact phase
means from ``_sum``/``_count`` deltas, quantiles from the bucket deltas with the
bucket that bounds them, counter deltas (tokens, requests, preemptions, prefix-cache
hits). Problems (counter reset, ``le`` edges that differ, a family present on one
side only, a family renamed inside the window) are listed in ``meta["scrape"]
["problems"]`` and leave the affected figures unknown, never zero.

Without ``--scrape-pair`` each scrape is its own run of everything since the server
started (window kind ``mixed``), with a warning saying so.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

from store.records import Dimension, RunRecord
from workbench.errors import BadInput
from workbench.formats import engine_config, prom_text
from workbench.formats.inference_records import inference_run
from workbench.importers.base import READ_ERRORS, Importer, ImporterOption, ImportOptions, Probe, open_binary

# Canonical phase -> the histogram families that measure it, per engine. Each name is
# read only if it is in the data; renamed families are kept under their own key.
PHASE_HISTOGRAMS: dict[str, tuple[str, ...]] = {
    "ttft_ms": (
        "vllm:time_to_first_token_seconds",
        "sglang:time_to_first_token_seconds",
        "time_to_first_token_seconds",
    ),
    "queue_ms": ("vllm:request_queue_time_seconds", "sglang:queue_time_seconds", "tgi_request_queue_duration"),
    "prefill_ms": ("vllm:request_prefill_time_seconds",),
    "decode_ms": ("vllm:request_decode_time_seconds",),
    "e2e_ms": (
        "vllm:e2e_request_latency_seconds",
        "sglang:e2e_request_latency_seconds",
        "tgi_request_duration",
        "e2e_request_latency_seconds",
    ),
    "inter_token_latency_ms": ("vllm:inter_token_latency_seconds", "sglang:inter_token_latency_seconds"),
    "time_per_output_token_ms": (
        "vllm:time_per_output_token_seconds",
        "sglang:time_per_output_token_seconds",
        "time_per_output_token_seconds",
    ),
}
COUNTERS: dict[str, tuple[str, ...]] = {
    "prompt_tokens": ("vllm:prompt_tokens", "sglang:prompt_tokens"),
    "generation_tokens": ("vllm:generation_tokens", "sglang:generation_tokens"),
    "requests_completed": ("vllm:request_success",),
    "preemptions": ("vllm:num_preemptions",),
    "prefix_cache_queries": ("vllm:prefix_cache_queries",),
    "prefix_cache_hits": ("vllm:prefix_cache_hits",),
    "gpu_prefix_cache_queries": ("vllm:gpu_prefix_cache_queries",),
    "gpu_prefix_cache_hits": ("vllm:gpu_prefix_cache_hits",),
}
QUANTILES = (0.5, 0.9, 0.95, 0.99)
# Gauges read as a snapshot at each scrape (fraction 0-1 despite "_perc").
GAUGES: dict[str, tuple[str, ...]] = {
    "kv_cache_usage": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"),
}
# Names an engine version renamed or dropped, and what happened to them. Such a family
# that stays exactly 0 over a window in which requests were served is not "0": the
# engine no longer feeds it (or a harness still asks for the old name).
RENAMED_OR_DROPPED: dict[str, str] = {
    "vllm:gpu_cache_usage_perc": "renamed vllm:kv_cache_usage_perc in vLLM 0.9 (PR #18354), no longer fed or emitted "
    "by default from about 0.11",
    "vllm:gpu_prefix_cache_queries": "renamed vllm:prefix_cache_queries in vLLM 0.9",
    "vllm:gpu_prefix_cache_hits": "renamed vllm:prefix_cache_hits in vLLM 0.9",
    "vllm:cpu_cache_usage_perc": "V0 engine only: dropped by the V1 engine",
    "vllm:num_requests_swapped": "V0 engine only: dropped by the V1 engine",
    "vllm:gpu_prefix_cache_hit_rate": "V0 engine only: replaced by the prefix_cache_queries/hits counters in V1",
    "vllm:cpu_prefix_cache_hit_rate": "V0 engine only: dropped by the V1 engine",
}


class PrometheusImporter(Importer):
    name = "prometheus"
    version = "1"
    description = "Prometheus text scrapes of a serving engine (before/after pair with --scrape-pair)"
    priority = 60
    options = (
        ImporterOption("scrape_pair", "--scrape-pair", "Treat two Prometheus scrapes as before/after one run.", bool),
    )

    def sniff(self, probe: Probe) -> bool:
        return prom_text.looks_like_exposition(probe.text)

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        scrapes = [_parse(p) for p in paths]
        if options.params.get("scrape_pair"):
            if len(scrapes) != 2:
                raise BadInput(
                    paths[0] if paths else None,
                    f"--scrape-pair needs exactly two scrapes (before, after), got {len(scrapes)}",
                )
            yield window_run(scrapes[0], scrapes[1], options)
            return
        for scrape in scrapes:
            yield cumulative_run(scrape, options)


IMPORTER = PrometheusImporter()


def _parse(path: Path) -> prom_text.Scrape:
    try:
        with open_binary(path) as stream:
            return prom_text.parse(stream, path)
    except READ_ERRORS as exc:
        raise BadInput(path, f"cannot be read ({exc})") from None


def _ms(value_s: float) -> float:
    return value_s * 1000.0


def _histogram_summary(hist: prom_text.Histogram) -> dict[str, object]:
    """Mean (exact), count and quantiles with their bucket bounds (all in ms)."""
    out: dict[str, object] = {"count": hist.count}
    if hist.count > 0:
        out["mean"] = _ms(hist.sum / hist.count)
    if hist.edges and hist.count > 0:
        for q in QUANTILES:
            est = prom_text.histogram_quantile(hist.edges, hist.cumulative, q)
            if est is None:
                continue
            key = "median" if q == 0.5 else f"p{q * 100:g}"
            out[key] = _ms(est.value)
            out[f"{key}_bounds"] = [_ms(est.lo), _ms(est.hi) if math.isfinite(est.hi) else None]
            if est.lower_bound_only:
                out[f"{key}_lower_bound_only"] = True
            if est.hi == hist.edges[0]:
                # Inside the first bucket the estimate is pure interpolation (0, edge].
                out[f"{key}_first_bucket"] = True
    return out


def _engine_dimensions(scrape: prom_text.Scrape) -> dict[str, Dimension]:
    dims: dict[str, Dimension] = {}
    config: dict[str, object] = {}  # the engine_config object (formats/engine_config.py)
    for labels, _ in scrape.values("vllm:cache_config_info"):
        config.update(engine_config.from_cache_config_info(dict(labels)))
    models = {dict(labels).get("model_name") for (name, labels) in scrape.series if dict(labels).get("model_name")}
    if len(models) == 1:
        dims["model"] = Dimension(models.pop(), "measured")
    engines = {dict(labels).get("engine") for (name, labels) in scrape.series if "engine" in dict(labels)}
    if engines:
        config["engine_cores"] = len(engines)
    if config:
        dims["engine_config"] = Dimension(dict(sorted(config.items())), "measured")
    return dims


def _engine_name(scrape: prom_text.Scrape) -> str | None:
    prefixes = {name.split(":", 1)[0] for name in scrape.families() if ":" in name}
    for engine in ("vllm", "sglang"):
        if engine in prefixes:
            return engine
    if any(name.startswith("tgi_") for name in scrape.families()):
        return "tgi"
    return None


def two_processes(before: prom_text.Scrape, after: prom_text.Scrape, deltas: dict[str, prom_text.FamilyDelta]) -> str:
    """Why the two scrapes cannot be one server's window (``""`` when nothing says so): another
    process start time, another cache configuration, or a counter that went backwards."""
    started_b = sorted(v for _, v in before.gauge_values("process_start_time_seconds"))
    started_a = sorted(v for _, v in after.gauge_values("process_start_time_seconds"))
    if started_b and started_a and started_b != started_a:
        return (
            f"process_start_time_seconds is {started_b[0]:.0f} before and {started_a[0]:.0f} after: the server was "
            f"started again between the scrapes"
        )
    config_b = {labels for labels, _ in before.values("vllm:cache_config_info")}
    config_a = {labels for labels, _ in after.values("vllm:cache_config_info")}
    if config_b and config_a and config_b != config_a:
        b, a = dict(next(iter(config_b))), dict(next(iter(config_a)))
        changed = [f"{k} {b.get(k)} -> {a.get(k)}" for k in sorted(set(b) | set(a)) if b.get(k) != a.get(k)]
        return f"vllm:cache_config_info differs ({', '.join(changed[:4])}): two server configurations"
    backwards = [(name, d.went_down) for name, d in sorted(deltas.items()) if d.went_down]
    if backwards:
        shown = ", ".join(f"{name} {how}" for name, how in backwards[:3])
        more = f" and {len(backwards) - 3} more" if len(backwards) > 3 else ""
        return f"{len(backwards)} counter(s) went backwards ({shown}{more}): a restart or another server"
    return ""


def window_run(before: prom_text.Scrape, after: prom_text.Scrape, options: ImportOptions) -> RunRecord:
    deltas, problems = prom_text.difference(before, after)
    if before.path is not None:  # a pair (a single scrape is read against zeros, the server's start)
        why = two_processes(before, after, deltas)
        if why:
            raise BadInput(
                after.path,
                f"not the same server as {before.path.name}: {why}; a --scrape-pair is two scrapes of one running "
                f"server (import each alone for its totals since start)",
            )
    summary: dict[str, float | dict[str, object]] = _phase_histograms(deltas)  # scalars and statistics blocks
    counters = _counters(deltas)
    served = counters.get("requests_completed", 0.0) > 0 or counters.get("generation_tokens", 0.0) > 0
    missing = silent_zeros(before, after, deltas, served)
    for key, names in COUNTERS.items():
        if any(m["metric"] in names for m in missing) and key in counters:
            del counters[key]  # a renamed counter that stayed 0 is unknown, not 0
    gauges = gauge_snapshots(before, after, {m["metric"] for m in missing})
    if gauges:
        summary.update(gauges)
    _counted_figures(summary, counters)
    dims = _engine_dimensions(after)
    engine = _engine_name(after)
    if engine and "engine_config" in dims:
        dims["engine_config"] = Dimension({**dims["engine_config"].value, "engine": engine}, "measured")
    label = (
        options.label or f"scrape {before.path.name if before.path else '?'} → {after.path.name if after.path else '?'}"
    )
    meta = {
        "source_format": "prometheus scrape pair",
        "scrape": {
            "before": str(before.path),
            "after": str(after.path),
            "counters": counters,
            "problems": problems,
            "families_before": len(before.families()),
            "families_after": len(after.families()),
        },
    }
    if missing:
        meta["scrape"]["missing"] = missing
    run = inference_run(
        label,
        samples=None,
        summary=summary,
        dimensions=dims,
        meta=meta,
        sources=[p for p in (before.path, after.path) if p],
        window={"kind": "steady", "policy": "scrape pair (after − before)"},
    )
    warnings = [*problems, *(m["text"] for m in missing)]
    if warnings:
        run.meta["warnings"] = warnings
    return run


def _phase_histograms(deltas: dict[str, prom_text.FamilyDelta]) -> dict[str, float | dict[str, object]]:
    """Each phase's statistics from the first of its histogram families the scrapes hold (its name as source)."""
    summary: dict[str, float | dict[str, object]] = {}
    for key, names in PHASE_HISTOGRAMS.items():
        for name in names:
            d = deltas.get(name)
            if d is not None and d.histogram is not None:
                summary[key] = _histogram_summary(d.histogram) | {"source": name}
                break
    return summary


def _counters(deltas: dict[str, prom_text.FamilyDelta]) -> dict[str, float]:
    """Each counter's increase, from the first of its family names the scrapes hold."""
    counters: dict[str, float] = {}
    for key, names in COUNTERS.items():
        for name in names:
            d = deltas.get(name)
            if d is not None and d.delta is not None:
                counters[key] = d.delta
                break
    return counters


def _counted_figures(summary: dict[str, float | dict[str, object]], counters: dict[str, float]) -> None:
    """The summary's figures from the counters (requests, tokens, prefix-cache hit rate) and TTFT's frontend
    residual in the mean."""
    for key, target in (
        ("requests_completed", "requests_completed"),
        ("generation_tokens", "total_output_tokens"),
        ("prompt_tokens", "total_input_tokens"),
    ):
        if key in counters:
            summary[target] = counters[key]
    for prefix in ("", "gpu_"):
        q, h = counters.get(f"{prefix}prefix_cache_queries"), counters.get(f"{prefix}prefix_cache_hits")
        if q and h is not None:
            summary["prefix_cache_hit_rate"] = h / q
    ttft, queue, prefill = (summary.get(k, {}).get("mean") for k in ("ttft_ms", "queue_ms", "prefill_ms"))  # type: ignore[union-attr]
    if None not in (ttft, queue, prefill):
        # Exact in the mean only; TTFT also counts requests unfinished at the second scrape.
        summary["frontend_residual_mean_ms"] = ttft - queue - prefill  # type: ignore[operator]


def _family_total(scrape: prom_text.Scrape, family: str) -> float | None:
    if family not in scrape.families():
        return None
    kind = scrape.kind(family)
    if kind == "counter":
        return scrape.counter_total(family)
    vals = scrape.gauge_values(family)
    return math.fsum(abs(v) for _, v in vals) if vals else None


class SilentZero(TypedDict):
    """A family that stayed 0 where an engine version renamed or dropped it
    (``meta["scrape"]["missing"]``)."""

    metric: str
    reason: str
    text: str


def silent_zeros(
    before: prom_text.Scrape, after: prom_text.Scrape, deltas: dict[str, prom_text.FamilyDelta], served: bool
) -> list[SilentZero]:
    """Families an engine version renamed or dropped that stayed exactly 0 in both
    scrapes while requests were served: missing, with the rename named, never 0 %."""
    out: list[SilentZero] = []
    if not served:
        return out
    for family, what in RENAMED_OR_DROPPED.items():
        b, a = _family_total(before, family), _family_total(after, family)
        if b is None or a is None or b != 0.0 or a != 0.0:
            continue
        out.append(
            {
                "metric": family,
                "reason": what,
                "text": f"{family} stayed exactly 0 over the window while requests were served: {what}; "
                f"reported missing, not 0",
            }
        )
    return out


def gauge_snapshots(
    before: prom_text.Scrape, after: prom_text.Scrape, missing: set[str]
) -> dict[str, dict[str, object]]:
    """Each known gauge's value at both scrapes (a snapshot, not a window mean)."""
    out: dict[str, dict[str, object]] = {}
    for key, names in GAUGES.items():
        for name in names:
            if name in missing:
                out[key] = {"unknown": True, "source": name, "note": "missing: see meta.scrape.missing"}
                continue
            vb, va = before.gauge_values(name), after.gauge_values(name)
            if not va:
                continue
            out[key] = {
                "before": math.fsum(v for _, v in vb) if vb else None,
                "after": math.fsum(v for _, v in va),
                "source": name,
                "note": "snapshot at each scrape",
            }
            break
    return out


def cumulative_run(scrape: prom_text.Scrape, options: ImportOptions) -> RunRecord:
    """One scrape alone: totals since the server started (not a measurement window)."""
    empty = prom_text.Scrape(None, dict(scrape.types), {})
    run = window_run(_zero_like(scrape, empty), scrape, options)
    run.label = options.label or f"scrape {scrape.path.name if scrape.path else '?'} (since server start)"
    run.window = {"kind": "mixed", "policy": "single scrape: cumulative since server start"}
    run.meta["warnings"] = [
        *run.meta.get("warnings", []),
        "single scrape: figures cover everything since the server started; use a before/after pair with --scrape-pair",
    ]
    run.meta["scrape"]["before"] = None
    run.sources = [scrape.path] if scrape.path else []
    return run


def _zero_like(scrape: prom_text.Scrape, empty: prom_text.Scrape) -> prom_text.Scrape:
    """A 'before' scrape with every counter and bucket at zero (the server's start)."""
    empty.path = None
    for (name, labels), _ in scrape.series.items():
        family = scrape.family_of(name)
        if scrape.kind(family) in ("counter", "histogram"):
            empty.series[(name, labels)] = 0.0
    return empty
