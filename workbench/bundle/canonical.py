"""Bundle values and their canonical form (RFC 8785 / JCS through the ``rfc8785`` package).

Everything that goes into a bundle first passes :func:`bundle_value`, which makes it
I-JSON that canonicalizes the same way on every machine:

- text (keys and values) is NFC-normalized, so "café" typed two ways hashes the same;
- integers outside ±(2^53−1) (nanosecond timestamps, byte counters) become decimal
  strings, because JCS numbers are IEEE doubles;
- NaN and ±Infinity become ``null``: in a bundle a missing measurement is ``null``,
  never a number;
- numpy scalars and arrays, tuples, sets and paths become plain JSON types.

Digests are SHA-256 over the JCS bytes. Never hand-roll JCS with ``sort_keys``: key
order is by UTF-16 code units and numbers print like ECMAScript, not like ``json``.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

import rfc8785

from workbench.vocabulary import JSONDoc

MAX_SAFE_INTEGER = 2**53 - 1


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def bundle_value(value: Any) -> Any:
    """``value`` as canonicalizable JSON data (see the module docstring for the rules)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return nfc(str(value))  # str(): a string enum (a verdict, a state) as plain text
    if isinstance(value, int):
        return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        out: JSONDoc = {}
        for key, item in value.items():
            name = nfc(str(key))
            if name in out:  # two keys that differ only in normalization
                raise ValueError(f"key {name!r} occurs twice after NFC normalization")
            out[name] = bundle_value(item)
        return out
    if isinstance(value, (list, tuple)):
        return [bundle_value(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((bundle_value(v) for v in value), key=repr)
    if isinstance(value, PurePath):
        return nfc(str(value))
    # numpy scalars and arrays without importing numpy here (verify must stay light)
    if hasattr(value, "tolist") and callable(value.tolist):
        return bundle_value(value.tolist())
    if hasattr(value, "isoformat"):  # datetime / date
        return nfc(value.isoformat())
    if hasattr(value, "to_json") and callable(value.to_json):
        return bundle_value(value.to_json())
    raise TypeError(f"cannot put a {type(value).__name__} in a bundle")


def canonical_bytes(value: Any) -> bytes:
    """The RFC 8785 canonical form of ``value`` (already a bundle value)."""
    return rfc8785.dumps(value)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """SHA-256 (hex) of the canonical form of ``value``."""
    return sha256_hex(canonical_bytes(value))
