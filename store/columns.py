"""Columns as ``.npy`` bytes: compact, typed, and never pickled.

Numeric columns are one ``.npy`` array (float64, NaN = unknown). String columns are
dictionary-encoded: integer codes plus the column's table of distinct strings, so a
name repeated on every row of a 1,024-rank operations table is stored once (a numpy
``<U`` array is as wide as its longest value on every row: 836 characters × 4 bytes
for a kernel name). The blob is ``STRINGS_MAGIC`` then three ``.npy`` arrays: the
codes, the table's end offsets (int64) and its UTF-8 bytes (uint8). Reading gives an
object array of ``str`` whose equal values are one shared object.

Stores written before dictionary encoding hold string columns as one ``<U`` array:
the blob says which encoding it is (a plain column starts with numpy's own magic), so
both read, and no migration rewrites old runs.

Object arrays are accepted only when every value is a ``str`` and are never pickled:
a stored blob can never run code.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads with the first column: listing runs needs none
    import numpy as np

# Not a numpy magic (b"\x93NUMPY"), so an old blob can never be taken for a coded one.
STRINGS_MAGIC = b"\x93WBSTR1\n"


def encode(array: "np.ndarray") -> bytes:
    return b"".join(bytes(p) if isinstance(p, memoryview) else p for p in parts(array))


def parts(array: "np.ndarray") -> list[bytes | memoryview]:
    """The column's blob as pieces, the large ones as views without a copy (for a writer
    that streams a column into the store instead of building its blob)."""
    import numpy as np

    array = np.asarray(array)
    if is_text(array):
        codes, table = dictionary(array)
        offsets, utf8 = string_table(table)
        return [STRINGS_MAGIC, *_npy(codes), *_npy(offsets), *_npy(utf8)]
    if array.dtype == object:
        raise TypeError("object arrays cannot be stored unless every value is a str; convert to float64 or str first")
    return list(_npy(array))


def npy_parts(array: "np.ndarray") -> tuple[bytes, memoryview]:
    """A plain (non-text) column's ``.npy`` header and data without a copy."""
    return _npy(array)


def size(pieces: list[bytes | memoryview]) -> int:
    return sum(p.nbytes if isinstance(p, memoryview) else len(p) for p in pieces)


def is_text(array: "np.ndarray") -> bool:
    """A string column: numpy ``<U``/StringDType, or an object array holding only ``str``."""
    kind = array.dtype.kind
    if kind in "UT":
        return True
    return kind == "O" and all(type(v) is str for v in array.reshape(-1).tolist())


def dictionary(array: "np.ndarray") -> tuple["np.ndarray", list[bytes]]:
    """Codes (the smallest unsigned width that holds them) and the distinct values, UTF-8
    (first-seen order for an object array, sorted for a numpy string array)."""
    import numpy as np

    index: dict[str, int] = {}
    if array.dtype.kind == "O":
        codes_list = [index.setdefault(v, len(index)) for v in array.reshape(-1).tolist()]
        codes = np.array(codes_list, dtype=np.int64)
    else:  # fixed-width or StringDType: numpy finds the distinct values without a Python loop per row
        values, inverse = np.unique(array.reshape(-1), return_inverse=True)
        index = {str(v): i for i, v in enumerate(values.tolist())}
        codes = inverse.reshape(-1).astype(np.int64)
    width = code_width(len(index))
    # surrogatepass: a lone surrogate (refused at import, but an old store may hold one) survives the round trip.
    return codes.astype(width), [v.encode("utf-8", "surrogatepass") for v in index]


def code_width(distinct: int) -> "np.dtype":
    """The smallest unsigned integer type that holds codes into a table of ``distinct`` strings."""
    import numpy as np

    return np.dtype(np.uint8 if distinct <= 1 << 8 else np.uint16 if distinct <= 1 << 16 else np.uint32)


def string_table(values: list[bytes]) -> tuple["np.ndarray", "np.ndarray"]:
    """A string column's table: the end offset of each UTF-8 value (int64), and their bytes (uint8)."""
    import numpy as np

    offsets = np.cumsum([len(b) for b in values], dtype=np.int64)
    return offsets, np.frombuffer(b"".join(values), dtype=np.uint8)


def npy_header(dtype: "np.dtype", length: int) -> bytes:
    """The ``.npy`` header of a one-dimensional array of ``length`` values (for a writer that
    streams the values after it)."""
    import numpy as np

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header,
        {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": (int(length),)},
    )
    return header.getvalue()


def decode(blob: bytes) -> "np.ndarray":
    import numpy as np

    if not blob.startswith(STRINGS_MAGIC):
        return np.load(io.BytesIO(blob), allow_pickle=False)
    stream = io.BytesIO(blob)
    stream.seek(len(STRINGS_MAGIC))
    codes, offsets, utf8 = (np.load(stream, allow_pickle=False) for _ in range(3))
    if stream.read(1):
        raise ValueError("bytes after a string column's table")
    if codes.dtype.kind not in "ui" or offsets.dtype != np.int64 or utf8.dtype != np.uint8 or codes.ndim != 1:
        raise ValueError("a string column's codes or table have the wrong type")
    ends = offsets.tolist()
    if any(b < a for a, b in zip([0, *ends], ends)) or (ends[-1] if ends else 0) != utf8.size:
        raise ValueError("a string column's table offsets do not fit its bytes")
    if codes.size and (int(codes.min()) < 0 or int(codes.max()) >= len(ends)):
        raise ValueError("a string column's codes point outside its table")
    raw = utf8.tobytes()
    table = np.empty(len(ends), dtype=object)
    table[:] = [raw[a:b].decode("utf-8", "surrogatepass") for a, b in zip([0, *ends[:-1]], ends)]
    return table[codes]


def _npy(array: "np.ndarray") -> tuple[bytes, memoryview]:
    import numpy as np

    array = np.ascontiguousarray(np.asarray(array))
    if array.dtype == object:
        raise TypeError("object arrays cannot be stored as .npy")
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(array))
    return header.getvalue(), memoryview(array.reshape(-1).view(np.uint8))
