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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.records import Dimension, RunRecord
from workbench.errors import BadInput
from workbench.formats import bench_json
from workbench.formats.inference_records import SampleBuilder, inference_run
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


_INT64 = 1 << 63


class _WrongType(ValueError):
    pass


def attribute_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value (int64 arrives as a string in JSON).

    A value whose content contradicts its kind (``"intValue": "fast"``, a double of
    ``1e999``) raises ``ValueError``: a wrong type is bad input, not a missing value.
    Kinds wb does not use (arrays, key-value lists, bytes) read as None.
    """
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _WrongType(f'an attribute value must be an object like {{"doubleValue": 1.5}}, got {_kind(value)}')
    if "doubleValue" in value:
        return _double(value["doubleValue"])
    if "intValue" in value:
        return _int64(value["intValue"])
    if "stringValue" in value:
        text = value["stringValue"]
        if not isinstance(text, str):
            raise _WrongType(f"stringValue must be a string, got {_kind(text)}")
        return text
    if "boolValue" in value:
        flag = value["boolValue"]
        if not isinstance(flag, bool):
            raise _WrongType(f"boolValue must be true or false, got {_kind(flag)}")
        return flag
    return None


def _double(raw: Any) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise _WrongType(f"doubleValue must be a number, got {_kind(raw)}")
    try:
        f = float(raw)  # proto3 JSON may write a double as a string
    except ValueError:
        raise _WrongType(f"doubleValue must be a number, got {_brief(raw)}") from None
    except OverflowError:  # an integer past a double's range
        raise _WrongType(f"doubleValue {_brief(raw)} is not a finite number") from None
    if not math.isfinite(f):
        raise _WrongType(f"doubleValue {_brief(raw)} is not a finite number")
    return f


def _int64(raw: Any) -> int:
    if isinstance(raw, bool) or not isinstance(raw, (int, str)):
        raise _WrongType(f"intValue must be an integer (or its decimal string), got {_kind(raw)}")
    text = raw if isinstance(raw, str) else None
    if text is not None and not (text.lstrip("-").isdigit() and len(text) <= 20):
        raise _WrongType(f"intValue must be a decimal integer, got {_brief(raw)}")
    n = int(raw)
    if not -_INT64 <= n < _INT64:
        raise _WrongType(f"intValue {_brief(raw)} is outside int64")
    return n


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def attributes(items: Any) -> dict[str, object]:
    """``[{"key": ..., "value": AnyValue}]`` as a mapping of raw AnyValues (decoded on use)."""
    if items is None:
        return {}
    if not isinstance(items, list):
        raise _WrongType(f"attributes must be an array, got {_kind(items)}")
    out: dict[str, object] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise _WrongType("an attribute must be an object with a string 'key'")
        out[item["key"]] = item.get("value")
    return out


def _members(obj: Any, key: str, where: str, path: Path) -> list[Any]:
    """``obj[key]`` as a list of objects (absent: empty)."""
    if not isinstance(obj, dict):
        raise BadInput(path, f"expected an object, got {_kind(obj)}", where=where)
    items = obj.get(key)
    if items is None:
        return []
    if not isinstance(items, list):
        raise BadInput(path, f"'{key}' must be an array, got {_kind(items)}", where=where)
    return items


def spans_run(path: Path, options: ImportOptions) -> RunRecord:
    builder = SampleBuilder()
    models: Counter[str] = Counter()
    services: Counter[str] = Counter()
    skipped = 0
    negative = 0
    for line, obj in bench_json.read_objects(path):
        for where, span, service in _spans(obj, line, path):
            facts = _span_facts(span, path, where)
            if facts is None:
                skipped += 1
                continue
            negative += facts.negative
            values, counts, request_id, model = facts.values, facts.counts, facts.request_id, facts.model
            status = span.get("status")
            code = status.get("code") if isinstance(status, dict) else None
            failed = code in (STATUS_ERROR, "STATUS_CODE_ERROR")
            builder.add(
                id=str(request_id or span.get("spanId") or ""),
                prompt_tokens=counts[0],
                output_tokens=counts[1],
                ok=0.0 if failed else 1.0,
                **values,
            )
            if model:
                models[str(model)] += 1
            if service:
                services[str(service)] += 1
    if not len(builder):
        raise BadInput(path, f"no request spans with gen_ai.latency.* attributes ({skipped} other spans)")
    dims: dict[str, Dimension] = {}
    if len(models) == 1:
        dims["model"] = Dimension(next(iter(models)), "measured")
    meta: dict[str, object] = {"source_format": "otlp json spans", "spans_skipped": skipped, "services": dict(services)}
    warnings = []
    if len(models) > 1:
        warnings.append(f"spans name {len(models)} models: {', '.join(sorted(models)[:5])}")
    if negative:
        warnings.append(f"{negative} negative latency attribute(s) read as unknown")
    if warnings:
        meta["warnings"] = warnings
    label = options.label or f"otlp spans {path.name}"
    return inference_run(
        label,
        samples=builder,
        summary={},
        dimensions=dims,
        meta=meta,
        sources=[path],
        window={"kind": "steady", "policy": "every request span in the export"},
    )


def _spans(obj: dict[str, Any], line: int, path: Path) -> Iterator[tuple[str, dict[str, Any], Any]]:
    """(place, span, its resource's service.name) for every span of one line of the export."""
    resource_spans = obj.get("resourceSpans")
    if not isinstance(resource_spans, list):
        raise BadInput(path, "no 'resourceSpans' list", where=f"line {line}")
    for r, rs in enumerate(resource_spans):
        at = f"line {line}, resourceSpans[{r}]"
        try:
            resource = rs.get("resource") if isinstance(rs, dict) else None
            res = attributes(resource.get("attributes")) if isinstance(resource, dict) else {}
            service = attribute_value(res.get("service.name"))
        except ValueError as exc:
            raise BadInput(path, str(exc), where=f"{at}.resource") from None
        for s_i, ss in enumerate(_members(rs, "scopeSpans", at, path)):
            for p_i, span in enumerate(_members(ss, "spans", f"{at}.scopeSpans[{s_i}]", path)):
                where = f"{at}.scopeSpans[{s_i}].spans[{p_i}]"
                if not isinstance(span, dict):
                    raise BadInput(path, "span is not an object", where=where)
                yield where, span, service


@dataclass
class _SpanFacts:
    """What one request span's attributes say: latencies (ms), token counts, request id, model."""

    values: dict[str, float]
    counts: list[Any]
    request_id: Any
    model: Any
    negative: int  # negative latencies read as unknown


def _span_facts(span: dict[str, Any], path: Path, where: str) -> _SpanFacts | None:
    """The span's request facts; None for a span with no gen_ai.latency.* attribute (not a request)."""
    key = ""
    negative = 0
    try:
        attrs = attributes(span.get("attributes"))
        if not any(k in attrs for k in LATENCY):
            return None
        values: dict[str, float] = {}
        for key, col in LATENCY.items():
            v = attribute_value(attrs.get(key))
            if isinstance(v, (str, bool)):
                raise _WrongType(f"a latency must be a number, got {_kind(v)}")
            v = math.nan if v is None else float(v) * 1000.0
            if v < 0:
                negative += 1
                v = math.nan  # clocks from different processes: unknown, not negative
            values[col] = v
        counts = []
        for names in (PROMPT, OUTPUT):
            key = next((k for k in names if k in attrs), names[0])
            count = attribute_value(attrs.get(key))
            if isinstance(count, (str, bool)):
                raise _WrongType(f"a token count must be a number, got {_kind(count)}")
            counts.append(count)
        key = "gen_ai.request.id"
        request_id = attribute_value(attrs.get(key))
        key = "gen_ai.response.model"
        model = attribute_value(attrs.get(key))
    except ValueError as exc:
        raise BadInput(path, str(exc), where=f"{where}.attributes[{key!r}]" if key else where) from None
    return _SpanFacts(values, counts, request_id, model, negative)
