"""Embedded sample columns: compact, exact, and cheap to canonicalize.

A numeric column travels as the base64 of its little-endian bytes, with its dtype:
exact (no decimal round trip), NaN-capable (a missing value stays NaN, which a JSON
number cannot say), and a single string, so RFC 8785 canonicalization costs one
escape scan instead of formatting every float like ECMAScript. NaNs are written as
the one canonical quiet NaN so equal data always gives equal bytes. A string column
travels the same way: the base64 of a compact JSON array of its NFC text.
"""

from __future__ import annotations

import base64
import json
import unicodedata
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import msgspec

from workbench.bundle.canonical import nfc
from workbench.bundle.reader import obj
from workbench.errors import WbError
from workbench.vocabulary import JSONDoc

if TYPE_CHECKING:
    import numpy as np

NUMERIC_DTYPES = {"float64": "<f8", "float32": "<f4", "int64": "<i8", "int32": "<i4", "uint8": "|u1", "bool": "|b1"}


def encode_column(values: object) -> JSONDoc:
    import numpy as np  # heavy for `wb evidence verify`: only when a column is encoded or decoded

    arr = np.asarray(values)
    if arr.ndim != 1:
        arr = arr.reshape(-1)
    if arr.dtype.kind in "USO":
        # One base64 string holding a JSON array of NFC text: one escape scan when
        # canonicalized instead of one per value.
        text = json.dumps([nfc(str(v)) for v in arr.tolist()], ensure_ascii=False, separators=(",", ":"))
        return {
            "dtype": "str",
            "encoding": "json-base64",
            "length": int(arr.size),
            "data": base64.b64encode(text.encode("utf-8")).decode("ascii"),
        }
    name = arr.dtype.name
    if name not in NUMERIC_DTYPES:
        arr, name = arr.astype(np.float64), "float64"
    arr = arr.astype(NUMERIC_DTYPES[name], copy=True)
    if arr.dtype.kind == "f":
        arr[np.isnan(arr)] = np.nan  # one canonical NaN bit pattern
    return {
        "dtype": name,
        "encoding": "base64",
        "length": int(arr.size),
        "data": base64.b64encode(arr.tobytes()).decode("ascii"),
    }


def decode_column(column: Mapping[str, object], *, where: str = "column") -> np.ndarray:
    import numpy as np  # heavy for `wb evidence verify`: only when a column is encoded or decoded

    dtype = column.get("dtype")
    if dtype == "str" and column.get("encoding") == "json-base64":
        try:
            return _strings(_base64(column.get("data", "")), column.get("length"), where)
        except (ValueError, TypeError, WbError) as exc:
            raise ValueError(f"{where}: {exc}") from None
    if not isinstance(dtype, str) or dtype not in NUMERIC_DTYPES or column.get("encoding") != "base64":
        raise ValueError(f"{where}: unknown column dtype/encoding {dtype!r}/{column.get('encoding')!r}")
    try:
        raw = _base64(column.get("data", ""))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{where}: data is not base64 ({exc})") from None
    arr = np.frombuffer(raw, dtype=NUMERIC_DTYPES[dtype])
    if arr.size != column.get("length"):
        raise ValueError(f"{where}: {arr.size} values, but length says {column.get('length')}")
    return arr.astype(dtype if dtype != "bool" else np.bool_)


PIECE = 4 << 20  # bytes of a string column's JSON read at a time


def _strings(raw: bytes, length: object, where: str) -> np.ndarray:
    """A str column's JSON array, read a piece at a time and dictionary-coded as it goes: an
    object array whose equal values are one shared ``str`` (what the store's string columns
    give), so decoding costs about the column's size in the bundle, however many values it
    holds. Each piece is cut after a closing quote that a comma and an opening quote follow
    (inside a JSON string a quote is escaped), read strictly (``msgspec``: a lone surrogate or
    anything but strings is refused), and its text must be NFC."""
    import numpy as np  # heavy for `wb evidence verify`: only when a column is encoded or decoded

    if not isinstance(length, int) or isinstance(length, bool) or length < 0:
        raise ValueError(f"a str column's length is {length!r}")
    codes = np.empty(length, dtype=np.uint32)
    index: dict[str, int] = {}
    filled = 0
    for piece in _pieces(raw):
        try:
            values = msgspec.json.decode(piece, type=list[str])
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError) as exc:
            raise ValueError(f"a str column holds a JSON array of {length} strings ({exc})") from None
        if filled + len(values) > length:
            raise ValueError(f"a str column holds a JSON array of {length} strings (it has more)")
        for value in values:
            if not value.isascii() and not unicodedata.is_normalized("NFC", value):
                raise ValueError("text is not NFC-normalized (bundles carry NFC text only)")
        codes[filled : filled + len(values)] = [index.setdefault(v, len(index)) for v in values]
        filled += len(values)
    if filled != length:
        raise ValueError(f"a str column holds a JSON array of {length} strings, not {filled}")
    table = np.empty(len(index), dtype=object)
    table[:] = list(index)
    return table[codes]


def _pieces(raw: bytes) -> Iterator[bytes]:
    """``raw`` (a JSON array of strings) as JSON arrays of about :data:`PIECE` bytes each."""
    start, end = 0, len(raw)
    while True:
        cut = _boundary(raw, start + PIECE) if end - start > PIECE else -1
        if cut < 0:
            yield raw[start:] if start == 0 else b"[" + raw[start:]
            return
        yield (raw[start : cut + 1] if start == 0 else b"[" + raw[start : cut + 1]) + b"]"
        start = cut + 2  # the next value's opening quote


def _boundary(raw: bytes, at: int) -> int:
    """The first closing quote from ``at`` that ``,"`` follows (an unescaped one: an even
    number of backslashes before it); -1 when there is none."""
    while (cut := raw.find(b'","', at)) >= 0:
        before = cut - 1
        while before >= 0 and raw[before] == 0x5C:  # a backslash
            before -= 1
        if (cut - 1 - before) % 2 == 0:
            return cut
        at = cut + 1
    return -1


def _base64(data: object) -> bytes:
    if not isinstance(data, str | bytes):  # the TypeError b64decode itself raises
        raise TypeError(f"argument should be a bytes-like object or ASCII string, not {type(data).__name__!r}")
    return base64.b64decode(data, validate=True)


def encode_tables(tables: Mapping[str, Mapping[str, object]]) -> dict[str, dict[str, JSONDoc]]:
    return {nfc(t): {nfc(c): encode_column(v) for c, v in cols.items()} for t, cols in tables.items()}


def decode_tables(tables: Mapping[str, object], *, where: str = "samples") -> dict[str, dict[str, np.ndarray]]:
    return {
        t: {c: decode_column(obj(col), where=f"{where}.{t}.{c}") for c, col in obj(cols).items()}
        for t, cols in tables.items()
    }
