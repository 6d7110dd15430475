"""A pooled quantile is descriptive; its interval resamples whole runs."""

import numpy as np
import pytest

import workbench.stats as ws


def _runs(rng, n_runs, n_req, run_sd, scale=1.0):
    return [scale * rng.lognormal(np.log(10) + rng.normal(0, run_sd), 0.3, n_req) for _ in range(n_runs)]


def test_estimate_is_the_pooled_ratio_and_the_seed_repeats():
    rng = np.random.Generator(np.random.PCG64(5))
    a, b = _runs(rng, 6, 200, 0.03), _runs(rng, 6, 200, 0.03, scale=1.1)
    r = ws.pooled_quantile_ratio(a, b, seed=9, n_boot=300)
    assert r.ratio == pytest.approx(np.percentile(np.concatenate(b), 95) / np.percentile(np.concatenate(a), 95))
    again = ws.pooled_quantile_ratio(a, b, seed=9, n_boot=300)
    assert [(i.low, i.high) for i in r.intervals] == [(i.low, i.high) for i in again.intervals]
    assert "descriptive" in r.label and r.intervals[0].params["resampling"] == "whole runs"
    assert {i.method for i in r.intervals} == {"bootstrap-percentile", "bootstrap-expanded-percentile"}


def test_cluster_interval_is_wider_than_treating_requests_as_independent():
    # Run-level effects (3 %) make requests within a run alike: resampling requests as if
    # independent understates the uncertainty (research S2: 21 % false positives).
    rng = np.random.Generator(np.random.PCG64(11))
    a, b = _runs(rng, 8, 400, 0.03), _runs(rng, 8, 400, 0.03)
    cluster = ws.pooled_quantile_ratio(a, b, seed=1, n_boot=400).intervals[0]
    pa, pb = np.concatenate(a), np.concatenate(b)
    g = np.random.Generator(np.random.PCG64(1))
    naive = [
        np.percentile(pb[g.integers(0, len(pb), len(pb))], 95) / np.percentile(pa[g.integers(0, len(pa), len(pa))], 95)
        for _ in range(400)
    ]
    lo, hi = np.percentile(naive, [2.5, 97.5])
    assert (cluster.high - cluster.low) > 1.5 * (hi - lo)


def test_needs_two_runs_per_arm():
    with pytest.raises(ValueError, match="at least 2 runs"):
        ws.pooled_quantile_ratio([[1.0, 2.0]], [[1.0], [2.0]])
    with pytest.raises(ValueError, match="at least 2 runs"):
        ws.pooled_quantile_ratio([[1.0, 2.0], [np.nan]], [[1.0], [2.0]])
