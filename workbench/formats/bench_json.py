"""Benchmark-client result files: one JSON object, JSON Lines, or objects concatenated.

vLLM ``benchmark_serving.py`` / ``vllm bench serve`` and SGLang ``bench_serving``
share the per-request array layout (``input_lens``, ``output_lens``, ``ttfts`` and
``itls`` in seconds, ``errors`` with ``""`` for success) and a flat summary
(``mean_ttft_ms``, ``p99_ttft_ms`` ...). This module reads the objects and turns the
arrays into request samples; the importers add what is tool-specific. The objects are
untrusted parsed JSON (``Mapping[str, object]``): each value is checked for its type
where it is read, and a wrong one is bad input naming the file and the key.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NoReturn

import numpy as np

from workbench.errors import BadInput
from workbench.formats.inference_records import LATENCY_BOUND_MS, RequestColumns, Summary, stat_name, strict_number
from workbench.inputs import read_bounded

MAX_BYTES = 2 << 30  # a single result file bigger than this is not a benchmark result


def _refuse(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse)


def read_objects(path: Path) -> Iterator[tuple[int, dict[str, object]]]:
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


def flat_summary(obj: Mapping[str, object], path: Path | None = None, where: str = "") -> Summary:
    """Only the statistics the file states: no percentile is derived from another. A
    figure of the wrong type (``"request_throughput": "fast"``) is bad input. Returns
    ``{"ttft_ms": {"mean": ..., "p99": ...}, "duration_s": ...}`` (``meta["summary"]``)."""
    summary: Summary = {}
    at = f"{where}: " if where else ""
    for key, value in obj.items():
        m = _SUMMARY_KEY.match(key)
        if m and m.group(2) in METRIC_KEYS:
            v = strict_number(value, path, f"{at}{key}")
            stat = stat_name(m.group(1))
            if stat and not math.isnan(v):
                summary.setdefault(METRIC_KEYS[m.group(2)], {})[stat] = v  # type: ignore[index]
    for key, target in SCALARS.items():
        if key in obj:
            v = strict_number(obj[key], path, f"{at}{key}")
            if not math.isnan(v):
                summary[target] = v
    return summary


ARRAY_KEYS = ("input_lens", "output_lens", "ttfts", "itls", "errors", "latencies")


def has_arrays(obj: Mapping[str, object], path: Path | None = None, where: str = "") -> bool:
    """Whether the per-request arrays are there; one that is there but not a list is
    bad input (``"ttfts": "nope"`` is not "summary only")."""
    if path is not None:
        for key in ARRAY_KEYS:
            if obj.get(key) is not None and not isinstance(obj[key], list):
                raise BadInput(
                    path, f"per-request array {key!r} is not a list", where=f"{where}: {key}" if where else key
                )
    return isinstance(obj.get("ttfts"), list) and isinstance(obj.get("output_lens"), list)


def _floats(values: list[object], path: Path | None, where: str, key: str) -> np.ndarray:
    """A per-request array as float64 (``None``/"NaN" -> NaN), at numpy speed; anything
    else than a finite number is bad input naming the element (found by a slow pass)."""
    try:
        arr = np.array(values, dtype=np.float64)
        fast = (
            arr.ndim == 1 and bool(np.isfinite(arr[~np.isnan(arr)]).all()) and not any(type(v) is bool for v in values)
        )
    except (ValueError, TypeError, OverflowError):
        fast = False
    if fast:
        return arr
    return np.array([strict_number(v, path, f"{where}: {key}[{i}]") for i, v in enumerate(values)], dtype=np.float64)


def _gaps(itls: list[object], path: Path | None, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Every inter-token gap (seconds) and the index of the request it belongs to."""
    rows = []
    for i, row in enumerate(itls):
        if row is not None and not isinstance(row, list):
            raise BadInput(path, f"expected a list of gaps, found {type(row).__name__}", where=f"{where}: itls[{i}]")
        rows.append(row or [])
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    flat = list(itertools.chain.from_iterable(rows))
    try:
        gaps = _floats(flat, path, where, "itls")
    except BadInput:
        for i, row in enumerate(rows):  # name the request, not the flattened index
            for g in row:
                strict_number(g, path, f"{where}: itls[{i}]")
        raise
    return gaps, np.repeat(np.arange(len(rows), dtype=np.float64), lengths)


def samples_from_arrays(obj: Mapping[str, object], path: Path, where: str) -> RequestColumns:
    """One sample per request; failed requests stay (``ok`` 0) with unknown timings."""
    ttfts, outs = obj["ttfts"], obj["output_lens"]
    n = len(ttfts)
    ins = obj.get("input_lens")
    itls = obj.get("itls")
    errors = obj.get("errors")
    latencies = obj.get("latencies")
    for key, arr in (
        ("output_lens", outs),
        ("input_lens", ins),
        ("itls", itls),
        ("errors", errors),
        ("latencies", latencies),
    ):
        if arr is not None and (not isinstance(arr, list) or len(arr) != n):
            raise BadInput(
                path,
                f"per-request array '{key}' has {len(arr) if isinstance(arr, list) else 'no'} items, 'ttfts' has {n}",
                where=where,
            )
    nan = np.full(n, np.nan)
    if errors is not None:
        ok = np.fromiter((1.0 if e in ("", None) else 0.0 for e in errors), dtype=np.float64, count=n)
    else:
        ok = nan.copy()  # the file does not say which requests failed
    ttft = _floats(ttfts, path, where, "ttfts")
    out = _floats(outs, path, where, "output_lens")
    # Failures are written as 0.0: unknown, not zero.
    ttft[(ok == 0.0) | (np.isnan(ok) & (ttft == 0.0))] = np.nan
    # Negative, infinite or absurd values (a "-1" sentinel, 1e308) are screened by
    # inference_run, which keeps them as unknown and says so.
    itl_ms = nan.copy()
    warnings: list[str] = []
    if itls is not None:
        gaps, req = _gaps(itls, path, where)
        finite = _plausible_gaps(gaps, f"{where}: itls", warnings)
        counts = np.bincount(req[finite].astype(np.int64), minlength=n)
        sums = np.bincount(req[finite].astype(np.int64), weights=gaps[finite], minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            itl_ms = np.where(counts > 0, 1000.0 * sums / np.maximum(counts, 1), np.nan)
    e2e = _floats(latencies, path, where, "latencies") if latencies is not None else nan.copy()
    e2e[ok == 0.0] = np.nan
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        plausible = (e2e >= 0) & (ttft >= 0) & (e2e * 1000.0 <= LATENCY_BOUND_MS) & (ttft * 1000.0 <= LATENCY_BOUND_MS)
        tpot = np.where(plausible & (out > 1), 1000.0 * (e2e - ttft) / (out - 1), np.nan)
    with np.errstate(over="ignore"):  # 1e308 s is inf ms: screened (unknown, with the reason) by inference_run
        ttft_ms, e2e_ms = ttft * 1000.0, e2e * 1000.0
    columns = {
        "id": np.array([str(i) for i in range(n)], dtype=str),
        "prompt_tokens": _floats(ins, path, where, "input_lens") if ins is not None else nan.copy(),
        "output_tokens": np.where(ok != 0.0, out, np.nan),
        "queue_ms": nan.copy(),
        "prefill_ms": nan.copy(),
        "decode_ms": nan.copy(),
        "ttft_ms": ttft_ms,
        "e2e_ms": e2e_ms,
        "itl_ms": itl_ms,
        "tpot_ms": tpot,
        "ok": ok,
    }
    return RequestColumns(columns, warnings)


def _plausible_gaps(gaps: np.ndarray, where: str, warnings: list[str] | None = None) -> np.ndarray:
    """Which gaps (seconds) can be true; the others are counted in ``warnings``."""
    with np.errstate(invalid="ignore", over="ignore"):
        ok = np.isfinite(gaps) & (gaps >= 0) & (gaps * 1000.0 <= LATENCY_BOUND_MS)
    bad = ~ok & ~np.isnan(gaps)
    if warnings is not None and bad.any():
        first = float(gaps[int(np.argmax(bad))])
        warnings.append(
            f"{where}: {int(bad.sum())} gap(s) negative, infinite or beyond {LATENCY_BOUND_MS:g} ms kept as unknown "
            f"(first {first:g} s)"
        )
    return ok


def itl_table(obj: Mapping[str, object], path: Path | None = None, where: str = "") -> dict[str, np.ndarray] | None:
    """All inter-token gaps pooled, with the request index they belong to (ms)."""
    itls = obj.get("itls")
    if not isinstance(itls, list):
        return None
    gaps, req = _gaps(itls, path, where)
    keep = _plausible_gaps(gaps, where)  # the impossible ones are reported with the samples
    gaps, req = gaps[keep], req[keep]
    if not gaps.size:
        return None
    # One row per gap is the biggest table of a detailed result (~127 gaps a request):
    # float32 ms (7 significant digits, well under a nanosecond at these sizes) and an
    # int32 request index halve it.
    return {"request": req.astype(np.int32), "itl_ms": (gaps * 1000.0).astype(np.float32)}


def load_object(path: Path, limit: int, too_big: str) -> dict[str, object]:
    """One strict JSON object from a small file (NaN/Infinity refused; faults name the line)."""
    data = read_bounded(path, limit, too_big)
    try:
        obj = json.loads(data.decode("utf-8", errors="replace"), parse_constant=_refuse)
    except (ValueError, RecursionError) as exc:
        raise BadInput(
            path, f"invalid JSON ({getattr(exc, 'msg', exc)}; truncated?)", where=f"line {getattr(exc, 'lineno', '?')}"
        ) from None
    if not isinstance(obj, dict):
        raise BadInput(path, "expected a JSON object")
    return obj
