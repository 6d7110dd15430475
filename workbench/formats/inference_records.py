"""Building inference runs from benchmark files: columns, summaries, request mix.

Shared by the benchmark importers so every tool's output lands in the same shape:

- ``samples``: one row per request with ``id, prompt_tokens, output_tokens, queue_ms,
  prefill_ms, decode_ms, ttft_ms, e2e_ms, ok`` plus ``itl_ms`` (the request's mean
  inter-token gap) and ``tpot_ms``; numeric columns float64, NaN when the file does
  not say, ``ok`` 1.0/0.0.
- ``meta["summary"]``: the file's own summary figures, keyed by metric
  (``ttft_ms``, ``e2e_ms``, ``itl_ms``, ``tpot_ms``, ``queue_ms``, ``prefill_ms``,
  ``decode_ms``, ``prompt_tokens``, ``output_tokens``) then statistic (``mean``,
  ``median``, ``std``, ``min``, ``max``, ``p50``, ``p90``, ``p95``, ``p99``, ``p99.9``
  ...), each present only when the file holds it: a p95 is never derived from a p99.
  Histogram quantiles carry ``pNN_bounds: [lo, hi]``. Scalars (``requests_completed``,
  ``duration_s``, ``request_throughput``...) sit at the top level of the summary.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from store.records import SAMPLES, Dimension, RunRecord, Work
from workbench.errors import BadInput

# meta["summary"] (module docstring): metric -> statistic -> value, scalars at the top level.
Summary = dict[str, float | dict[str, float]]

# No request takes longer than this: a latency beyond it (1e308 from a fuzzed or corrupt
# file, a clock of another epoch) is not a measurement. About 11.6 days.
LATENCY_BOUND_MS = 1e9
LATENCY_COLUMNS = (
    "queue_ms",
    "prefill_ms",
    "decode_ms",
    "ttft_ms",
    "e2e_ms",
    "itl_ms",
    "tpot_ms",
    "frontend_ms",
    "client_queue_ms",
)
COUNT_COLUMNS = ("prompt_tokens", "output_tokens")

NUMERIC_COLUMNS = (
    "prompt_tokens",
    "output_tokens",
    "queue_ms",
    "prefill_ms",
    "decode_ms",
    "ttft_ms",
    "e2e_ms",
    "itl_ms",
    "tpot_ms",
    "ok",
)
COLUMNS = ("id", *NUMERIC_COLUMNS)


def strict_number(value: object, path: Path | str | None, where: str) -> float:
    """A number the file states: NaN when absent (``None``) or written as ``"NaN"``;
    a text that is not a number, a boolean, a list or an object is bad input (a wrong
    type is never a missing value)."""
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise BadInput(path, f"expected a number, found {_kind(value)}", where=where)
    if isinstance(value, str):
        try:
            f = float(value)
        except ValueError:
            raise BadInput(path, f"expected a number, found the text {value[:40]!r}", where=where) from None
        if math.isnan(f):
            return math.nan
    else:
        try:
            f = float(value)
        except OverflowError:
            raise BadInput(path, "number too large", where=where) from None
    if not math.isfinite(f):
        raise BadInput(path, f"number is not finite ({value!r:.40})", where=where)
    return f


def as_object(value: object, path: Path | str | None, where: str) -> dict[str, object]:
    """An object the file must hold at ``where``: ``{}`` when absent, bad input when
    it is another type (its values are still untrusted: ``object``)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadInput(path, f"expected an object, found {_kind(value)}", where=where)
    return value


def as_list(value: object, path: Path | str | None, where: str) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadInput(path, f"expected a list, found {_kind(value)}", where=where)
    return value


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    return {dict: "an object", list: "a list"}.get(type(value), type(value).__name__)


def number(value: object) -> float:
    """A finite float, or NaN for anything missing, non-numeric or non-finite."""
    if isinstance(value, bool) or value is None:
        return math.nan
    if isinstance(value, (int, float)):
        f = float(value)
        return f if math.isfinite(f) else math.nan
    if isinstance(value, str):
        try:
            f = float(value)
        except ValueError:
            return math.nan
        return f if math.isfinite(f) else math.nan
    return math.nan


def _cell(value: object) -> float:
    """A sample cell: like :func:`number`, but an infinity stays infinite so that
    ``inference_run`` reports it (as unknown, with the reason) instead of losing it."""
    if isinstance(value, float) and math.isinf(value):
        return value
    return number(value)


class SampleBuilder:
    """Accumulates request rows into typed columns (missing -> NaN / "")."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.cols: dict[str, list[float]] = {c: [] for c in NUMERIC_COLUMNS}

    def add(self, id: str = "", **values: object) -> None:
        unknown = set(values) - set(NUMERIC_COLUMNS)
        if unknown:
            raise KeyError(f"unknown sample columns {sorted(unknown)}")
        self.ids.append(str(id))
        for col in NUMERIC_COLUMNS:
            self.cols[col].append(_cell(values.get(col)))

    def __len__(self) -> int:
        return len(self.ids)

    def table(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {"id": np.array(self.ids, dtype=str)}
        for col in NUMERIC_COLUMNS:
            out[col] = np.array(self.cols[col], dtype=np.float64)
        return out


class RequestColumns:
    """Request columns built at once (vectorised), in the shape ``SampleBuilder`` makes."""

    def __init__(self, columns: dict[str, np.ndarray], warnings: list[str] | None = None) -> None:
        missing = set(COLUMNS) - set(columns)
        if missing:
            raise KeyError(f"missing sample columns {sorted(missing)}")
        self.columns = columns
        self.warnings = list(warnings or ())  # values already read as unknown, and why

    def __len__(self) -> int:
        return len(self.columns["id"])

    def table(self) -> dict[str, np.ndarray]:
        return self.columns


_PCT = re.compile(r"^p(\d+(?:\.\d+)?)$")


def stat_name(key: str) -> str | None:
    """Normalize a statistic key: ``p99`` ``p99.9`` ``p001`` (GuideLLM 0.1 %) ``median``..."""
    k = key.strip().lower()
    if k in ("mean", "avg", "average"):
        return "mean"
    if k in ("median", "p50"):
        return "median"
    if k in ("std", "std_dev", "stddev"):
        return "std"
    if k in ("min", "max", "count"):
        return k
    m = _PCT.match(k)
    if m:
        digits = m.group(1)
        if "." not in digits and len(digits) == 3:
            # GuideLLM writes p001 = 0.1 % and p999 = 99.9 % (p01 = 1 %, p05 = 5 %).
            return f"p{float(digits) / 10:g}"
        return f"p{float(digits):g}"
    return None


def stats_block(raw: object, scale: float = 1.0, path: Path | str | None = None, where: str = "") -> dict[str, float]:
    """A statistics mapping normalized and scaled (e.g. s -> ms). With ``path`` a value
    of the wrong type is bad input (named by ``where``); without, it is dropped."""
    out: dict[str, float] = {}
    if path is not None:
        raw = as_object(raw, path, where)
    if not isinstance(raw, dict):
        return out
    for key, value in raw.items():
        if key == "percentiles" and (isinstance(value, dict) or path is not None):
            out.update(stats_block(value, scale, path, f"{where}.percentiles"))
            continue
        name = stat_name(str(key))
        if name is None:
            continue
        v = strict_number(value, path, f"{where}.{key}") if path is not None else number(value)
        if math.isnan(v):
            continue
        out[name] = v if name == "count" else v * scale
    return out


def json_safe(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``None`` (unknown), so run
    metadata stays valid JSON (bundles refuse NaN and Infinity)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.floating):
        return json_safe(float(value))
    if isinstance(value, np.integer):
        return int(value)
    return value


def request_mix(prompt: float, output: float, statistic: str) -> str | None:
    """The request mix in words, saying what the lengths are (``median``, ``mean``, ``configured``:
    the tool's settings): a median of one file and a mean of another are not the same figure."""
    if math.isnan(prompt) or math.isnan(output):
        return None
    return f"{round(prompt)} prompt / {round(output)} output tokens ({statistic})"


def request_mix_from_samples(table: dict[str, np.ndarray]) -> str | None:
    ok = table["ok"] == 1.0
    if not ok.any():
        return None
    prompt = table["prompt_tokens"][ok]
    output = table["output_tokens"][ok]
    if np.isnan(prompt).all() or np.isnan(output).all():
        return None
    return request_mix(float(np.nanmedian(prompt)), float(np.nanmedian(output)), "median")


def inference_run(
    label: str,
    *,
    samples: SampleBuilder | RequestColumns | None,
    summary: Summary | Mapping[str, object],
    dimensions: dict[str, Dimension],
    meta: Mapping[str, object],
    sources: list[Path],
    window: Mapping[str, object] | None = None,
) -> RunRecord:
    """A run with per-request samples when present, else a summary-only run. Latencies
    that cannot be true (negative, infinite, beyond :data:`LATENCY_BOUND_MS`) and negative
    token counts are kept as unknown, each reason in ``meta["warnings"]``."""
    run = RunRecord(lens="inference", label=label, dimensions=dict(dimensions), meta=dict(meta), sources=list(sources))
    if window:
        run.window = dict(window)
    warnings: list[str] = []
    summary = screen_summary(summary, warnings)
    run.meta["summary"] = summary
    run.meta = json_safe(run.meta)
    table = samples.table() if samples is not None and len(samples) else None
    if table is not None:
        warnings.extend(getattr(samples, "warnings", ()))
        screen_columns(table, "samples", warnings)
    if warnings:
        run.meta["warnings"] = [*run.meta.get("warnings", []), *warnings]
    if table is not None:
        run.tables[SAMPLES] = table
        ok = table["ok"] == 1.0
        failed = table["ok"] == 0.0
        known = int((ok | failed).sum())
        if known:  # no request with a known outcome: the error rate is unknown, not 0
            run.quality["error_rate"] = float(failed.sum() / known)
        out_tokens = table["output_tokens"][ok]
        if out_tokens.size and not np.isnan(out_tokens).any():
            run.work = Work("tokens", float(out_tokens.sum()))
        if "request_mix" not in run.dimensions:
            mix = request_mix_from_samples(table)
            if mix:
                run.dimensions["request_mix"] = Dimension(mix, "derived")
    else:
        run.meta["summary_only"] = True
        total_out = number(summary.get("total_output_tokens"))
        if not math.isnan(total_out):
            run.work = Work("tokens", total_out)
        completed, failed = number(summary.get("requests_completed")), number(summary.get("requests_failed"))
        if not math.isnan(completed) and not math.isnan(failed) and completed + failed > 0:
            run.quality["error_rate"] = failed / (completed + failed)
    return run


def _implausible(values: np.ndarray, column: str) -> np.ndarray:
    """Where ``values`` cannot be true: negative, infinite, or (a latency) past the bound."""
    with np.errstate(invalid="ignore"):
        bad = (values < 0) | np.isinf(values)
        if column in LATENCY_COLUMNS:
            bad |= values > LATENCY_BOUND_MS
    return bad


def _reason(column: str, count: int, first: float, where: str) -> str:
    what = "negative" if first < 0 else "infinite" if math.isinf(first) else f"beyond {LATENCY_BOUND_MS:g} ms"
    return (
        f"{where}.{column}: {count} value(s) negative, infinite or beyond {LATENCY_BOUND_MS:g} ms kept as unknown "
        f"(first {first:g}: {what})"
    )


def screen_columns(table: dict[str, np.ndarray], where: str, warnings: list[str]) -> None:
    """Set the impossible cells of ``table``'s latency and count columns to NaN (in place),
    one warning per column."""
    for column in (*LATENCY_COLUMNS, *COUNT_COLUMNS):
        values = table.get(column)
        if values is None or values.dtype.kind != "f":
            continue
        bad = _implausible(values, column)
        if bad.any():
            first = float(values[int(np.argmax(bad))])
            if not values.flags.writeable:
                values = table[column] = values.copy()
            values[bad] = np.nan
            warnings.append(_reason(column, int(bad.sum()), first, where))


def screen_summary(summary: Mapping[str, object], warnings: list[str]) -> Summary:
    """``summary`` without the figures that cannot be true: a negative or infinite scalar,
    a latency statistic (``*_ms``) that is negative or past the bound, a negative std."""
    out: Summary = {}
    for key, value in summary.items():
        if isinstance(value, dict):
            block: dict[str, Any] = {}
            for stat, v in value.items():
                bounded = (
                    key.endswith("_ms")
                    and not stat.endswith(("_bounds", "_lower_bound_only", "_first_bucket"))
                    and stat != "count"
                )
                if (
                    bounded
                    and isinstance(v, (int, float))
                    and not isinstance(v, bool)
                    and (v < 0 or not math.isfinite(v) or v > LATENCY_BOUND_MS)
                ):
                    warnings.append(
                        f"summary {key}.{stat} = {v:g} is negative, infinite or beyond {LATENCY_BOUND_MS:g} ms: kept "
                        f"as unknown"
                    )
                    continue
                block[stat] = v
            out[key] = block
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and (value < 0 or math.isinf(value)):
            warnings.append(f"summary {key} = {value:g} is negative or infinite: kept as unknown")
        else:
            out[key] = value  # type: ignore[assignment]
    return out
