"""Cut one big JSON array member into runs of whole items, without parsing the items.

A trace is one object whose ``traceEvents`` array holds nearly all of its bytes. To
decode that array a few megabytes at a time (with a fast typed decoder, memory
bounded by one chunk), we need to know where items end. Item boundaries are found
with numpy over each buffer: real (unescaped) quotes mark strings, and braces and
brackets outside strings give the nesting depth; an item ends where a closing brace
or bracket brings the depth back to the array's own. Every scan starts from a clean
point (the document start, or just after an item), so no state crosses buffers.

The scan trusts nothing it cannot check: the caller decodes each run with a real
JSON decoder, which refuses anything the scan got wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import numpy as np

QUOTE, BACKSLASH = 34, 92
OPENERS = (ord("{"), ord("["))
CLOSERS = (ord("}"), ord("]"))
_WS = b" \t\r\n"


class ScanError(ValueError):
    """The bytes are not the expected shape; the caller falls back to a full parser."""


def _real_quotes(buf: np.ndarray) -> np.ndarray:
    """Positions of quotes that open or close a string (not escaped by an odd backslash run)."""
    quotes = np.flatnonzero(buf == QUOTE)
    if len(quotes) == 0:
        return quotes
    maybe = quotes[(quotes > 0) & (buf[np.maximum(quotes - 1, 0)] == BACKSLASH)]
    if len(maybe) == 0:
        return quotes
    escaped = []
    for q in maybe.tolist():  # rare: count the backslash run before this quote
        run, i = 0, q - 1
        while i >= 0 and buf[i] == BACKSLASH:
            run += 1
            i -= 1
        if run % 2:
            escaped.append(q)
    return np.setdiff1d(quotes, np.array(escaped, dtype=quotes.dtype), assume_unique=True) if escaped else quotes


@dataclass
class Structure:
    """Braces and brackets outside strings, with the depth after each."""

    positions: np.ndarray
    chars: np.ndarray
    depth_after: np.ndarray
    quotes: np.ndarray

    def depth_before(self, pos: int, start_depth: int) -> int:
        i = int(np.searchsorted(self.positions, pos)) - 1
        return start_depth if i < 0 else int(self.depth_after[i])

    def in_string(self, pos: int) -> bool:
        return int(np.searchsorted(self.quotes, pos)) % 2 == 1


def structure(data: bytes | bytearray | memoryview, start_depth: int) -> Structure:
    buf = np.frombuffer(data, dtype=np.uint8)
    quotes = _real_quotes(buf)
    marks = np.flatnonzero((buf == OPENERS[0]) | (buf == OPENERS[1]) | (buf == CLOSERS[0]) | (buf == CLOSERS[1]))
    outside = np.searchsorted(quotes, marks) % 2 == 0
    marks = marks[outside]
    chars = buf[marks]
    step = np.where((chars == OPENERS[0]) | (chars == OPENERS[1]), 1, -1).astype(np.int32)
    depth = start_depth + np.cumsum(step, dtype=np.int32)
    return Structure(marks, chars, depth, quotes)


class ArrayChunks:
    """Splits a document ``{..., "<key>": [item, item, ...], ...}`` read from ``stream``.

    ``header`` (bytes before the key) and ``trailer`` (bytes after the array's closing
    bracket) are kept for the caller; ``chunks()`` yields ``b"[item,...,item]"`` runs
    of whole items of about ``chunk`` bytes each.
    """

    def __init__(
        self, stream: IO[bytes], key: bytes, *, chunk: int = 4 << 20, head_cap: int = 8 << 20, tail_cap: int = 1 << 20
    ) -> None:
        self.stream = stream
        self.key = b'"' + key + b'"'
        self.chunk = chunk
        self.head_cap = head_cap
        self.tail_cap = tail_cap
        self.header = b""
        self.trailer = b""

    def _read(self) -> bytes:
        return self.stream.read(self.chunk)

    def _find_array(self) -> bytes:
        """Read until the key's array opens; returns the bytes after its ``[``."""
        buf = b""
        while True:
            more = self._read()
            buf += more
            st = structure(buf, 0)
            pos = buf.find(self.key)
            while pos >= 0:
                if not st.in_string(pos) and st.depth_before(pos, 0) == 1:
                    i = pos + len(self.key)
                    rest = buf[i:].lstrip(_WS)
                    if rest.startswith(b":"):
                        rest = rest[1:].lstrip(_WS)
                        if rest.startswith(b"["):
                            self.header = buf[:pos]
                            return rest[1:]
                        if rest:
                            raise ScanError(f"{self.key.decode()} is not an array")
                    elif rest:
                        raise ScanError("malformed member")
                    break  # the member runs past the buffer: read more
                pos = buf.find(self.key, pos + 1)
            if not more or len(buf) > self.head_cap:
                raise ScanError(f"no {self.key.decode()} array in the first {self.head_cap >> 20} MiB")

    def chunks(self) -> Iterator[bytes]:
        carry = self._find_array()
        at_end = False
        first = True

        def items(body: bytes) -> bytes:
            body = body.strip(_WS)
            if not first:
                if not body.startswith(b","):
                    raise ScanError("items not separated by a comma")
                body = body[1:].lstrip(_WS)
            return body

        while True:
            more = b"" if at_end else self._read()
            at_end = at_end or not more
            buf = carry + more
            st = structure(buf, 2)
            closing = np.flatnonzero(st.depth_after == 1)
            if len(closing):  # the array ends in this buffer
                end = int(st.positions[closing[0]])
                if buf[end] != ord("]") or np.any(st.depth_after[: closing[0]] < 2):
                    raise ScanError("unbalanced nesting in the array")
                body = items(buf[:end]) if (buf[:end].strip(_WS) or first) else b""
                if body:
                    yield b"[" + body + b"]"
                self.trailer = buf[end + 1 :]
                while len(self.trailer) <= self.tail_cap:
                    more = self._read()
                    if not more:
                        return
                    self.trailer += more
                raise ScanError(f"more than {self.tail_cap >> 20} MiB after the array")
            if at_end:
                raise ScanError("the input ends inside the array (truncated)")
            ends = st.positions[(st.depth_after == 2) & (st.chars == CLOSERS[0])]
            if len(ends) == 0:
                carry = buf  # one item longer than the buffer: keep reading
                continue
            cut = int(ends[-1]) + 1
            yield b"[" + items(buf[:cut]) + b"]"
            first = False
            carry = buf[cut:]
