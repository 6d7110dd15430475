"""Reading a bundle strictly: what we cannot canonicalize, we refuse.

Python's ``json`` module silently keeps the last of two duplicate keys, accepts
``NaN`` and ``Infinity``, turns ``1e400`` into ``inf`` and reads any integer; each of
those would let two readers see different bundles under one checksum. Here each is
an error that names the place. Size is checked before reading, nesting after.
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.bundle.canonical import MAX_SAFE_INTEGER
from workbench.errors import BadInput
from workbench.inputs import open_regular
from workbench.limits import MAX_OBJECTS, exceeded
from workbench.textsafe import clean
from workbench.vocabulary import JSON, JSONDoc

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_DEPTH = 64


class _Refused(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, JSON]]) -> JSONDoc:
    out: JSONDoc = {}
    for key, value in pairs:
        if key in out:
            raise _Refused(f"duplicate key {key!r} in one object")
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number (a missing value is null)")


def _safe_int(text: str) -> int:
    if len(text.lstrip("-")) > 16:  # 2^53 has 16 digits; int() of 4,300+ digits would raise
        raise _Refused(
            f"integer {text[:40]}{'...' if len(text) > 40 else ''} is outside ±(2^53−1); large integers must be strings"
        )
    value = int(text)
    if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        raise _Refused(f"integer {text[:40]} is outside ±(2^53−1); large integers must be strings")
    return value


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused(f"number {text[:40]} overflows a double")
    return value


def parse_strict(data: bytes | str, *, source: str | Path | None = None, max_depth: int = DEFAULT_MAX_DEPTH) -> JSON:
    """Parse JSON text refusing duplicate keys, NaN/Infinity, unsafe integers,
    lone surrogates, text that is not NFC, and nesting deeper than ``max_depth``."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise BadInput(source, f"not UTF-8 text ({exc.reason})", where=f"byte {exc.start}") from None
    # Counted before parsing (an upper bound: brackets inside strings count too): a few
    # bytes per empty array would otherwise cost ~100 bytes each once parsed.
    containers = text.count("[") + text.count("{")
    if containers > MAX_OBJECTS:
        raise exceeded(source, f"{containers:,} arrays and objects are more than", f"{MAX_OBJECTS:,}")
    try:
        doc = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_no_constants,
            parse_int=_safe_int,
            parse_float=_finite_float,
        )
    except _Refused as exc:
        raise BadInput(source, str(exc)) from None
    except RecursionError:
        raise BadInput(source, f"nested deeper than {max_depth} levels") from None
    except json.JSONDecodeError as exc:
        raise BadInput(source, f"not valid JSON: {exc.msg}", where=f"line {exc.lineno} column {exc.colno}") from None
    check_tree(doc, source=source, max_depth=max_depth)
    return doc


def check_tree(doc: Any, *, source: str | Path | None = None, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
    """Walk ``doc`` iteratively: nesting depth, valid Unicode, NFC text."""
    stack: list[tuple[Any, str, int]] = [(doc, "$", 0)]
    while stack:
        node, where, depth = stack.pop()
        if depth > max_depth:
            raise BadInput(source, f"nested deeper than {max_depth} levels", where=_short(where))
        if isinstance(node, dict):
            for key, value in node.items():
                _check_text(key, f"{where} (key)", source)
                stack.append((value, f"{where}.{key}", depth + 1))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                stack.append((value, f"{where}[{i}]", depth + 1))
        elif isinstance(node, str):
            _check_text(node, where, source)


def _check_text(text: str, where: str, source: str | Path | None) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise BadInput(source, "string contains a lone surrogate (not valid Unicode)", where=_short(where)) from None
    if not unicodedata.is_normalized("NFC", text):
        raise BadInput(source, "text is not NFC-normalized (bundles carry NFC text only)", where=_short(where))


def _short(where: str, limit: int = 120) -> str:
    where = clean(where)
    return where if len(where) <= limit else "…" + where[-limit:]


def read_bundle_file(
    path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES, max_depth: int = DEFAULT_MAX_DEPTH
) -> JSONDoc:
    """Read and strictly parse the bundle at ``path``; :class:`BadInput` on any fault. The
    file's bytes are let go once decoded, so the text and the parsed bundle are all it holds."""
    raw = read_bundle_bytes(path, max_bytes=max_bytes)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(path, f"not UTF-8 text ({exc.reason})", where=f"byte {exc.start}") from None
    del raw
    return parse_bundle(text, source=path, max_depth=max_depth)


def parse_bundle(data: bytes | str, *, source: str | Path | None = None, max_depth: int = DEFAULT_MAX_DEPTH) -> JSONDoc:
    doc = parse_strict(data, source=source, max_depth=max_depth)
    if not isinstance(doc, dict):
        raise BadInput(source, "a bundle is a JSON object")
    return doc


def _limit(max_bytes: int) -> str:
    """The size limit as given: whole MiB, else bytes (a small limit must not read '0 MiB')."""
    return f"{max_bytes >> 20} MiB" if max_bytes >= 2**20 and max_bytes % 2**20 == 0 else f"{max_bytes:,}-byte"


def _size_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def read_bundle_bytes(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The file's bytes, refusing more than ``max_bytes`` (checked before reading)."""
    path = Path(path)
    try:
        # The one door: a FIFO, a device or a /proc file is refused at once; the size before a byte is read.
        with open_regular(
            path,
            max_bytes=max_bytes,
            too_big=f"{_size_of(path) / 1e6:.1f} MB is over the {_limit(max_bytes)} limit for bundles (raise it with "
            f"--max-size)",
        ) as fh:
            # The limit is a ceiling, never an allocation: read what the file holds (its size
            # was checked first), one more byte than the limit at most.
            chunks = [fh.read(min(max_bytes, os.fstat(fh.fileno()).st_size) + 1)]
            total = len(chunks[0])
            while total <= max_bytes and (more := fh.read(min(1 << 20, max_bytes + 1 - total))):  # it grew
                chunks.append(more)
                total += len(more)
            data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except OSError as exc:
        raise BadInput(path, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # grew while we read, or not a regular file
        raise BadInput(path, f"over the {_limit(max_bytes)} limit for bundles")
    return data


# A bundle is read as it came (``JSONDoc``): its readers narrow each nested value where they read
# it (``obj``, ``array``, ``content``), and any other shape raises what a plain ``.get``, index or
# iteration would have raised (``AttributeError``, ``TypeError``, ``KeyError``), so that a
# forged bundle's odd record is reported as its unexpected shape, never crashes the check.
def obj(value: object) -> Mapping[str, object]:
    """``value`` as a JSON object."""
    if isinstance(value, dict):
        return value
    raise AttributeError(f"{type(value).__name__!r} object has no attribute 'get'")


def array(value: object) -> list[object]:
    """``value or []`` as a JSON array."""
    if not value:
        return []
    if isinstance(value, list):
        return value
    raise TypeError(f"{type(value).__name__!r} is not a JSON array")


def content(bundle: JSONDoc, name: str) -> Mapping[str, object]:
    """``bundle[name]["content"]``: a digested part's content."""
    part = bundle[name]
    if not isinstance(part, dict):
        raise TypeError(f"{name} is not an object")
    return obj(part["content"])


def listed(doc: Mapping[str, object], key: str) -> list[object]:
    """``doc.get(key, [])`` as a JSON array (no ``or []``: a null is an unexpected shape too)."""
    value = doc.get(key, [])
    if isinstance(value, list):
        return value
    raise TypeError(f"{key} is a {type(value).__name__}, not a JSON array")
