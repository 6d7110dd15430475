"""Per-run values of a rerun's arms from a CSV (``round,arm,value``), for ``wb stats --csv``.

Read under the importers' budgets (docs/limits.md): the file through the one door for files
(regular only, sized first), standard input read to the same size, lines decoded and parsed
one at a time with each line and cell bounded (a 16 MiB line of commas would otherwise be
a list of 16 million cells), and no more values per arm than an analysis takes
(:data:`~workbench.limits.MAX_ARM_VALUES`). Memory stays a small multiple of the values
accepted and time linear in the file, however it is shaped.
"""

from __future__ import annotations

import csv
import io
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from workbench.errors import BadInput
from workbench.inputs import open_regular
from workbench.limits import MAX_ARM_VALUES, exceeded, size_text
from workbench.textsafe import clean

MAX_CSV_BYTES = 16 << 20  # 3 arms x 10,000 runs is ~1 MB of round,arm,value lines
MAX_LINE_BYTES = 64 << 10  # one line; a quoted cell over several lines stops at csv's 128 Ki characters
ARMS = ("A", "B", "A'")

ARM_NAMES = {
    "a": "A",
    "baseline": "A",
    "b": "B",
    "candidate": "B",
    "a'": "A'",
    "a′": "A'",
    "aprime": "A'",
    "a_prime": "A'",
    "a-prime": "A'",
    "a2": "A'",
    "aa": "A'",
}


@dataclass(frozen=True)
class ArmValues:
    """The values of each arm present, in round order; notes for the reader; each value's
    round (its slot, for a paired analysis)."""

    values: dict[str, list[float]]
    notes: list[str]
    slots: dict[str, list[int]]


def read_arm_values(path: str, paired: bool) -> ArmValues:
    """The arms of the CSV at ``path`` (``-``: standard input); bad input names the line."""
    with _binary(path) as binary:
        lines = _Lines(binary, path)
        try:
            return _read(csv.reader(lines), lines, path, paired)
        except csv.Error as exc:
            raise BadInput(path, f"not a CSV of values ({exc})", where=f"line {lines.number}") from None
        except OSError as exc:
            raise BadInput(path, f"cannot be read ({exc.strerror or exc})") from None


@contextmanager
def _binary(path: str) -> Iterator[IO[bytes]]:
    too_big = f"is over the {size_text(MAX_CSV_BYTES)} limit for a CSV of values (docs/limits.md)"
    if path == "-":
        data = sys.stdin.buffer.read(MAX_CSV_BYTES + 1)
        if len(data) > MAX_CSV_BYTES:
            raise BadInput("standard input", too_big)
        binary: IO[bytes] = io.BytesIO(data)
    else:
        binary = open_regular(Path(path), max_bytes=MAX_CSV_BYTES, too_big=too_big)
    with binary:
        yield binary


class _Lines:
    """The file's lines as text for ``csv.reader``, decoded one by one (a fault names its line),
    each refused past :data:`MAX_LINE_BYTES`."""

    def __init__(self, binary: IO[bytes], path: str) -> None:
        self._binary = binary
        self._path = path
        self.number = 0

    def __iter__(self) -> "_Lines":
        return self

    def __next__(self) -> str:
        raw = self._binary.readline(MAX_LINE_BYTES + 1)
        if not raw:
            raise StopIteration
        self.number += 1
        where = f"line {self.number}"
        if len(raw) > MAX_LINE_BYTES:
            raise exceeded(self._path, "has a line longer than", f"{MAX_LINE_BYTES:,} bytes", where=where)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadInput(self._path, f"not UTF-8 text ({exc.reason})", where=where) from None


def _read(reader: Iterator[list[str]], lines: _Lines, path: str, paired: bool) -> ArmValues:
    ir, ia, iv, width = _header(next(reader, None), path)
    cells: dict[tuple[str, str], float] = {}
    rounds: dict[str, None] = {}  # in the order they first appear (a dict: membership in O(1))
    counts = dict.fromkeys(ARMS, 0)
    for row in reader:
        where = f"line {lines.number}"
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) <= max(ir, ia, iv):
            raise BadInput(path, f"expected {width} columns, found {len(row)}", where=where)
        rnd, arm, value = _cell(row[ir].strip(), row[ia].strip(), row[iv].strip(), path, where)
        if (rnd, arm) in cells:
            raise BadInput(path, f"round {_shown(rnd)!r} has two values for arm {arm}", where=where)
        counts[arm] += 1
        if counts[arm] > MAX_ARM_VALUES:
            raise exceeded(
                path,
                f"arm {arm} has more values than",
                f"{MAX_ARM_VALUES:,} (one a run, and a rerun has at most as many rounds)",
                where=where,
            )
        cells[(rnd, arm)] = value
        rounds.setdefault(rnd)
    present = [arm for arm in ARMS if counts[arm]]
    if "A" not in present or "B" not in present:
        raise BadInput(path, "needs values for both arms A and B")
    order, notes = _rounds(list(rounds), cells, present) if paired else (list(rounds), [])
    values = {arm: [cells[(r, arm)] for r in order if (r, arm) in cells] for arm in present}
    slots = {arm: [i for i, r in enumerate(order) if (r, arm) in cells] for arm in present}
    return ArmValues(values, notes, slots)


def _header(header: list[str] | None, path: str) -> tuple[int, int, int, int]:
    """The columns of round, arm and value, and how many the header names."""
    if header is None:
        raise BadInput(path, "empty file (expected a header round,arm,value)")
    cols = [h.strip().lower() for h in header]
    missing = [c for c in ("round", "arm", "value") if c not in cols]
    if missing:
        raise BadInput(path, f"missing column(s) {', '.join(missing)} (expected round,arm,value)", where="line 1")
    return cols.index("round"), cols.index("arm"), cols.index("value"), len(cols)


def _cell(rnd: str, arm_text: str, value_text: str, path: str, where: str) -> tuple[str, str, float]:
    arm = ARM_NAMES.get(arm_text.lower())
    if arm is None:
        raise BadInput(path, f"unknown arm {_shown(arm_text)!r} (use A, B or A')", where=where)
    if not rnd:
        raise BadInput(path, "empty round", where=where)
    return rnd, arm, _value(value_text, path, where)


def _rounds(order: list[str], cells: dict[tuple[str, str], float], present: list[str]) -> tuple[list[str], list[str]]:
    """Paired: only the rounds with every arm present, and a note naming those left out."""
    notes = []
    dropped = [r for r in order if not all((r, arm) in cells for arm in present)]
    if dropped:
        more = f" and {len(dropped) - 20} more" if len(dropped) > 20 else ""
        shown = ", ".join(_shown(r) for r in dropped[:20]) + more
        notes.append(f"rounds without every arm were left out of the paired analysis: {shown}")
    return [r for r in order if all((r, arm) in cells for arm in present)], notes


def _value(text: str, path: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise BadInput(path, f"value is not a number: {_shown(text)!r}", where=where) from None
    if not math.isfinite(value) or value <= 0:
        raise BadInput(path, f"value must be a positive finite number, got {_shown(text)!r}", where=where)
    return value


def _shown(text: str) -> str:
    """A cell for a message: escaped, and cut (a cell may be 128 KiB)."""
    return clean(text if len(text) <= 40 else text[:40] + "…")
