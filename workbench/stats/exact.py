"""Reductions whose result does not depend on the machine.

numpy hands dot products to BLAS, whose kernel is chosen for the CPU at run time
(OpenBLAS: Haswell, SkylakeX, Zen, ...) and adds in its own order, so the last bits of
the same dot product differ from one machine to another. An elementwise product is one
IEEE operation per element, the same everywhere, and ``math.fsum`` adds the products
with a single rounding at the end: the result is bit-identical on any machine (and
correctly rounded, so never worse than the BLAS sum).
"""

from __future__ import annotations

import math

import numpy as np


def dot(x: np.ndarray, y: np.ndarray) -> float:
    """Σ x_i·y_i, correctly rounded, independent of the BLAS kernel and SIMD width."""
    return math.fsum(np.multiply(x, y, dtype=np.float64).tolist())
