"""Per-run reduction after warm-up."""

import math

import numpy as np
import pytest

import workbench.stats as ws
from tests.stats.datasets import LAT


def test_mean_is_primary_after_warmup():
    steps = [50.0, 40.0, 30.0] + [10.0, 12.0, 11.0, 9.0]
    s = ws.reduce_run(steps, warmup=3)
    assert s.n == 4 and s.warmup == 3 and s.n_total == 7
    assert s.mean == pytest.approx(10.5)
    assert s.median == pytest.approx(10.5)
    assert s.min == 9.0 and s.max == 12.0
    assert s.p95 is None and s.p95_hd is None  # fewer than 72 samples


def test_missing_steps_are_unknown_not_zero():
    s = ws.reduce_run([10.0, math.nan, 12.0, math.nan], warmup=0)
    assert s.n == 2 and s.n_missing == 2 and s.mean == 11.0


def test_p95_and_harrell_davis_from_72_samples():
    rng = np.random.Generator(np.random.PCG64(1))
    x = rng.lognormal(0, 0.1, 100)
    s = ws.reduce_run(x)
    assert s.p95 == pytest.approx(np.percentile(x, 95))
    assert s.p95_hd == pytest.approx(ws.harrell_davis(x, 0.95))
    assert ws.reduce_run(x[:71]).p95 is None and ws.reduce_run(x[:72]).p95 is not None


def test_harrell_davis_matches_scipy():
    from scipy.stats.mstats import hdquantiles, hdquantiles_sd

    for p in (0.5, 0.9, 0.95):
        assert ws.harrell_davis(LAT, p) == pytest.approx(float(hdquantiles(LAT, prob=[p])[0]), rel=1e-12)
        assert ws.harrell_davis_se(LAT, p) == pytest.approx(float(hdquantiles_sd(LAT, prob=[p])[0]), rel=1e-12)


def test_diagnostics_are_reported():
    trend = np.linspace(10, 12, 40)
    s = ws.reduce_run(trend)
    assert s.half_ratio > 1.05
    assert s.lag1_autocorrelation > 0.9
    flat = ws.reduce_run(np.full(20, 5.0))
    assert flat.cov_settled_at == 9  # the first full 10-step window


def test_default_warmup():
    assert ws.default_warmup(10) == 3 and ws.default_warmup(100) == 10 and ws.default_warmup(101) == 11


def test_nothing_left_is_an_error():
    with pytest.raises(ValueError, match="no steps left"):
        ws.reduce_run([1.0, 2.0], warmup=2)
    with pytest.raises(ValueError, match="warm-up"):
        ws.reduce_run([1.0], warmup=-1)
