"""exact.dot: the statistics' dot products give the same bits on any machine."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from workbench.stats import exact


def test_dot_is_correctly_rounded():
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=1001), rng.normal(size=1001)
    true = sum(Fraction(a) * Fraction(b) for a, b in zip(x.tolist(), y.tolist()))
    # the products are rounded once each (IEEE), then summed exactly: compare with that
    rounded_products = sum(Fraction(a * b) for a, b in zip(x.tolist(), y.tolist()))
    assert exact.dot(x, y) == float(rounded_products)
    assert math.isclose(exact.dot(x, y), float(true), rel_tol=1e-12)


def test_dot_does_not_depend_on_the_order_of_the_additions():
    rng = np.random.default_rng(11)
    x = rng.lognormal(size=257) * 1e-3
    y = rng.lognormal(size=257)
    order = rng.permutation(len(x))
    assert exact.dot(x, y) == exact.dot(x[order], y[order])  # bit for bit: a BLAS kernel need not be
    assert exact.dot(x[::-1], y[::-1]) == exact.dot(x, y)


def test_cancellation_is_exact():
    x = np.array([1e16, 1.0, -1e16])
    assert exact.dot(x, np.ones(3)) == 1.0  # a left-to-right float sum gives 0.0
