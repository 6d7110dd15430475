"""Stream one large JSON object: small top-level values whole, one big array item by item.

``json.JSONDecoder.raw_decode`` (the C scanner) decodes each value, so the cost per
item is the same as ``json.load``, while memory stays bounded by one item plus a
read buffer. Strict: NaN and Infinity are refused, as is anything after the object.
One value may not exceed ``workbench.limits.MAX_VALUE_BYTES`` (the buffer grows to
hold it, never to the end of a file that is not JSON), nor nest deeper than the
interpreter allows; an integer of more than 4,300 digits is refused.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator
from typing import IO, Any

from workbench.errors import BadInput
from workbench.limits import MAX_DEPTH, MAX_VALUE_BYTES, exceeded, size_text

_WS = " \t\n\r"
_SKIP_WS = re.compile(r"[ \t\n\r]*").match
CHUNK_CHARS = 1 << 20


class NonFiniteNumber(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise NonFiniteNumber(f"{name} is not allowed (JSON has no NaN or Infinity; omit a missing value)")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
# Errors that say the value cannot end inside the buffer we have (more input may fix them).
_NEEDS_MORE = (
    "Unterminated string",
    "Expecting value",
    "Expecting ',' delimiter",
    "Expecting ':' delimiter",
    "Expecting property name",
    "Invalid \\uXXXX escape",
    "Invalid \\escape",
)


class ObjectStream:
    """Walks a JSON object from a binary stream.

    ``items(stream_keys)`` yields ``(key, value)`` for each member; for a key in
    ``stream_keys`` whose value is an array, the value is an iterator over its items,
    which must be consumed before the next member is read.
    """

    def __init__(self, binary: IO[bytes], file: str) -> None:
        self._binary = binary
        self._file = file
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._bytes_read = 0
        self._buf = ""
        self._pos = 0
        self._eof = False
        self._base_chars = 0  # characters dropped before _buf[0]
        self._base_lines = 0  # newlines dropped before _buf[0]
        self._chunk = CHUNK_CHARS
        self.where: Callable[[], str] = lambda: ""
        self._member = ""  # the top-level member being decoded, for messages

    # -- low level ---------------------------------------------------------------

    def _fill(self) -> bool:
        if self._eof:
            return False
        raw = self._binary.read(self._chunk)
        pending = len(self._decoder.getstate()[0])  # bytes of a character begun in the last chunk
        try:
            text = self._decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            byte = self._bytes_read - pending + exc.start  # the offending byte's offset in the file
            raise BadInput(self._file, f"is not UTF-8 text ({exc.reason})", where=f"byte {byte}") from None
        self._bytes_read += len(raw)
        if not raw:
            self._eof = True
        dropped = self._buf[: self._pos]
        self._base_lines += dropped.count("\n")
        self._base_chars += self._pos
        self._buf = self._buf[self._pos :] + text
        self._pos = 0
        return bool(text) or not self._eof

    def _location(self, pos: int) -> str:
        line = self._base_lines + self._buf.count("\n", 0, pos) + 1
        return f"line {line}, char {self._base_chars + pos}"

    def _error(self, message: str, pos: int | None = None) -> BadInput:
        path = self.where() or self._member
        loc = self._location(self._pos if pos is None else pos)
        return BadInput(self._file, message, where=f"{path} ({loc})" if path else loc)

    def _skip_ws(self) -> str:
        """The next non-blank character ("" at the end of input), not consumed."""
        while True:
            buf = self._buf
            pos = self._pos = _SKIP_WS(buf, self._pos).end()
            if pos < len(buf):
                return buf[pos]
            if not self._fill():
                return ""

    def _expect(self, chars: str, what: str) -> str:
        ch = self._skip_ws()
        if ch == "":
            raise self._error(f"truncated JSON: the input ends where {what} was expected")
        if ch not in chars:
            raise self._error(f"invalid JSON: expected {what}, found {ch!r}")
        self._pos += 1
        return ch

    def value(self) -> Any:
        """Decode one JSON value at the current position."""
        self._skip_ws()
        while True:
            try:
                obj, end = _DECODER.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                # Only an error at the very end of the buffer can be cured by reading more.
                if not self._eof and self._may_continue(exc):
                    self._grow()
                    continue
                if exc.pos >= len(self._buf) - 1 or "Unterminated" in exc.msg:
                    raise self._error("truncated JSON: the input ends inside a value", exc.pos) from None
                raise self._error(f"invalid JSON: {exc.msg}", exc.pos) from None
            except ValueError as exc:
                raise self._refusal(exc) from None
            except RecursionError:
                raise self._error(str(exceeded(None, "nested deeper than", f"{MAX_DEPTH} levels"))) from None
            if end >= len(self._buf) and not self._eof:
                # A number at the very end of the buffer may continue in the next chunk.
                self._grow()
                continue
            self._pos = end
            self._chunk = CHUNK_CHARS
            return obj

    def _may_continue(self, exc: json.JSONDecodeError) -> bool:
        if exc.msg.startswith("Unterminated string"):
            return True  # reported at the string's start
        return exc.pos >= len(self._buf) - 6 and exc.msg.startswith(_NEEDS_MORE)

    def _grow(self) -> None:
        """Read more of one value, refusing a value larger than the limit."""
        held = len(self._buf) - self._pos
        if held > MAX_VALUE_BYTES:
            raise self._error(str(exceeded(None, "one JSON value is larger than", size_text(MAX_VALUE_BYTES))))
        # Doubling, but never reading far past the cap (each read is copied into the buffer).
        self._chunk = max(1, min(self._chunk * 2, 1 << 26, MAX_VALUE_BYTES + 1 - held))
        self._fill()

    def _refusal(self, exc: ValueError) -> BadInput:
        """A ValueError from decoding: a non-finite constant or an absurdly long number."""
        if "digits" in str(exc):  # int() refuses integers of more than 4,300 digits
            return self._error(str(exceeded(None, "an integer has more digits than", "4,300")))
        if isinstance(exc, NonFiniteNumber):
            return self._error(str(exc))
        return self._error(f"invalid JSON: {exc}")

    # -- structure ---------------------------------------------------------------

    def items(self, stream_keys: frozenset[str] = frozenset()) -> Iterator[tuple[str, Any]]:
        if self._skip_ws() == "\ufeff":
            self._pos += 1
        ch = self._skip_ws()
        if ch == "":
            raise self._error("is empty")
        if ch != "{":
            raise self._error(f"not a JSON object (starts with {ch!r})")
        self._pos += 1
        seen: set[str] = set()
        if self._skip_ws() == "}":
            self._pos += 1
        else:
            while True:
                if self._skip_ws() != '"':
                    self._expect('"', "a member name")
                key = self.value()
                if key in seen:
                    raise self._error(f"duplicate key {key!r}")
                seen.add(key)
                self._expect(":", "':'")
                if key in stream_keys and self._skip_ws() == "[":
                    self._pos += 1
                    yield key, self._array_items()
                else:
                    self._member = key if len(key) <= 80 else key[:77] + "..."
                    value = self.value()
                    self._member = ""
                    yield key, value
                if self._expect(",}", "',' or '}'") == "}":
                    break
        if self._skip_ws() != "":
            raise self._error("unexpected data after the end of the JSON object")

    def _array_items(self) -> Iterator[Any]:
        if self._skip_ws() == "]":
            self._pos += 1
            return
        scan = _DECODER.scan_once
        while True:
            # Fast path: the C scanner straight on the buffer. Anything unusual (a value
            # running past the buffer, an error) goes through value(), which refills and
            # reports.
            buf = self._buf
            pos = _SKIP_WS(buf, self._pos).end()
            try:
                obj, end = scan(buf, pos)
            except (StopIteration, json.JSONDecodeError, RecursionError):
                obj, end = None, -1  # value() says what and where
            except ValueError as exc:
                self._pos = pos
                raise self._refusal(exc) from None
            if end < 0 or end >= len(buf):
                self._pos = pos
                obj = self.value()
            else:
                self._pos = end
            yield obj
            buf = self._buf
            pos = _SKIP_WS(buf, self._pos).end()
            if pos < len(buf) and buf[pos] == ",":
                self._pos = pos + 1
                continue
            self._pos = pos
            if self._expect(",]", "',' or ']'") == "]":
                return
