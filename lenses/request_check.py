"""What a request means (the inference lens's sample check, DESIGN section 9).

A request that produced at least one output token has a TTFT above zero. A request with an
error, or with no output token at all, is a failed request: it leaves the latency statistics
and counts in the error rate, whatever the file called it (vLLM writes an empty response as
``ttft`` 0.0, ``output_len`` 0 and no error; LLMPerf as ``ttft_s`` 0 and no ``error_code``).
Completed against planned requests is read where the file states both.
"""

from __future__ import annotations

import math

import numpy as np

from store.records import SAMPLES, RunRecord
from store.run_meta import SampleFinding


def _pct(x: float) -> str:
    return f"{100.0 * x:.3g} %"


def check_requests(run: RunRecord) -> list[SampleFinding]:
    """Mark failed requests (``ok`` 0) in ``run``'s per-request rows, in place, and say so;
    for a summary-only run, read the error rate from completed and planned requests."""
    table = run.tables.get(SAMPLES)
    if isinstance(table, dict) and table and len(next(iter(table.values()))):
        return _rows(run, table)
    return _summary(run)


def _rows(run: RunRecord, table: dict[str, np.ndarray]) -> list[SampleFinding]:
    n = len(next(iter(table.values())))
    ok = np.asarray(table["ok"], dtype=np.float64) if "ok" in table else np.full(n, np.nan)
    out = np.asarray(table["output_tokens"], dtype=np.float64) if "output_tokens" in table else np.full(n, np.nan)
    errored = ok == 0
    empty = (out == 0) & ~errored  # no error said, and no token came back
    found: list[SampleFinding] = []
    if empty.any():
        ok = ok.copy()
        ok[empty] = 0.0
        table["ok"] = ok
    ttft = table.get("ttft_ms")
    if isinstance(ttft, np.ndarray) and ttft.dtype.kind == "f":
        zero = (ttft <= 0) & (ok != 0)
        if zero.any():
            ttft = table["ttft_ms"] = ttft.copy()
            ttft[zero] = np.nan
            found.append(
                SampleFinding(
                    code="ttft_zero",
                    text=f"{int(zero.sum()):,} of {n:,} requests that produced output have a TTFT of 0 ms (a "
                    f"non-streaming backend, or the tool's stand-in): kept as unknown",
                    count=int(zero.sum()),
                    of=n,
                )
            )
    failed = ok == 0
    known = int((~np.isnan(ok)).sum())
    if known:
        run.quality["error_rate"] = float(failed.sum()) / known
    if failed.any():
        parts = [
            f"{count:,} {what}"
            for count, what in ((int(errored.sum()), "with an error"), (int(empty.sum()), "with no output token"))
            if count
        ]
        found.append(
            SampleFinding(
                code="failed_requests",
                text=f"{int(failed.sum()):,} of {n:,} requests failed or returned nothing ({', '.join(parts)}): left "
                f"out of the latency statistics, counted in the error rate ({_pct(failed.sum() / known)})",
                count=int(failed.sum()),
                of=n,
            )
        )
        _drop_failed_gaps(run, failed)
    planned = run.typed_meta.summary_scalar("requests_planned")
    if planned is not None and planned > n:
        found.append(
            SampleFinding(
                code="requests_missing",
                text=f"the file lists {n:,} of the {planned:,.0f} requests it planned: the other {planned - n:,.0f} "
                f"are not in it (unknown, not in the error rate)",
                count=int(planned - n),
                of=int(planned),
            )
        )
    return found


def _drop_failed_gaps(run: RunRecord, failed: np.ndarray) -> None:
    """Pooled inter-token gaps of failed requests leave the ITL statistics with their requests."""
    itl = run.tables.get("itl")
    if not isinstance(itl, dict) or "request" not in itl:
        return
    request = np.asarray(itl["request"]).astype(np.int64)
    inside = (request >= 0) & (request < len(failed))
    keep = ~inside | ~failed[np.clip(request, 0, len(failed) - 1)]
    if not keep.all():
        run.tables["itl"] = {k: np.asarray(v)[keep] for k, v in itl.items()}


def _summary(run: RunRecord) -> list[SampleFinding]:
    """A summary-only run: failed = planned − completed when the file states those two."""
    meta = run.typed_meta
    completed, failed, planned = (
        meta.summary_scalar(k) for k in ("requests_completed", "requests_failed", "requests_planned")
    )
    if failed is None and completed is not None and planned is not None and planned >= completed:
        failed = planned - completed
    if completed is None or failed is None or not math.isfinite(completed + failed) or completed + failed <= 0:
        return []
    total = completed + failed
    if "error_rate" not in run.quality:
        run.quality["error_rate"] = failed / total
    if not failed:
        return []
    return [
        SampleFinding(
            code="failed_requests",
            text=f"{failed:,.0f} of {total:,.0f} requests failed or returned nothing (the file says {completed:,.0f} "
            f"completed): counted in the error rate ({_pct(failed / total)}); the latency figures the file states are "
            f"over the {completed:,.0f} that completed",
            count=int(failed),
            of=int(total),
        )
    ]
