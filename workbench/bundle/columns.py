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
from collections.abc import Mapping
from typing import TYPE_CHECKING

from workbench.bundle.canonical import nfc
from workbench.bundle.reader import obj, parse_strict
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
            values = parse_strict(_base64(column.get("data", "")), source=where, max_depth=1)
        except (ValueError, TypeError, WbError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        if (
            not isinstance(values, list)
            or not all(isinstance(v, str) for v in values)
            or len(values) != column.get("length")
        ):
            raise ValueError(f"{where}: a str column holds a JSON array of {column.get('length')} strings")
        # An object array of the parsed strings, not a fixed-width ``<U`` one: that is as wide
        # as the longest value on every row (one 10,000-character value in 80,000 rows: 3.2 GB).
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
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
