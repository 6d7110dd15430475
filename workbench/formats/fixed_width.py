"""Slurm's fixed-width tables (``sacct`` without ``-P``): a header line, a line of dashes,
then one record per line, each field padded to its column's width.

Slurm prints every field with ``printf("%*.*s ", width, width, value)`` (``src/common/
print_fields.c``): a value longer than its column is cut to the width and its last character
replaced by ``+``. The columns are the runs of dashes of the second line, in bytes (printf
counts bytes, so a job name in UTF-8 keeps its neighbours in place). A cut value has lost
what was cut: ``sacct -P`` (``--parsable2``) prints every field whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

_DASHES = re.compile(rb"-+")
_DASH_LINE = re.compile(r"^ *-+( +-+)* *$")


def is_dash_line(line: str) -> bool:
    """The second line of a fixed-width table: runs of dashes separated by spaces."""
    return bool(_DASH_LINE.match(line.rstrip("\r\n")))


@dataclass(frozen=True)
class Layout:
    """The columns of a fixed-width table: their names and byte spans."""

    names: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, header: bytes, dashes: bytes) -> "Layout":
        spans = tuple((m.start(), m.end()) for m in _DASHES.finditer(dashes))
        names = tuple(header[a:b].decode("utf-8", errors="replace").strip() for a, b in spans)
        return cls(names, spans)

    def cut(self, line: bytes) -> tuple[list[str], list[int]]:
        """The fields of one record, and the indexes of those the writer cut short (``+`` in
        the last byte of a full-width field)."""
        fields: list[str] = []
        cut: list[int] = []
        for i, (a, b) in enumerate(self.spans):
            raw = line[a:b]
            if len(raw) == b - a and raw.endswith(b"+") and not raw.startswith(b" "):
                cut.append(i)
            fields.append(raw.decode("utf-8", errors="replace").strip())
        return fields, cut


def records(stream: IO[bytes], layout: Layout, first_line: int, max_line: int) -> Iterator[tuple[int, bytes]]:
    """Each non-blank line after the dashes, with its line number (a line longer than
    ``max_line`` bytes is returned cut there: the caller refuses it)."""
    number = first_line
    while True:
        line = stream.readline(max_line + 1)
        if not line:
            return
        number += 1
        line = line.rstrip(b"\r\n")
        if line.strip():
            yield number, line
