"""OpenTelemetry request spans, OTLP JSON (an ``ExportTraceServiceRequest`` per object:
the OTLP/HTTP JSON body, or the collector's file exporter writing one per line).

vLLM (``--otlp-traces-endpoint``) emits one span per request with its engine-side
timings as attributes, the only per-request source of a real phase split:
``gen_ai.latency.time_in_queue`` -> ``queue_ms``, ``time_in_model_prefill`` ->
``prefill_ms``, ``time_in_model_decode`` -> ``decode_ms``, ``time_to_first_token`` ->
``ttft_ms``, ``e2e`` -> ``e2e_ms`` (all seconds in the span), token counts from
``gen_ai.usage.prompt_tokens``/``completion_tokens`` or the newer semantic-convention
``input_tokens``/``output_tokens``. Spans without any ``gen_ai.latency.*`` attribute
(HTTP, scheduler internals) are not requests and are skipped; a span with status
ERROR is a failed request. One file (all its objects) is one run.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from store.records import Dimension, RunRecord
from workbench.errors import BadInput
from workbench.formats import bench_json
from workbench.formats.inference_records import SampleBuilder, inference_run, number
from workbench.importers.base import Importer, ImportOptions, Probe

LATENCY = {
    "gen_ai.latency.time_in_queue": "queue_ms",
    "gen_ai.latency.time_in_model_prefill": "prefill_ms",
    "gen_ai.latency.time_in_model_decode": "decode_ms",
    "gen_ai.latency.time_to_first_token": "ttft_ms",
    "gen_ai.latency.e2e": "e2e_ms",
}
PROMPT = ("gen_ai.usage.prompt_tokens", "gen_ai.usage.input_tokens")
OUTPUT = ("gen_ai.usage.completion_tokens", "gen_ai.usage.output_tokens")
STATUS_ERROR = 2


class OtlpSpansImporter(Importer):
    name = "otlp"
    version = "1"
    description = "OpenTelemetry request spans, OTLP JSON (vLLM gen_ai.latency.* attributes)"
    priority = 30

    def sniff(self, probe: Probe) -> bool:
        head = probe.text
        return probe.stripped.startswith("{") and '"resourceSpans"' in head and '"scopeSpans"' in head

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        for path in paths:
            yield spans_run(path, options)


IMPORTER = OtlpSpansImporter()


def attribute_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value (int64 arrives as a string in JSON)."""
    if not isinstance(value, dict):
        return None
    if "doubleValue" in value:
        return number(value["doubleValue"])
    if "intValue" in value:
        return number(value["intValue"])
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    return None


def attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(items, list):
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("key"), str):
                out[item["key"]] = attribute_value(item.get("value"))
    return out


def spans_run(path: Path, options: ImportOptions) -> RunRecord:
    builder = SampleBuilder()
    models: Counter[str] = Counter()
    services: Counter[str] = Counter()
    skipped = 0
    negative = 0
    for line, obj in bench_json.read_objects(path):
        resource_spans = obj.get("resourceSpans")
        if not isinstance(resource_spans, list):
            raise BadInput(path, "no 'resourceSpans' list", where=f"line {line}")
        for r, rs in enumerate(resource_spans):
            res = attributes(((rs or {}).get("resource") or {}).get("attributes"))
            for ss in (rs or {}).get("scopeSpans") or []:
                for span in (ss or {}).get("spans") or []:
                    if not isinstance(span, dict):
                        raise BadInput(path, "span is not an object", where=f"line {line}, resourceSpans[{r}]")
                    attrs = attributes(span.get("attributes"))
                    if not any(k in attrs for k in LATENCY):
                        skipped += 1
                        continue
                    values: dict[str, float] = {}
                    for key, col in LATENCY.items():
                        v = attrs.get(key)
                        v = v * 1000.0 if isinstance(v, float) and not math.isnan(v) else math.nan
                        if v < 0:
                            negative += 1
                            v = math.nan  # clocks from different processes: unknown, not negative
                        values[col] = v
                    prompt = next((attrs[k] for k in PROMPT if k in attrs), None)
                    output = next((attrs[k] for k in OUTPUT if k in attrs), None)
                    status = ((span.get("status") or {}).get("code"))
                    failed = status in (STATUS_ERROR, "STATUS_CODE_ERROR")
                    builder.add(id=str(attrs.get("gen_ai.request.id") or span.get("spanId") or ""),
                                prompt_tokens=prompt, output_tokens=output, ok=0.0 if failed else 1.0, **values)
                    if attrs.get("gen_ai.response.model"):
                        models[str(attrs["gen_ai.response.model"])] += 1
                    if res.get("service.name"):
                        services[str(res["service.name"])] += 1
    if not len(builder):
        raise BadInput(path, f"no request spans with gen_ai.latency.* attributes ({skipped} other spans)")
    dims: dict[str, Dimension] = {}
    if len(models) == 1:
        dims["model"] = Dimension(next(iter(models)), "measured")
    meta: dict[str, Any] = {"source_format": "otlp json spans", "spans_skipped": skipped, "services": dict(services)}
    if len(models) > 1:
        meta["warnings"] = [f"spans name {len(models)} models: {', '.join(sorted(models)[:5])}"]
    if negative:
        meta.setdefault("warnings", []).append(f"{negative} negative latency attribute(s) read as unknown")
    label = options.label or f"otlp spans {path.name}"
    return inference_run(label, samples=builder, summary={}, dimensions=dims, meta=meta, sources=[path],
                         window={"kind": "steady", "policy": "every request span in the export"})
