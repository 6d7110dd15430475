"""Quantiles from Prometheus-style cumulative histograms, with where the true value lies.

A histogram keeps only bucket counts, so a quantile is known only to lie inside one
bucket. The estimate interpolates linearly inside that bucket, exactly as Prometheus'
``histogram_quantile`` does; ``low``/``high`` are the bucket's edges, which bound the
sample quantile (the ⌈q·N⌉-th smallest observation) with certainty.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class QuantileEstimate:
    q: float
    value: float  # the interpolated estimate (Prometheus semantics)
    low: float  # the sample quantile lies in [low, high]
    high: float
    bucket: int  # index of the bucket holding it
    total: float  # number of observations

    @property
    def max_error(self) -> float:
        """The largest possible distance between ``value`` and the sample quantile."""
        return max(self.value - self.low, self.high - self.value)

    def to_json(self) -> dict[str, object]:
        return {
            "q": self.q,
            "value": self.value if math.isfinite(self.value) else None,
            "low": self.low if math.isfinite(self.low) else None,
            "high": self.high if math.isfinite(self.high) else None,
            "bucket": self.bucket,
            "total": self.total,
            "method": "prometheus-linear-in-bucket",
        }


def histogram_quantile(edges: Any, cumulative_counts: Any, q: float, *, lower_limit: float = 0.0) -> QuantileEstimate:
    """The q-quantile of a cumulative histogram.

    ``edges`` are the buckets' upper bounds (``le``), strictly increasing; the last may
    be ``inf``. ``cumulative_counts[i]`` counts observations ≤ ``edges[i]`` and never
    decreases. Observations are assumed ≥ ``lower_limit`` (0 for durations), which is
    the lower edge of the first bucket. In the ``+Inf`` bucket the estimate is the last
    finite edge and the upper bound is infinite. Raises ValueError on malformed input.
    """
    e = np.asarray(edges, dtype=np.float64).ravel()
    c = np.asarray(cumulative_counts, dtype=np.float64).ravel()
    if len(e) == 0 or len(e) != len(c):
        raise ValueError("edges and cumulative counts must be non-empty and of equal length")
    if not 0.0 <= q <= 1.0 or math.isnan(q):
        raise ValueError(f"quantile must be in [0, 1], got {q}")
    if np.any(np.isnan(e)) or np.any(np.diff(e) <= 0):
        raise ValueError("bucket edges must be strictly increasing")
    if np.any(np.isnan(c)) or np.any(c < 0) or np.any(np.diff(c) < 0):
        raise ValueError("cumulative counts must be non-negative and non-decreasing")
    if e[0] < lower_limit:
        raise ValueError(f"first bucket edge {e[0]} lies below the lower limit {lower_limit}")
    total = float(c[-1])
    if total == 0:
        raise ValueError("the histogram holds no observations")
    rank = q * total
    # The sample quantile is the k-th smallest observation, k = max(1, ⌈q·N⌉).
    k = max(1.0, math.ceil(rank))
    bucket = int(np.searchsorted(c, k, side="left"))
    # Interpolation follows Prometheus: first bucket with count ≥ rank.
    ib = min(int(np.searchsorted(c, rank, side="left")), len(c) - 1)
    if c[ib] == 0:  # q = 0 lands in empty leading buckets: use the first non-empty one
        ib = int(np.flatnonzero(c > 0)[0])
    low = lower_limit if bucket == 0 else float(e[bucket - 1])
    high = float(e[bucket])
    if not math.isfinite(e[ib]):
        value = float(e[ib - 1]) if ib > 0 else math.nan
    else:
        start = lower_limit if ib == 0 else float(e[ib - 1])
        below = 0.0 if ib == 0 else float(c[ib - 1])
        inside = float(c[ib]) - below
        value = float(e[ib]) if inside == 0 else start + (float(e[ib]) - start) * (rank - below) / inside
        value = min(max(value, start), float(e[ib]))  # rounding must not carry it past its bucket's edge
    return QuantileEstimate(q, value, low, high, bucket, total)


def cumulative_histogram(values: Any, edges: Any) -> np.ndarray:
    """Cumulative counts of ``values`` ≤ each edge (what a Prometheus histogram stores)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    v = np.sort(v[~np.isnan(v)])
    return np.searchsorted(v, np.asarray(edges, dtype=np.float64), side="right").astype(np.float64)
