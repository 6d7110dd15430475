"""wb's Mann–Whitney U (no scipy.stats import) gives scipy's statistic and p to the last bit."""

import numpy as np
import pytest

from workbench.stats.rank_tests import mann_whitney

scipy_stats = pytest.importorskip("scipy.stats")


def _cases():
    rng = np.random.default_rng(7)
    for _ in range(300):
        n1, n2 = (int(n) for n in rng.integers(1, 26, size=2))
        if rng.random() < 0.3:  # ties: the normal approximation with tie correction
            yield rng.integers(0, 5, n1).astype(float), rng.integers(0, 5, n2).astype(float)
        else:
            yield rng.lognormal(size=n1), rng.lognormal(size=n2) * rng.choice([1.0, 1.3])
    yield np.arange(40.0), np.arange(40.0) + 0.5  # frequencies beyond uint64: floats
    yield np.array([3.0]), np.array([1.0, 2.0])


@pytest.mark.parametrize("method", ["auto", "exact", "asymptotic"])
def test_same_as_scipy(method):
    for a, b in _cases():
        if method == "exact" and len(np.unique(np.r_[a, b])) < len(a) + len(b):
            continue
        ours = mann_whitney(a, b, method=method)
        ref = scipy_stats.mannwhitneyu(b, a, alternative="two-sided", method=ours.method)
        assert (ours.statistic, ours.p) == (float(ref.statistic), float(ref.pvalue)), (a, b, method)


def test_refuses_nan_and_unknown_method():
    with pytest.raises(ValueError):
        mann_whitney([1.0, float("nan")], [2.0, 3.0])
    with pytest.raises(ValueError):
        mann_whitney([1.0], [2.0], method="permutation")
