"""One resource budget for every reader (docs/limits.md).

Every reader of untrusted input (importers, bundles, diagnostics) checks what it
builds against these caps, so memory stays within a small multiple of the data it
accepts whatever the input's shape. Exceeding a cap raises :class:`LimitExceeded`:
one line naming the file, the place and the limit (exit 2, nothing written).
"""

from __future__ import annotations

from pathlib import Path

from workbench.errors import BadInput

MiB = 1 << 20
GiB = 1 << 30

# Decompression: a gzip may expand to RATIO times its size, at least FLOOR, never more than ABSOLUTE.
DECOMPRESSED_RATIO = 200  # real traces and captures compress 10-30x
DECOMPRESSED_FLOOR = 64 * MiB
DECOMPRESSED_ABSOLUTE = 16 * GiB

MAX_VALUE_BYTES = 64 * MiB  # one JSON value read whole from a stream (a sample, an event, a header member)
MAX_DEPTH = 64  # nesting of arrays/objects inside one value
MAX_STRING_CHARS = 1 * MiB  # one string (a label, a dimension, a sample's text)
MAX_COLUMNS = 1024  # distinct keys (columns) in one table of samples
# Sparse tables: rows x columns may exceed the values present by this factor (beyond a small floor).
MAX_SPARSITY = 16
SPARSE_FLOOR_CELLS = 16_000_000  # numbers: 128 MB of float64 before sparsity matters
TEXT_FLOOR_CHARS = 64_000_000  # text: 256 MB of UCS-4 before a long string among short ones matters
MAX_ROWS = 100_000_000  # rows in one table (samples, events, strings of an export)
MAX_OBJECTS = 2_000_000  # arrays and objects in one bundle (JSON: counted before parsing)
MAX_UPLOAD_BYTES = 1 * GiB  # one capture uploaded to wb serve (POST /captures; wb serve --max-upload)
# Values a pickle (or a dump read as JSON) may hold, counting each shared reference as the
# copy readers will see: a few kilobytes of back-references must not become gigabytes.
MAX_PICKLE_OBJECTS = 5_000_000
SQL_STEPS_PER_BYTE = 200  # SQLite VM steps per byte of an export (a recursive view never ends)


class LimitExceeded(BadInput):
    """Input over one of the caps above."""


def exceeded(file: str | Path | None, what: str, limit: str, *, where: str | None = None) -> LimitExceeded:
    """``what`` is the finding (``"nested deeper than"``), ``limit`` the cap as text."""
    return LimitExceeded(file, f"{what} {limit} (the reader's limit; see docs/limits.md)", where=where)


def decompressed_cap(compressed_size: int) -> int:
    """How many bytes a gzip of ``compressed_size`` bytes may decompress to."""
    return min(DECOMPRESSED_ABSOLUTE, max(DECOMPRESSED_FLOOR, DECOMPRESSED_RATIO * compressed_size))


def size_text(n: int) -> str:
    if n >= GiB and n % GiB == 0:
        return f"{n // GiB} GiB"
    if n >= MiB and n % MiB == 0:
        return f"{n // MiB} MiB"
    return f"{n:,} bytes"


def check_expanded_size(value: object, file: str | Path | None, limit: int = MAX_PICKLE_OBJECTS) -> int:
    """The number of values in ``value`` as a tree (a shared or cyclic reference counts
    each time it is reached); :class:`LimitExceeded` past ``limit``. Cost bounded by ``limit``."""
    count = 0
    stack = [value]
    while stack:
        node = stack.pop()
        count += 1
        if count > limit:
            raise exceeded(file, "holds more values (counting each shared reference) than", f"{limit:,}")
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, (list, tuple, set, frozenset)):
            stack.extend(node)
    return count
