"""Columns as ``.npy`` bytes: compact, typed, and never pickled.

Numeric columns are float64 (NaN = unknown); strings are fixed-width unicode.
Object arrays are refused on both sides, so a stored blob can never run code.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads with the first column: listing runs needs none
    import numpy as np


def encode(array: "np.ndarray") -> bytes:
    import numpy as np

    array = np.asarray(array)
    if array.dtype == object:
        raise TypeError("object arrays cannot be stored; convert to float64 or str first")
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()


def decode(blob: bytes) -> "np.ndarray":
    import numpy as np

    return np.load(io.BytesIO(blob), allow_pickle=False)
