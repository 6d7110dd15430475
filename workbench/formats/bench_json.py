"""Benchmark-client result files: one JSON object, JSON Lines, or objects concatenated.

vLLM ``benchmark_serving.py`` / ``vllm bench serve`` and SGLang ``bench_serving``
share the per-request array layout (``input_lens``, ``output_lens``, ``ttfts`` and
``itls`` in seconds, ``errors`` with ``""`` for success) and a flat summary
(``mean_ttft_ms``, ``p99_ttft_ms`` ...). This module reads the objects and turns the
arrays into request samples; the importers add what is tool-specific.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workbench.errors import BadInput
from workbench.formats.inference_records import SampleBuilder, number, stat_name, strict_number
from workbench.importers.base import read_bounded

MAX_BYTES = 2 << 30  # a single result file bigger than this is not a benchmark result


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse)


def read_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each top-level JSON object with the line it starts on (JSONL or concatenated)."""
    data = read_bounded(path, MAX_BYTES, "larger than 2 GiB; not a benchmark result file")
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    pos, n = 0, len(text)
    found = 0
    while True:
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos >= n:
            break
        line = text.count("\n", 0, pos) + 1
        try:
            obj, end = _DECODER.raw_decode(text, pos)
        except (json.JSONDecodeError, ValueError, RecursionError) as exc:
            msg = getattr(exc, "msg", str(exc))
            at = getattr(exc, "lineno", line)
            raise BadInput(path, f"invalid JSON ({msg}; truncated file?)", where=f"line {at}") from None
        if not isinstance(obj, dict):
            raise BadInput(path, "expected a JSON object per result", where=f"line {line}")
        found += 1
        yield line, obj
        pos = end
    if not found:
        raise BadInput(path, "no JSON object in the file")


_SUMMARY_KEY = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_([a-z0-9_]+?)_ms$")
# The flat summary's metric names, per tool, mapped to our summary keys.
METRIC_KEYS = {
    "ttft": "ttft_ms",
    "tpot": "tpot_ms",
    "itl": "itl_ms",
    "e2el": "e2e_ms",
    "e2e_latency": "e2e_ms",
    "client_queue_time": "client_queue_ms",
}
SCALARS = {
    "duration": "duration_s",
    "completed": "requests_completed",
    "failed": "requests_failed",
    "total_input_tokens": "total_input_tokens",
    "total_output_tokens": "total_output_tokens",
    "request_throughput": "request_throughput",
    "output_throughput": "output_throughput",
    "total_token_throughput": "total_token_throughput",
    "total_throughput": "total_token_throughput",
    "input_throughput": "input_throughput",
    "request_goodput": "request_goodput",
    "request_goodput:": "request_goodput",  # older vLLM wrote the key with a stray colon
    "max_output_tokens_per_s": "max_output_tokens_per_s",
    "max_concurrent_requests": "max_concurrent_requests",
    "concurrency": "measured_concurrency",
}


def flat_summary(obj: dict[str, Any], path: Any = None, where: str = "") -> dict[str, Any]:
    """Only the statistics the file states: no percentile is derived from another. A
    figure of the wrong type (``"request_throughput": "fast"``) is bad input."""
    summary: dict[str, Any] = {}
    at = f"{where}: " if where else ""
    for key, value in obj.items():
        m = _SUMMARY_KEY.match(key)
        if m and m.group(2) in METRIC_KEYS:
            v = strict_number(value, path, f"{at}{key}")
            stat = stat_name(m.group(1))
            if stat and not math.isnan(v):
                summary.setdefault(METRIC_KEYS[m.group(2)], {})[stat] = v
    for key, target in SCALARS.items():
        if key in obj:
            v = strict_number(obj[key], path, f"{at}{key}")
            if not math.isnan(v):
                summary[target] = v
    return summary


ARRAY_KEYS = ("input_lens", "output_lens", "ttfts", "itls", "errors", "latencies")


def has_arrays(obj: dict[str, Any], path: Any = None, where: str = "") -> bool:
    """Whether the per-request arrays are there; one that is there but not a list is
    bad input (``"ttfts": "nope"`` is not "summary only")."""
    if path is not None:
        for key in ARRAY_KEYS:
            if obj.get(key) is not None and not isinstance(obj[key], list):
                raise BadInput(path, f"per-request array {key!r} is not a list", where=f"{where}: {key}" if where else key)
    return isinstance(obj.get("ttfts"), list) and isinstance(obj.get("output_lens"), list)


def samples_from_arrays(obj: dict[str, Any], path: Path, where: str) -> SampleBuilder:
    """One sample per request; failed requests stay (``ok`` 0) with unknown timings."""
    ttfts, outs = obj["ttfts"], obj["output_lens"]
    n = len(ttfts)
    ins = obj.get("input_lens")
    itls = obj.get("itls")
    errors = obj.get("errors")
    latencies = obj.get("latencies")
    for key, arr in (("output_lens", outs), ("input_lens", ins), ("itls", itls), ("errors", errors), ("latencies", latencies)):
        if arr is not None and (not isinstance(arr, list) or len(arr) != n):
            raise BadInput(path, f"per-request array '{key}' has {len(arr) if isinstance(arr, list) else 'no'} items, 'ttfts' has {n}", where=where)
    builder = SampleBuilder()
    for i in range(n):
        if errors is not None:
            ok = 1.0 if errors[i] in ("", None) else 0.0
        else:
            ok = math.nan  # the file does not say which requests failed
        ttft = strict_number(ttfts[i], path, f"{where}: ttfts[{i}]")
        out = strict_number(outs[i], path, f"{where}: output_lens[{i}]")
        if ok == 0.0 or (ok != 1.0 and ttft == 0.0):
            ttft = math.nan  # failures are written as 0.0: unknown, not zero
        if not math.isnan(ttft) and ttft < 0:
            raise BadInput(path, f"negative TTFT {ttft}", where=f"{where}.ttfts[{i}]")
        gaps = itls[i] if itls is not None and isinstance(itls[i], list) else None
        itl_ms = math.nan
        if gaps:
            vals = [strict_number(g, path, f"{where}: itls[{i}]") for g in gaps]
            finite = [v for v in vals if not math.isnan(v)]
            if finite:
                itl_ms = 1000.0 * math.fsum(finite) / len(finite)
        e2e = strict_number(latencies[i], path, f"{where}: latencies[{i}]") if latencies is not None else math.nan
        if ok == 0.0:
            e2e = math.nan
        tpot = math.nan
        if not math.isnan(e2e) and not math.isnan(ttft) and out > 1:
            tpot = 1000.0 * (e2e - ttft) / (out - 1)
        builder.add(
            id=str(i),
            prompt_tokens=strict_number(ins[i], path, f"{where}: input_lens[{i}]") if ins is not None else None,
            output_tokens=out if ok != 0.0 else None,
            ttft_ms=ttft * 1000.0,
            e2e_ms=e2e * 1000.0,
            itl_ms=itl_ms,
            tpot_ms=tpot,
            ok=ok,
        )
    return builder


def itl_table(obj: dict[str, Any]) -> dict[str, Any] | None:
    """All inter-token gaps pooled, with the request index they belong to (ms)."""
    import numpy as np

    itls = obj.get("itls")
    if not isinstance(itls, list):
        return None
    req: list[float] = []
    gaps: list[float] = []
    for i, row in enumerate(itls):
        if isinstance(row, list):
            for g in row:
                req.append(float(i))
                gaps.append(number(g) * 1000.0)
    if not gaps:
        return None
    return {"request": np.array(req, dtype=np.float64), "itl_ms": np.array(gaps, dtype=np.float64)}


def load_object(path: Path, limit: int, too_big: str) -> dict[str, Any]:
    """One strict JSON object from a small file (NaN/Infinity refused; faults name the line)."""
    data = read_bounded(path, limit, too_big)
    try:
        obj = json.loads(data.decode("utf-8", errors="replace"), parse_constant=_refuse)
    except (ValueError, RecursionError) as exc:
        raise BadInput(path, f"invalid JSON ({getattr(exc, 'msg', exc)}; truncated?)", where=f"line {getattr(exc, 'lineno', '?')}") from None
    if not isinstance(obj, dict):
        raise BadInput(path, "expected a JSON object")
    return obj
