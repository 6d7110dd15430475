"""Adjusted p-values across metrics: Holm (gating, FWER) and Benjamini–Hochberg (display, FDR)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _check(p: Sequence[float]) -> np.ndarray:
    arr = np.asarray(p, dtype=np.float64).ravel()
    if np.any(np.isnan(arr)) or np.any((arr < 0) | (arr > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    return arr


def holm(p: Sequence[float]) -> list[float]:
    """Holm (1979) adjusted p-values, in the input order:
    p̃_(i) = max_{j ≤ i} min(1, (m - j + 1)·p_(j))."""
    arr = _check(p)
    m = len(arr)
    if m == 0:
        return []
    order = np.argsort(arr, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * arr[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted.tolist()


def benjamini_hochberg(p: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg (1995) adjusted p-values, in the input order:
    p̃_(i) = min_{j ≥ i} min(1, m·p_(j)/j). Valid under independence or positive dependence."""
    arr = _check(p)
    m = len(arr)
    if m == 0:
        return []
    order = np.argsort(arr, kind="stable")
    scaled = np.minimum(1.0, m * arr[order] / np.arange(1, m + 1))
    adjusted = np.empty(m)
    adjusted[order] = np.minimum.accumulate(scaled[::-1])[::-1]
    return adjusted.tolist()


def rejected(adjusted: Sequence[float], alpha: float = 0.05) -> list[bool]:
    return [q <= alpha for q in adjusted]
