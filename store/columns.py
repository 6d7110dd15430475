"""Columns as ``.npy`` bytes: compact, typed, and never pickled.

Numeric columns are one ``.npy`` array (float64, NaN = unknown). A string column is
stored one of two ways, chosen by a sample of its values (docs/store.md):

- dictionary-encoded (``STRINGS_MAGIC``, then three ``.npy`` arrays: integer codes, the
  table's end offsets (int64) and its UTF-8 bytes (uint8)) when values repeat: a name on
  every row of a 1,024-rank operations table is stored once (a numpy ``<U`` array is as
  wide as its longest value on every row: 836 characters x 4 bytes for a kernel name);
- plain (``TEXT_MAGIC``, then the end offsets and the UTF-8 bytes, one entry per row) when
  (nearly) all values are distinct, such as request ids: a dictionary would hold every
  value once anyway, and building it costs a hash of each.

Reading gives an object array of ``str`` (equal values of a dictionary-encoded column are
one shared object). Stores written before either encoding hold string columns as one
``<U`` array: the blob says which encoding it is (a plain ``.npy`` starts with numpy's own
magic), so every one reads, and no migration rewrites old runs.

Object arrays are accepted only when every value is a ``str`` and are never pickled:
a stored blob can never run code.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads with the first column: listing runs needs none
    import numpy as np

# Not a numpy magic (b"\x93NUMPY"), so an old blob can never be taken for a coded one.
STRINGS_MAGIC = b"\x93WBSTR1\n"  # dictionary-encoded text
TEXT_MAGIC = b"\x93WBTXT1\n"  # plain text: offsets and bytes, one entry per row
DISTINCT_SAMPLE = 1024  # values sampled (evenly spaced) to choose a string column's encoding
PLAIN_SHARE = 0.9  # sampled values distinct at least this share: stored plain


def encode(array: "np.ndarray") -> bytes:
    return b"".join(bytes(p) if isinstance(p, memoryview) else p for p in parts(array))


def parts(array: "np.ndarray") -> list[bytes | memoryview]:
    """The column's blob as pieces, the large ones as views without a copy (for a writer
    that streams a column into the store instead of building its blob)."""
    import numpy as np

    array = np.asarray(array)
    if is_text(array):
        if mostly_distinct(array):
            offsets, utf8 = plain_text(array)
            return [TEXT_MAGIC, *_npy(offsets), *_npy(utf8)]
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


def mostly_distinct(array: "np.ndarray") -> bool:
    """Whether (nearly) every value differs, judged on an evenly spaced sample of the column."""
    import numpy as np

    flat = array.reshape(-1)
    if not flat.size:
        return False
    sample = flat[np.linspace(0, flat.size - 1, min(flat.size, DISTINCT_SAMPLE)).astype(np.int64)].tolist()
    return len(set(sample)) >= PLAIN_SHARE * len(sample)


def plain_text(array: "np.ndarray") -> tuple["np.ndarray", "np.ndarray"]:
    """A text column row by row: each value's end offset in the UTF-8 bytes (int64), and the
    bytes (uint8). An ASCII fixed-width numpy column is converted without a Python loop."""
    import numpy as np

    flat = array.reshape(-1)
    if flat.dtype.kind == "U" and flat.dtype.itemsize:
        width = flat.dtype.itemsize // 4
        points = np.ascontiguousarray(flat).view(np.uint32).reshape(len(flat), width)
        if not points.size or int(points.max()) < 0x80:
            lengths = np.char.str_len(flat).astype(np.int64)  # (up to the last non-NUL, as numpy reads it)
            full = bool(points[:, -1].all())  # every value as wide as the column (ids): no mask to apply
            kept = points if full else points[np.arange(width) < lengths[:, None]]
            return np.cumsum(lengths, dtype=np.int64), kept.astype(np.uint8).reshape(-1)
    values = flat.tolist() if flat.dtype.kind != "T" else [str(v) for v in flat.tolist()]
    joined = "".join(values)
    if joined.isascii():
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        return np.cumsum(lengths, dtype=np.int64), np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    # surrogatepass: a lone surrogate (refused at import, but an old store may hold one) survives the round trip.
    return string_table([str(v).encode("utf-8", "surrogatepass") for v in values])


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
    codes, table = decode_coded(blob)
    return table if codes is None else table[codes]


def decode_coded(blob: bytes, *, view: bool = False) -> tuple["np.ndarray | None", "np.ndarray"]:
    """(codes, table) of a dictionary-encoded column, the row ``i`` being ``table[codes[i]]``
    (a reader that groups by the column never builds its rows); ``(None, rows)`` otherwise.
    ``view``: a numeric column as a read-only view of ``blob``, not a copy."""
    import numpy as np

    plain = blob.startswith(TEXT_MAGIC)
    if not plain and not blob.startswith(STRINGS_MAGIC):
        return None, _npy_view(blob) if view else np.load(io.BytesIO(blob), allow_pickle=False)
    stream = io.BytesIO(blob)
    stream.seek(len(STRINGS_MAGIC))
    codes = None if plain else np.load(stream, allow_pickle=False)
    offsets, utf8 = (np.load(stream, allow_pickle=False) for _ in range(2))
    if stream.read(1):
        raise ValueError("bytes after a string column's table")
    if offsets.dtype != np.int64 or utf8.dtype != np.uint8 or offsets.ndim != 1:
        raise ValueError("a string column's table has the wrong type")
    if codes is not None and (codes.dtype.kind not in "ui" or codes.ndim != 1):
        raise ValueError("a string column's codes have the wrong type")
    starts = np.concatenate([np.zeros(1, dtype=np.int64), offsets[:-1]])
    if bool((offsets < starts).any()) or (int(offsets[-1]) if offsets.size else 0) != utf8.size:
        raise ValueError("a string column's table offsets do not fit its bytes")
    if codes is not None and codes.size and (int(codes.min()) < 0 or int(codes.max()) >= offsets.size):
        raise ValueError("a string column's codes point outside its table")
    table = np.empty(offsets.size, dtype=object)
    table[:] = _texts(utf8.tobytes(), starts.tolist(), offsets.tolist())
    return codes, table


def _npy_view(blob: bytes) -> "np.ndarray":
    import numpy as np

    stream = io.BytesIO(blob)  # shares the bytes until written to
    version = np.lib.format.read_magic(stream)
    header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = header(stream)
    if dtype.hasobject or fortran or len(shape) != 1:
        return np.load(io.BytesIO(blob), allow_pickle=False)
    return np.frombuffer(blob, dtype=dtype, count=shape[0], offset=stream.tell())


def _texts(raw: bytes, starts: list[int], ends: list[int]) -> list[str]:
    if raw.isascii():  # one decode, then slices (the usual case)
        text = raw.decode("ascii")
        return [text[a:b] for a, b in zip(starts, ends)]
    return [raw[a:b].decode("utf-8", "surrogatepass") for a, b in zip(starts, ends)]


def _npy(array: "np.ndarray") -> tuple[bytes, memoryview]:
    import numpy as np

    array = np.ascontiguousarray(np.asarray(array))
    if array.dtype == object:
        raise TypeError("object arrays cannot be stored as .npy")
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(array))
    return header.getvalue(), memoryview(array.reshape(-1).view(np.uint8))
