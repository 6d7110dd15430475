"""Quantiles from cumulative (Prometheus-style) histograms, with certain bucket bounds."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import workbench.stats as ws

EDGES = [0.1, 0.5, 1.0, math.inf]
COUNTS = [10, 60, 90, 100]


@pytest.mark.parametrize(
    "q, value, low, high",
    [
        (0.05, 0.05, 0.0, 0.1),
        (0.5, 0.42, 0.1, 0.5),
        (0.9, 1.0, 0.5, 1.0),
        (0.95, 1.0, 1.0, math.inf),  # in the +Inf bucket: last finite edge, no upper bound
        (0.0, 0.0, 0.0, 0.1),
    ],
)
def test_prometheus_semantics(q, value, low, high):
    est = ws.histogram_quantile(EDGES, COUNTS, q)
    assert est.value == pytest.approx(value, rel=1e-12)
    assert (est.low, est.high) == (low, high)
    assert est.total == 100


def test_json_has_no_infinity():
    doc = ws.histogram_quantile(EDGES, COUNTS, 0.99).to_json()
    assert doc["high"] is None and doc["low"] == 1.0


@pytest.mark.parametrize(
    "edges, counts, q, message",
    [
        ([1, 2], [1], 0.5, "equal length"),
        ([2, 1], [1, 2], 0.5, "increasing"),
        ([1, 2], [3, 2], 0.5, "non-decreasing"),
        ([1, 2], [0, 0], 0.5, "no observations"),
        ([1, 2], [1, 2], 1.5, "quantile"),
        ([-1, 2], [1, 2], 0.5, "lower limit"),
    ],
)
def test_malformed(edges, counts, q, message):
    with pytest.raises(ValueError, match=message):
        ws.histogram_quantile(edges, counts, q)


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(st.floats(0.0, 50.0, allow_nan=False), min_size=1, max_size=300),
    edges=st.lists(st.floats(0.01, 60.0), min_size=1, max_size=12, unique=True),
    q=st.floats(0.0, 1.0),
    with_inf=st.booleans(),
)
def test_sample_quantile_always_inside_the_bucket_bounds(data, edges, q, with_inf):
    edges = sorted(edges) + ([math.inf] if with_inf or max(data) > max(edges) else [])
    counts = ws.cumulative_histogram(data, edges)
    est = ws.histogram_quantile(edges, counts, q)
    k = max(1, math.ceil(q * len(data)))
    true = np.sort(data)[k - 1]
    assert est.low <= true <= est.high
    assert est.low <= est.value <= est.high or (math.isinf(est.high) and est.value == est.low)


def test_interpolation_at_the_top_of_a_bucket_stays_inside_it():
    # Found by the property test above: 0 + (e - 0) * 7/7 rounded one ulp past e.
    edge = 37.36223107077447
    est = ws.histogram_quantile([edge], ws.cumulative_histogram([0.0] * 7, [edge]), 1.0)
    assert est.low <= est.value <= est.high == edge
