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
import binascii
import json
import re
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
            return _strings(_base64_blocks(column.get("data", "")), column.get("length"), where)
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


PIECE = 1 << 20  # bytes of a string column's JSON read at a time


def _strings(blocks: Iterator[bytes], length: object, where: str) -> np.ndarray:
    """A str column's JSON array, decoded from base64 and read a piece at a time into an object
    array whose equal values are one shared ``str`` (what the store's string columns give), so
    decoding costs about the column's size in the bundle, however many values it holds, and
    never a second copy of it. Each piece is read strictly
    (``msgspec``: a lone surrogate or anything but strings is refused) and must be NFC."""
    import numpy as np  # heavy for `wb evidence verify`: only when a column is encoded or decoded

    if not isinstance(length, int) or isinstance(length, bool) or length < 0:
        raise ValueError(f"a str column's length is {length!r}")
    out = np.empty(length, dtype=object)
    shared: dict[str, str] = {}  # each distinct value once: equal values are one object
    filled = 0
    for piece in _pieces(blocks):
        try:
            values = msgspec.json.decode(piece, type=list[str])
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError) as exc:
            raise ValueError(f"a str column holds a JSON array of {length} strings ({exc})") from None
        if filled + len(values) > length:
            raise ValueError(f"a str column holds a JSON array of {length} strings (it has more)")
        for value in values:
            if not value.isascii() and not unicodedata.is_normalized("NFC", value):
                raise ValueError("text is not NFC-normalized (bundles carry NFC text only)")
        out[filled : filled + len(values)] = [shared.setdefault(v, v) for v in values]
        filled += len(values)
        del values
    if filled != length:
        raise ValueError(f"a str column holds a JSON array of {length} strings, not {filled}")
    return out


# Whole JSON strings, each with the comma after it (a string's quote and backslash are escaped).
# (possessive: nothing to backtrack into, so the regex engine keeps no state per string matched)
_STRINGS = re.compile(rb'(?:"(?:[^"\\]++|\\.)*+",)*+', re.DOTALL)
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+",', re.DOTALL)


def _pieces(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """The JSON array of strings that ``blocks`` hold, as JSON arrays of about :data:`PIECE`
    bytes each, cut after whole strings (matched from the array's start, so an opening quote
    is never taken for a closing one). What does not match is passed on whole, for the decoder
    to refuse."""
    buf, pos, opened = b"", 0, False
    for block in blocks:
        buf = buf[pos:] + block
        pos = 0
        if not opened and buf:
            if not buf.startswith(b"["):
                break
            pos, opened = 1, True
        while len(buf) - pos > PIECE:
            cut = _STRINGS.match(buf, pos, pos + PIECE).end()  # type: ignore[union-attr]  # (matches empty)
            if cut == pos:  # one string longer than a piece: it is a piece, once it is all here
                one = _STRING.match(buf, pos)
                if one is None:
                    break
                cut = one.end()
            yield b"[" + buf[pos : cut - 1] + b"]"
            pos = cut
    rest = buf[pos:] + b"".join(blocks)  # (what a malformed column left)
    yield b"[" + rest if opened else rest


def _base64_blocks(data: object) -> Iterator[bytes]:
    """Strict base64 (only its alphabet, padding at the very end) decoded a block at a time."""
    if not isinstance(data, str) or not data.isascii():
        raise ValueError("data is not base64 text")
    padding = data.find("=")
    if padding != -1 and (padding < len(data) - 2 or data[padding:] not in ("=", "==")):
        raise ValueError("data is not base64 (padding before its end)")
    step = PIECE // 3 * 4  # a whole number of base64 quanta
    for start in range(0, len(data), step):
        yield binascii.a2b_base64(data[start : start + step], strict_mode=True)


def _base64(data: object) -> bytes:
    """Strict base64 (only its alphabet, padding at the end), read from the bundle's ASCII text
    as it is: no copy of the text is made first."""
    if not isinstance(data, str | bytes):  # the TypeError b64decode itself raises
        raise TypeError(f"argument should be a bytes-like object or ASCII string, not {type(data).__name__!r}")
    if isinstance(data, str) and not data.isascii():
        raise ValueError("string argument should contain only ASCII characters")
    return binascii.a2b_base64(data, strict_mode=True)


def encode_tables(tables: Mapping[str, Mapping[str, object]]) -> dict[str, dict[str, JSONDoc]]:
    return {nfc(t): {nfc(c): encode_column(v) for c, v in cols.items()} for t, cols in tables.items()}


def decode_tables(tables: Mapping[str, object], *, where: str = "samples") -> dict[str, dict[str, np.ndarray]]:
    return {
        t: {c: decode_column(obj(col), where=f"{where}.{t}.{c}") for c, col in obj(cols).items()}
        for t, cols in tables.items()
    }
