"""The fleet lens's Kaplan–Meier in numpy equals scipy.stats' (checked here, never at run time)."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import CensoredData, ecdf

from lenses.fleet import km_median, survival

RNG = np.random.default_rng(47)

SHAPES = {
    "worked example": ([10.0, 20, 30], [25.0, 40]),
    "no censoring": ([3.0, 1, 2, 2, 5], []),
    "ties among starts": ([5.0, 5, 5, 10, 10, 20], [7.0]),
    "ties between a start and a censoring": ([10.0, 20, 20, 30], [20.0, 20, 35]),
    "censored before every start": ([50.0, 60], [1.0, 2, 3, 4, 5]),
    "most still waiting": ([10.0], [25.0, 40, 60]),
    "one start": ([7.0], []),
    "integers in seconds, many ties": (
        RNG.integers(0, 30, 400).astype(float),
        RNG.integers(0, 30, 150).astype(float),
    ),
    "continuous": (RNG.exponential(60.0, 1000), RNG.exponential(90.0, 300)),
}


def scipy_median(waits: np.ndarray, censored: np.ndarray) -> tuple[float, float]:
    """The old path (scipy.stats.ecdf), as the lens computed it before issue 47."""
    if not (waits.size or censored.size):
        return math.nan, math.nan
    longest = float(max(waits.max(initial=0.0), censored.max(initial=0.0)))
    if not waits.size:
        return math.nan, longest
    sf = ecdf(CensoredData(uncensored=waits, right=censored)).sf
    below = np.flatnonzero(sf.probabilities <= 0.5 + 1e-12)
    return (float(sf.quantiles[below[0]]), math.nan) if below.size else (math.nan, longest)


@pytest.mark.parametrize("name", SHAPES)
def test_survival_is_scipys_to_the_bit(name):
    waits, censored = (np.asarray(x, dtype=float) for x in SHAPES[name])
    times, sf = survival(waits, censored)
    theirs = ecdf(CensoredData(uncensored=waits, right=censored)).sf
    np.testing.assert_array_equal(times, theirs.quantiles)
    np.testing.assert_array_equal(sf, theirs.probabilities)


@pytest.mark.parametrize("name", SHAPES)
def test_median_is_the_old_paths(name):
    waits, censored = (np.asarray(x, dtype=float) for x in SHAPES[name])
    np.testing.assert_array_equal(km_median(waits, censored), scipy_median(waits, censored))


def test_all_censored_survival_stays_at_one():
    censored = np.array([4.0, 9.0, 9.0])
    times, sf = survival(np.array([]), censored)
    theirs = ecdf(CensoredData(uncensored=[], right=censored)).sf
    np.testing.assert_array_equal(times, theirs.quantiles)
    np.testing.assert_array_equal(sf, theirs.probabilities)
    assert np.array_equal(km_median(np.array([]), censored), (math.nan, 9.0), equal_nan=True)


def test_empty_is_unknown():
    assert np.array_equal(km_median(np.array([]), np.array([])), (math.nan, math.nan), equal_nan=True)


def test_the_fleet_lens_does_not_import_scipy_stats():
    code = (
        "import sys, numpy as np\n"
        "from lenses.fleet import km_median\n"
        "km_median(np.array([10.0, 20, 30]), np.array([25.0, 40]))\n"
        "km_median(np.array([10.0, 20, 30]), np.array([]))\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_fleet_compare_and_inspect_import_no_scipy_stats():
    """The fleet lens's whole path (window metrics, censored waits, effects) in a fresh process."""
    code = (
        "import sys\n"
        "from tests.lenses.test_fleet_censoring import example\n"
        "from workbench.compare import compare, inspect\n"
        "base, cand = [example(15.0), example(15.0)], [example(30.0), example(30.0)]\n"
        "accepts = dict.fromkeys(('pool', 'device_types', 'scheduler_policy', 'window'), 'test')\n"
        "result = compare(base, cand, 'fleet', accepts=accepts)\n"
        "inspect(base, cand, 'fleet', accepts=accepts)\n"
        "print(result.comparable, 'km_median_wait' in str(result.to_json()), 'scipy.stats' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", "False"]
