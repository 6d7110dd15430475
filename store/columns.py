"""Columns as ``.npy`` bytes: compact, typed, and never pickled.

Numeric columns are float64 (NaN = unknown); strings are fixed-width unicode.
Object arrays are refused on both sides, so a stored blob can never run code.
"""

from __future__ import annotations

import io

import numpy as np


def encode(array: np.ndarray) -> bytes:
    array = np.asarray(array)
    if array.dtype == object:
        raise TypeError("object arrays cannot be stored; convert to float64 or str first")
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()


def decode(blob: bytes) -> np.ndarray:
    return np.load(io.BytesIO(blob), allow_pickle=False)
