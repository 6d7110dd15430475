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
MAX_ARCHIVE_MEMBERS = 10_000  # members of one .tar/.tar.gz/.zip of captures (each is read as a file)
MAX_OBJECTS = 2_000_000  # arrays and objects in one bundle (JSON: counted before parsing)
MAX_UPLOAD_BYTES = 1 * GiB  # one capture uploaded to wb serve (POST /captures; wb serve --max-upload)
# Values a pickle (or a dump read as JSON) may hold, counting each shared reference as the
# copy readers will see: a few kilobytes of back-references must not become gigabytes.
MAX_PICKLE_OBJECTS = 5_000_000
# Characters of text (str) and bytes a dump holds the same way: every reference a copy.
MAX_PICKLE_TEXT = 256 * MiB
# Distinct keys of one dict (or items of one set) that share one hash value. Real data has
# one or two (-1 and -2 hash alike); a flood of them makes every insert scan the others
# (150,000 ints that hash alike: quadratic, minutes), so past this the input is refused.
MAX_ALIKE_KEYS = 64
# Values hashed for dict keys and set items, summed over every insert: a tuple keeps no hash,
# so a key of a million elements costs a million steps each time it is used (pickles).
MAX_KEY_HASH_VALUES = 5_000_000
# Option bounds (docs/limits.md): what a user may ask for, checked where the value enters.
MAX_ROUNDS = 10_000  # rounds of a rerun (or of one bisection step): 30,000 runs
MAX_ARM_VALUES = MAX_ROUNDS  # per-run values of one arm `wb stats` reads: what a rerun can make
MAX_WARMUP_RUNS = 1_000
MAX_SEED = (1 << 53) - 1  # seeds are stored in JSON (integers below 2^53 are exact there)
MAX_TIMEOUT_S = 7 * 24 * 3600.0  # a week per run
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


def check_expanded_size(
    value: object,
    file: str | Path | None,
    limit: int = MAX_PICKLE_OBJECTS,
    *,
    max_depth: int = MAX_DEPTH,
    max_text: int = MAX_PICKLE_TEXT,
) -> int:
    """The number of values in ``value`` as a tree (a shared or cyclic reference counts
    each time it is reached); :class:`LimitExceeded` past ``limit``, when nested deeper
    than ``max_depth``, or when its strings and bytes, each reference counted as a copy,
    exceed ``max_text``. Iterative; cost bounded by ``limit``."""
    count = 0
    text = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > limit:
            raise exceeded(file, "holds more values (counting each shared reference) than", f"{limit:,}")
        if isinstance(node, (str, bytes)):
            text += len(node)
            if text > max_text:
                raise exceeded(
                    file,
                    "holds more text (counting each shared reference to a string as a copy) than",
                    size_text(max_text),
                )
            continue
        if isinstance(node, (dict, list, tuple, set, frozenset)):
            if depth >= max_depth:
                raise exceeded(file, "is nested deeper than", f"{max_depth} levels")
            items = [*node.keys(), *node.values()] if isinstance(node, dict) else node
            stack.extend((item, depth + 1) for item in items)
    return count


class KeyGuard:
    """Refuses a dict or set whose distinct keys share one hash beyond
    :data:`MAX_ALIKE_KEYS`, before the insert that would scan them all.

    ``admit(container, key)`` is called before each insert. The per-hash counts are kept
    by the hash's bytes (hashed with the interpreter's randomized bytes hash), so the
    guard's own table cannot be flooded the same way.
    """

    def __init__(self, file: str | Path | None) -> None:
        self.file = file
        self._counts: dict[int, tuple[object, dict[bytes, int]]] = {}

    def admit(self, container: dict | set, key: object, where: str | None = None) -> None:
        h = hash(key)
        entry = self._counts.get(id(container))
        if entry is None or entry[0] is not container:
            entry = self._counts[id(container)] = (container, {})
        counts = entry[1]
        slot = h.to_bytes(8, "little", signed=True)
        n = counts.get(slot, 0)
        if n and key in container:  # a repeated key: at most n alike keys to compare
            return
        if n >= MAX_ALIKE_KEYS:
            raise exceeded(
                self.file,
                "has keys that hash alike (a hash flood): more distinct keys with one hash than",
                f"{MAX_ALIKE_KEYS}",
                where=where,
            )
        counts[slot] = n + 1
