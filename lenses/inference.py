"""The inference lens: one sample is a request.

Primary metric: TTFT p95. TTFT = frontend + queue + prefill; decode happens after the
first token, so it is shown beside TTFT and never summed into it. Failed requests
(``ok`` false) count for the error rate, not for latency.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from lenses.base import (
    NAN,
    WINDOW_DIMENSION,
    DimensionSpec,
    GuardrailSpec,
    Lens,
    MetricSpec,
    PhaseSpec,
    WorkPerItem,
    column,
    finite,
    normalize_text,
    observed_window,
    quantile_of,
)
from lenses.request_check import check_requests
from store.records import Dimension, RunRecord
from store.run_meta import SampleFinding

# Two request mixes are the same when their median prompt and output lengths agree
# within this relative tolerance (benchmarks draw lengths at random around a target).
MIX_TOLERANCE = 0.10

# A number starts after a non-digit: from inside a run of digits every start would rescan it (quadratic).
_PROMPT = re.compile(r"(?<!\d)(\d+(?:\.\d+)?)\s*(?:prompt|input|in)\b", re.I)
_OUTPUT = re.compile(r"(?<!\d)(\d+(?:\.\d+)?)\s*(?:output|completion|out|gen\w*)\b", re.I)
_PAIR = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[/x:,]\s*(\d+(?:\.\d+)?)\b")


def parse_mix(value: Any) -> tuple[float, float] | None:
    """``(prompt, output)`` token lengths from a request-mix value, or ``None``.

    Accepts "512 prompt / 128 output tokens", "512/128", {"prompt_tokens": 512,
    "output_tokens": 128}; anything else (a data set name) cannot be checked.
    """
    if isinstance(value, dict):
        p = value.get("prompt_tokens", value.get("prompt"))
        o = value.get("output_tokens", value.get("output"))
        try:
            return (float(p), float(o)) if p is not None and o is not None else None
        except (TypeError, ValueError):
            return None
    if not isinstance(value, str):
        return None
    p, o = _PROMPT.search(value), _OUTPUT.search(value)
    if p and o:
        return float(p.group(1)), float(o.group(1))
    pair = _PAIR.match(value)
    if pair:
        return float(pair.group(1)), float(pair.group(2))
    return None


def mix_text(prompt: float, output: float, statistic: str = "median") -> str:
    """A request mix in words, saying which statistic of the lengths it gives (``median``,
    ``mean``, ``configured``): medians of one file and means of another are not the same figure."""
    return f"{round(prompt)} prompt / {round(output)} output tokens" + (f" ({statistic})" if statistic else "")


def mix_equal(a: Any, b: Any) -> bool | None:
    """Same request mix? ``None`` when either value cannot be read as lengths."""
    pa, pb = parse_mix(a), parse_mix(b)
    if pa is None or pb is None:
        return None if (pa is None) != (pb is None) else normalize_text(a) == normalize_text(b)
    return all(math.isclose(x, y, rel_tol=MIX_TOLERANCE) for x, y in zip(pa, pb))


def summary_stat(run: RunRecord, metric: str, stat: str) -> float:
    """A figure from ``run.meta["summary"][metric][stat]`` (what a benchmark tool
    reported for a run without per-request rows); ``nan`` when absent."""
    block = run.typed_meta.summary_block(metric)
    value = block.get(stat) if block else None
    return value if isinstance(value, float) and math.isfinite(value) else NAN


def summary_bounds(run: RunRecord, metric: str, stat: str) -> tuple[float, float] | None:
    """The bucket bounds a histogram gives ``stat`` (``run.meta["summary"][metric][stat + "_bounds"]``,
    as the Prometheus importer writes them; a null high is the +Inf bucket); ``None`` when absent."""
    block = run.typed_meta.summary_block(metric)
    bounds = block.get(f"{stat}_bounds") if block else None
    if not isinstance(bounds, list) or len(bounds) != 2:
        return None
    lo, hi = bounds
    if lo is None or not math.isfinite(lo):
        return None
    return lo, hi if hi is not None and math.isfinite(hi) else math.inf


@dataclass(frozen=True)
class ServingMetric:
    """A serving metric: a statistic of a per-request column, else the same statistic
    as the benchmark file states it (never one statistic derived from another)."""

    name: str
    title: str
    unit: str
    lower_is_better: bool = True
    column: str = ""  # per-request column (ms)
    summary: str = ""  # key in run.meta["summary"]
    statistic: str = ""  # "median", "p95"...; "" for a scalar (throughputs)


# The per-request latencies and the statistics a benchmark file may state for each: every
# pair is a metric (``ttft_p99``, ``tpot_mean``, ``e2e_median``; ``p50`` is the median).
LATENCIES = {
    "ttft": ("TTFT", "ttft_ms"),
    "tpot": ("TPOT", "tpot_ms"),
    "itl": ("ITL", "itl_ms"),
    "e2e": ("E2E latency", "e2e_ms"),
}
STATISTICS = {
    "mean": "mean",
    "median": "median",
    "p50": "median",
    "p90": "p90",
    "p95": "p95",
    "p99": "p99",
    "std": "std",
}


def _serving_metrics() -> dict[str, ServingMetric]:
    out: dict[str, ServingMetric] = {}
    for short, (title, col) in LATENCIES.items():
        for name, stat in STATISTICS.items():
            out[f"{short}_{name}"] = ServingMetric(f"{short}_{name}", f"{title} {name}", "ms", True, col, col, stat)
    for m in (
        ServingMetric("request_throughput", "request throughput", "req/s", False, summary="request_throughput"),
        ServingMetric("output_throughput", "output-token throughput", "tok/s", False, summary="output_throughput"),
        ServingMetric("error_rate", "error rate", "fraction", True),
    ):
        out[m.name] = m
    return out


SERVING_METRICS: dict[str, ServingMetric] = _serving_metrics()
# The phases each latency is made of, and what the comparison says of them.
METRIC_PARTS: dict[str, tuple[tuple[str, ...], str]] = {
    "ttft": (
        ("frontend", "queue", "prefill"),
        "TTFT = frontend + queue + prefill; decode comes after the first token and is shown beside TTFT, never summed "
        "into it.",
    ),
    "tpot": (("decode",), "TPOT is decode time per output token after the first; queue and prefill come before it."),
    "itl": (("decode",), "ITL is the gap between tokens during decode; queue and prefill come before it."),
    "e2e": (
        ("frontend", "queue", "prefill", "decode"),
        "E2E latency spans the request: frontend, queue, prefill and decode (exposed, not additive).",
    ),
}
_QUANTILE = {"median": 0.5, "p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}
# When TTFT p95 (the primary) is unknown on a side: the closest statistic, in this order.
PRIMARY_FALLBACKS = ("ttft_p99", "ttft_p90", "ttft_median")


def _statistic(values: np.ndarray, stat: str) -> float:
    """A statistic of per-request values (std: the sample standard deviation, as the tools write it)."""
    if stat == "mean":
        return float(values.mean())
    if stat == "std":
        return float(values.std(ddof=1)) if values.size > 1 else NAN
    return quantile_of(values, _QUANTILE[stat])


def _duration(run: RunRecord) -> float:
    meta = run.typed_meta
    for value in (run.typed_window.duration_s, meta.duration_s, meta.summary_scalar("duration_s")):
        if value is not None and math.isfinite(value) and value > 0:
            return value
    return NAN


class InferenceLens(Lens):
    def with_metric(self, name: str) -> "InferenceLens":
        """This lens with ``name`` (a serving metric) as the primary metric, and the phases that
        are parts of it marked so (TTFT: frontend, queue, prefill; TPOT and ITL: decode; E2E:
        all of them), so that findings speak of the parts of that metric."""
        m = SERVING_METRICS.get(name)
        if m is None:
            raise ValueError(f"unknown metric {name!r} (one of {', '.join(SERVING_METRICS)})")
        family = name.split("_", 1)[0]
        parts, note = METRIC_PARTS.get(family, ((), "this metric has no phases of its own: they are shown beside it."))
        phases = tuple(replace(p, in_primary=p.name in parts) for p in self.phases)
        return replace(
            self, primary=MetricSpec(m.name, m.title, m.unit, m.lower_is_better), phases=phases, phase_note=note
        )

    def metric_value(self, run: RunRecord, name: str) -> tuple[float, str]:
        """``(value, source)``: source is ``requests`` (computed from per-request rows),
        ``pooled gaps`` (every inter-token gap), ``file`` (the figure the file states),
        ``requests/duration`` or ``unknown``."""
        m = SERVING_METRICS[name]
        if name == "error_rate":
            v = self.error_rate(run)
            return v, "requests" if finite(column(run, "ok")).size else "file" if math.isfinite(v) else "unknown"
        if m.statistic:
            if name.startswith("itl") and column(run, "itl_ms", "itl") is not None:
                pooled = finite(column(run, "itl_ms", "itl"))
                if pooled.size:
                    return _statistic(pooled, m.statistic), "pooled gaps"
            values = self.ttft_values(run) if m.column == "ttft_ms" else column(run, m.column)
            if values is not None and m.column != "ttft_ms":
                values = values[self.valid_mask(run, len(values))]
            if values is not None and finite(values).size:
                return _statistic(finite(values), m.statistic), "requests"
            v = summary_stat(run, m.summary, m.statistic)
            return v, "file" if math.isfinite(v) else "unknown"
        stated = run.typed_meta.summary_scalar(m.summary)
        if stated is not None and math.isfinite(stated):
            return stated, "file"
        duration = _duration(run)
        ok = column(run, "ok")
        if math.isfinite(duration) and ok is not None and finite(ok).size:
            if name == "request_throughput":
                return float((ok == 1).sum()) / duration, "requests/duration"
            out = column(run, "output_tokens")
            if out is not None and finite(out[ok == 1]).size == int((ok == 1).sum()):
                return float(out[ok == 1].sum()) / duration, "requests/duration"
        return NAN, "unknown"

    def fallback_primary(
        self, baseline: list[RunRecord], candidate: list[RunRecord]
    ) -> tuple["InferenceLens", str] | None:
        """When TTFT p95 (the default primary) is unknown on a run of either side: this
        lens on the closest TTFT statistic every run carries (p99, then p90, then the
        median) and the sentence saying which and why; None when p95 is known everywhere,
        when another metric was chosen, or when no statistic is shared (the refusal line
        then names what each side holds)."""
        if self.primary.name != "ttft_p95":
            return None
        runs = [*baseline, *candidate]
        missing = [r for r in runs if not math.isfinite(self.primary_value(r))]
        if not missing:
            return None
        where = (
            "either side"
            if any(r in baseline for r in missing) and any(r in candidate for r in missing)
            else "the baseline"
            if any(r in baseline for r in missing)
            else "the candidate"
        )
        shared = [name for name in SERVING_METRICS if all(math.isfinite(self.metric_value(r, name)[0]) for r in runs)]
        for name in PRIMARY_FALLBACKS:
            if name in shared:
                m = SERVING_METRICS[name]
                return self.with_metric(name), (
                    f"Headline on {m.title}: TTFT p95 is not recorded on {where} (summary-only results state other "
                    f"statistics); "
                    f"{m.title} is the closest statistic both sides carry. Other metrics both sides carry: "
                    f"{', '.join(n for n in shared if n != name) or 'none'} (pin this headline with --metric {name}, "
                    f"or name another)."
                )
        if shared:
            return self, (
                f"TTFT p95 is not recorded on {where} and no TTFT p99, p90 or median is on both sides; "
                f"metrics both sides carry: {', '.join(shared)} (e.g. --metric {shared[0]})."
            )
        return None

    def primary_value(self, run: RunRecord) -> float:
        if self.primary.name != "ttft_p95" and self.primary.name in SERVING_METRICS:
            return self.metric_value(run, self.primary.name)[0]
        return self.ttft_p95(run)

    def primary_bounds(self, run: RunRecord) -> tuple[float, float] | None:
        """A percentile the file states from histogram buckets (no per-request rows): its bounds."""
        m = SERVING_METRICS.get(self.primary.name)
        if m is None or not m.statistic:
            return None
        if m.name == "ttft_p95" and self.ttft_values(run).size:
            return None
        if m.name != "ttft_p95" and self.metric_value(run, m.name)[1] != "file":
            return None
        return summary_bounds(run, m.summary, m.statistic)

    def check_samples(self, run: RunRecord) -> list[SampleFinding]:
        """Bounds, then what a request means (``lenses.request_check``); a request mix the
        importer derived is derived again from the requests that count."""
        found = super().check_samples(run)
        found.extend(check_requests(run))
        mix = run.dimensions.get("request_mix")
        if run.sample_count and (mix is None or mix.source == "derived"):
            medians = self.token_medians(run)
            if medians is not None:
                run.dimensions["request_mix"] = Dimension(mix_text(*medians), "derived")
        return found

    def population(self, run: RunRecord) -> tuple[int, int] | None:
        ok = column(run, "ok")
        if ok is not None and finite(ok).size:
            return int(finite(ok).size), int((finite(ok) != 0).sum())
        completed = run.typed_meta.summary_scalar("requests_completed")
        failed = run.typed_meta.summary_scalar("requests_failed")
        planned = run.typed_meta.summary_scalar("requests_planned")
        total = completed + failed if completed is not None and failed is not None else planned
        if completed is None or total is None or not total > 0:
            return None
        return int(total), int(completed)

    def valid_mask(self, run: RunRecord, n: int) -> np.ndarray:
        ok = column(run, "ok")
        if ok is None or len(ok) != n:
            return np.ones(n, dtype=bool)
        return ~(ok == 0)  # unknown ``ok`` is kept; only known failures are dropped

    def ttft_values(self, run: RunRecord) -> np.ndarray:
        """Per-request TTFT (ms): the ``ttft_ms`` column, else frontend + queue + prefill
        when all three are recorded; never queue + prefill alone (that would hide the
        frontend and understate TTFT)."""
        ttft = column(run, "ttft_ms")
        if ttft is None or not finite(ttft).size:
            parts = [column(run, c) for c in ("frontend_ms", "queue_ms", "prefill_ms")]
            if any(p is None for p in parts):
                return np.empty(0)
            ttft = parts[0] + parts[1] + parts[2]
        return ttft[self.valid_mask(run, len(ttft))]

    def ttft_p95(self, run: RunRecord) -> float:
        values = self.ttft_values(run)
        if values.size:
            return quantile_of(values, 0.95)
        # A summary-only run (a benchmark report without per-request rows): the p95 the
        # tool reported, if it reported one; never one computed from other figures.
        return summary_stat(run, "ttft_ms", "p95")

    def error_rate(self, run: RunRecord) -> float:
        ok = finite(column(run, "ok"))
        if ok.size:
            return float(1.0 - (ok != 0).mean())
        v = run.quality.get("error_rate")
        return float(v) if v is not None and math.isfinite(float(v)) else NAN

    def guardrail_value(self, run: RunRecord, metric: str) -> float:
        if metric == "error_rate":
            return self.error_rate(run)
        return super().guardrail_value(run, metric)

    def token_medians(self, run: RunRecord) -> tuple[float, float] | None:
        """Median prompt and output lengths of the requests that count (failed ones are not the mix)."""
        p, o = column(run, "prompt_tokens"), column(run, "output_tokens")
        p = finite(p[self.valid_mask(run, len(p))]) if p is not None else finite(p)
        o = finite(o[self.valid_mask(run, len(o))]) if o is not None else finite(o)
        if not p.size or not o.size:
            sp, so = summary_stat(run, "prompt_tokens", "median"), summary_stat(run, "output_tokens", "median")
            return (sp, so) if math.isfinite(sp) and math.isfinite(so) else None
        return float(np.median(p)), float(np.median(o))

    def observed_dimensions(self, run: RunRecord) -> dict[str, Dimension]:
        out = observed_window(run)
        medians = self.token_medians(run)
        if medians is not None:
            out["request_mix"] = Dimension(mix_text(*medians), "derived")
        return out

    def item_series(self, run: RunRecord) -> dict[str, np.ndarray]:
        return {"ttft": self.ttft_values(run), **self.phase_values(run)}

    def stated_statistics(self, run: RunRecord, measure: str) -> dict[str, float]:
        block = run.typed_meta.summary_block(f"{measure}_ms") or {}
        stated = {("p50" if k == "median" else k): v for k, v in block.items() if isinstance(v, float)}
        wanted = ("mean", "p5", "p25", "p50", "p75", "p95", "p99")
        return {k: v for k, v in stated.items() if k in wanted and math.isfinite(v)}

    def work_per_item(self, run: RunRecord) -> WorkPerItem | None:
        p, o = column(run, "prompt_tokens"), column(run, "output_tokens")
        if p is None or o is None:
            return None
        total = finite(p + o)
        return WorkPerItem("tokens per request", float(total.mean())) if total.size else None

    def throughput(self, run: RunRecord) -> tuple[float, str] | None:
        # The window's duration when it states one (even an unusable one), else the file's.
        duration = run.typed_window.duration_s if "duration_s" in run.window else run.typed_meta.duration_s
        if run.work is None or run.work.amount is None or not duration:
            return None
        return float(run.work.amount) / duration, f"{run.work.unit}/s"


LENS = InferenceLens(
    name="inference",
    title="Inference",
    dimensions=(
        DimensionSpec("model", "Model", True),
        DimensionSpec("weights", "Weights", True),
        DimensionSpec("hardware", "Hardware", True),
        DimensionSpec("topology", "Topology", True),
        DimensionSpec("request_mix", "Request mix", True, equal=mix_equal),
        DimensionSpec(WINDOW_DIMENSION, "Window kind", True, changeable=False),
        DimensionSpec("precision", "Precision", False),
        DimensionSpec("engine_revision", "Engine revision", False),
        DimensionSpec("power_policy", "Power policy", False),
        DimensionSpec("engine_config", "Engine configuration", False),
    ),
    primary=MetricSpec("ttft_p95", "time to first token, p95", "ms"),
    phases=(
        # Shown only when the runs record it (most captures do not split it out).
        PhaseSpec("frontend", "Frontend", "frontend_ms", in_primary=True, stage="before_model"),
        PhaseSpec("queue", "Queue", "queue_ms", in_primary=True, stage="before_model"),
        PhaseSpec("prefill", "Prefill", "prefill_ms", in_primary=True, stage="model"),
        PhaseSpec("decode", "Decode", "decode_ms", in_primary=False, stage="model"),
    ),
    phase_note="TTFT = frontend + queue + prefill; decode comes after the first token and is shown beside TTFT, never "
    "summed into it.",
    work_unit="tokens",
    phase_statistic="p95",
    phase_sentences="each",
    item_measure=MetricSpec("ttft", "TTFT by request", "ms"),
    item_order="request order",
    item_name="requests",
    span_column="e2e_ms",
    locates_by_stage=True,
    guardrails=(
        # A candidate must not fail more requests: at most one percentage point more.
        GuardrailSpec("error_rate", "Error rate", "error_rate", "max_increase", 0.01, unit="fraction"),
    ),
)
