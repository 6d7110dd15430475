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
    header, data = npy_parts(array)
    return header + data  # one copy of the data


def npy_parts(array: "np.ndarray") -> tuple[bytes, memoryview]:
    """The ``.npy`` header and the array's data as bytes without a copy (for a writer
    that streams a column into the store instead of building its blob)."""
    import numpy as np

    array = np.asarray(array)
    if array.dtype == object:
        raise TypeError("object arrays cannot be stored; convert to float64 or str first")
    array = np.ascontiguousarray(array)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(array))
    return header.getvalue(), memoryview(array.reshape(-1).view(np.uint8))


def decode(blob: bytes) -> "np.ndarray":
    import numpy as np

    return np.load(io.BytesIO(blob), allow_pickle=False)
