"""One JSON object read from a stream: its members one at a time, one array member in runs.

The native capture (``samples``) and a Kineto trace (``traceEvents``) hold nearly all of
their bytes in one array. ``JsonObject`` walks the top-level object: every other member
is found by a scan of its bytes and decoded whole by msgspec (at most MAX_VALUE_BYTES);
the streamed member's array comes out as runs of whole items, about ``run_bytes`` each,
for the reader's own msgspec decoder (typed Structs at the edge).

A run is cut without scanning its bytes: after the last ``}`` that a ``,`` follows. The
cut is trusted only because a strict decoder reads the run: a cut inside a string or a
nested value leaves it unbalanced, so a run the decoder refuses is cut again by a scan
(real quotes, then brackets, braces and commas outside strings) before its fault counts.
Nothing is read twice.

Every fault is one BadInput naming the file and the place: the item (``samples[12]``)
with the JSON path msgspec gives, else the line and character. Strict like the
standard: NaN and Infinity, duplicate top-level keys and data after the object are
refused; a value nested past the decoder's depth, an integer of more than 4,300 digits
and one value larger than MAX_VALUE_BYTES are refused as limits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sized
from dataclasses import dataclass
from typing import IO, Any, TypeVar

import msgspec
import numpy as np

from workbench.errors import BadInput
from workbench.limits import MAX_DEPTH, MAX_VALUE_BYTES, exceeded, size_text

READ = 1 << 20  # bytes per read while walking the members
WINDOW = 64 << 10  # bytes of a member's value scanned at first (doubled until it ends)
QUOTE, BACKSLASH, COMMA = 34, 92, 44
OPEN_OBJECT, OPEN_ARRAY, CLOSE_OBJECT, CLOSE_ARRAY = 123, 91, 125, 93
_BLANKS = re.compile(rb"[ \t\r\n]*")
_SCALAR = re.compile(rb"[^ \t\r\n,\]}]*")
_BYTE = re.compile(r"\(byte (\d+)\)$")
_ANY = msgspec.json.Decoder()
_RAW = msgspec.json.Decoder(msgspec.Raw)  # checks the syntax of a value without building it
_RAW_ITEMS = msgspec.json.Decoder(list[msgspec.Raw])
# What a decoder raises on a run it refuses: its syntax, its types, its bytes, its depth.
REFUSALS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError)
_NOT_FINITE = ("-Infinity", "Infinity", "NaN")
_BOM = b"\xef\xbb\xbf"

T = TypeVar("T", bound=Sized)
Invalid = Callable[[msgspec.ValidationError, "Run"], "BadInput | None"]


@dataclass(frozen=True)
class Run:
    """Whole items of the streamed array: ``data`` is ``b"[" + items + b"]"``."""

    data: bytes
    first: int  # the array index of its first item
    offset: int  # the file's byte offset of data[1]
    start: int  # where data[1] is in the reader's buffer, while ``epoch`` is the buffer's
    epoch: int


class JsonObject:
    """Walks the top-level object read from ``binary``: ``members()`` yields ``(key, value)``
    in order, the value decoded, or for the key ``streamed`` (an array) an ``Items`` whose
    runs are read before the next member. Read errors of ``binary`` pass through."""

    def __init__(self, binary: IO[bytes], file: str, *, streamed: str, run_bytes: int = 1 << 20) -> None:
        self.file = file
        self.streamed = streamed
        self.run_bytes = run_bytes
        self._binary = binary
        self._buf = b""
        self._pos = 0
        self._eof = False
        self._epoch = 0  # counts the buffer's rebuilds (a run's ``start`` holds within one)
        self._base = 0  # the file offset of _buf[0]
        self._lines = 0  # newlines before _buf[0]
        self._chars = 0  # characters before _buf[0]
        self._member = ""  # the member being decoded, for messages
        self._key_at = 0  # where the last member name began in the buffer

    # -- the buffer ------------------------------------------------------------------

    def _fill(self, need: int = READ) -> bool:
        """Drop what was consumed and read until ``need`` bytes follow the position (or the
        input ends); False when nothing more could be read."""
        buf, pos = self._buf, self._pos
        if pos:
            self._lines += buf.count(b"\n", 0, pos)
            self._chars += pos - _continuations(buf, pos)
            self._base += pos
        parts = [buf[pos:]]
        have = len(parts[0])
        while have < need and not self._eof:
            block = self._binary.read(max(READ, need - have))
            if not block:
                self._eof = True
                break
            if self._base == 0 and have == 0 and block.startswith(_BOM):
                block, self._base = block[3:], 3
            parts.append(block)
            have += len(block)
        read = len(parts) > 1
        self._buf = b"".join(parts) if read else parts[0]
        self._pos = 0
        self._epoch += 1
        return read

    def _more(self, path: str) -> None:
        """Read on through one value that starts at the position: refused past the limit,
        or when the input ends first."""
        held = len(self._buf) - self._pos
        if held > MAX_VALUE_BYTES:
            raise self.error(
                str(exceeded(None, "one JSON value is larger than", size_text(MAX_VALUE_BYTES))), path=path
            )
        # Doubling, but never reading far past the limit (each read is copied into the buffer).
        if not self._fill(min(max(2 * held, READ), MAX_VALUE_BYTES + 1)):
            raise self.error("truncated JSON: the input ends inside a value", len(self._buf), path)

    def _peek(self) -> int:
        """The next non-blank byte (-1 at the end of the input), not consumed."""
        while True:
            self._pos = _BLANKS.match(self._buf, self._pos).end()  # type: ignore[union-attr]
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if not self._fill():
                return -1

    def location(self, index: int) -> str:
        """``line L, char C`` of the buffer position ``index``."""
        buf = self._buf
        line = self._lines + buf.count(b"\n", 0, index) + 1
        return f"line {line}, char {self._chars + index - _continuations(buf, index)}"

    def error(self, message: str, index: int | None = None, path: str | None = None) -> BadInput:
        path = self._member if path is None else path
        loc = self.location(self._pos if index is None else index)
        return BadInput(self.file, message, where=f"{path} ({loc})" if path else loc)

    def _char(self, index: int) -> str:
        return self._buf[index : index + 4].decode("utf-8", "replace")[:1]

    def _expect(self, chars: bytes, what: str) -> int:
        ch = self._peek()
        if ch < 0:
            raise self.error(f"truncated JSON: the input ends where {what} was expected")
        if ch not in chars:
            raise self.error(f"invalid JSON: expected {what}, found {self._char(self._pos)!r}")
        self._pos += 1
        return ch

    # -- members ---------------------------------------------------------------------

    def members(self) -> Iterator[tuple[str, Any]]:
        ch = self._peek()
        if ch < 0:
            raise self.error("is empty")
        if ch != OPEN_OBJECT:
            raise self.error(f"not a JSON object (starts with {self._char(self._pos)!r})")
        self._pos += 1
        seen: set[str] = set()
        if self._peek() == CLOSE_OBJECT:
            self._pos += 1
        else:
            while True:
                if self._peek() != QUOTE:
                    self._expect(b'"', "a member name")
                key = self._key()
                if key in seen:
                    raise self.error(f"duplicate key {key!r}", self._key_at)
                seen.add(key)
                self._expect(b":", "':'")
                if key == self.streamed and self._peek() == OPEN_ARRAY:
                    self._pos += 1
                    items = Items(self, key)
                    yield key, items
                    items.drain()
                else:
                    self._member = key if len(key) <= 80 else key[:77] + "..."
                    yield key, self._value()
                    self._member = ""
                if self._expect(b",}", "',' or '}'") == CLOSE_OBJECT:
                    break
        if self._peek() >= 0:
            raise self.error("unexpected data after the end of the JSON object")

    def _key(self) -> str:
        while True:
            end = _string_end(self._buf, self._pos)
            if end is not None:
                self._key_at = self._pos  # (reading on moves the buffer: where the key began, now)
                key = self._decode(end, "")
                assert isinstance(key, str)  # (it began with a quote and ended at the next real one)
                return key
            self._more("")

    def _value(self) -> Any:
        """The next value, decoded whole."""
        if self._peek() < 0:
            raise self.error("truncated JSON: the input ends where a value was expected")
        while True:
            end = self._value_end()
            if end is not None:
                return self._decode(end, self._member)
            if self._buf[self._pos] in (OPEN_OBJECT, OPEN_ARRAY):
                self._early_fault(memoryview(self._buf)[self._pos :], self._pos, self._member)
            self._more(self._member)

    def _value_end(self) -> int | None:
        """Just past the value at the position, or None when it runs past the buffer."""
        buf, start = self._buf, self._pos
        first = buf[start]
        if first in (OPEN_OBJECT, OPEN_ARRAY):
            window = WINDOW
            while True:  # a member's value is scanned from its start, not the whole buffer
                end = min(len(buf), start + window)
                marks, _chars, depth = scan(buf, start, 0, end)
                closed = np.flatnonzero(depth == 0)
                if len(closed):
                    return int(marks[closed[0]]) + 1
                if end == len(buf):
                    return None
                window *= 2
        if first == QUOTE:
            return _string_end(buf, start)
        end = _SCALAR.match(buf, start).end()  # type: ignore[union-attr]
        if end == len(buf) and not self._eof:
            return None  # a number may go on in the next read
        if end == start:
            raise self.error(f"invalid JSON: expected a value, found {self._char(start)!r}")
        return end

    def _decode(self, end: int, path: str) -> Any:
        start = self._pos
        data = self._buf[start:end]
        try:
            value = _ANY.decode(data)
        except REFUSALS as exc:
            raise self.refusal(exc, data, self._base + start, path, lambda i: self.location(start + i)) from None
        self._pos = end
        return value

    def _early_fault(self, data: bytes | memoryview, at: int, path: str) -> None:
        """A value not yet whole that is already wrong is refused before reading on: a file
        of NULs after a header stops at its first byte, not at the limit. ``at`` is the
        buffer position of ``data[0]`` (one before the buffer's bytes for a run's ``[``)."""
        try:
            _RAW.decode(data)
        except msgspec.DecodeError as exc:
            found = _BYTE.search(str(exc))
            if found and int(found.group(1)) < len(data) - 64:  # a fault well before the end: reading on cannot cure it
                raise self.refusal(exc, bytes(data), self._base + at, path, lambda i: self.location(at + i)) from None
        except RecursionError as exc:
            raise self.refusal(exc, bytes(data), self._base + at, path) from None

    # -- faults ----------------------------------------------------------------------

    def refusal(
        self,
        exc: BaseException,
        data: bytes,
        offset: int,
        path: str,
        locate: Callable[[int], str] | None = None,
        first: int | None = None,
    ) -> BadInput:
        """One line for what msgspec refused in ``data`` (``data[0]`` at file offset ``offset``),
        a value at ``path`` (a run of items ``path[first]``... when ``first`` is given);
        ``locate(i)`` gives the line and character of ``data[i]``."""

        def where(i: int) -> str:
            loc = locate(i) if locate is not None else f"byte {offset + i}"
            item = f"{path}[{first + _item_at(data, i)}]" if first is not None else path
            return f"{item} ({loc})" if item else loc

        if isinstance(exc, UnicodeDecodeError):
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as bad:
                return BadInput(self.file, f"is not UTF-8 text ({bad.reason})", where=f"byte {offset + bad.start}")
        if isinstance(exc, RecursionError):
            return BadInput(self.file, str(exceeded(None, "nested deeper than", f"{MAX_DEPTH} levels")), where=path)
        text = str(exc)
        if isinstance(exc, msgspec.ValidationError):
            return out_of_range(self.file, text, path) or BadInput(
                self.file, f"invalid value: {head(text)}", where=path
            )
        found = _BYTE.search(text)
        if found is None or "surrogate" in text:  # msgspec's "truncated" for a lone surrogate, or its pair refused
            fault = _python_fault(self.file, data, path, first)
            if fault is not None:
                return fault
        if found is None:
            return BadInput(self.file, "truncated JSON: the input ends inside a value", where=where(len(data)))
        i = int(found.group(1))
        for name in _NOT_FINITE:
            if data.startswith(name.encode(), max(0, i - (name[0] == "-"))):
                message = f"{name} is not allowed (JSON has no NaN or Infinity; omit a missing value)"
                return BadInput(self.file, message, where=where(i))
        reason = text[: found.start()].removeprefix("JSON is malformed:").strip()
        return BadInput(self.file, f"invalid JSON: {reason}", where=where(i))


class Items:
    """The streamed array of a ``JsonObject``, as runs of whole items."""

    def __init__(self, doc: JsonObject, key: str) -> None:
        self._doc = doc
        self.key = key
        self._done = False
        self._next = 0  # the index of the next item

    def runs(self, decode: Callable[[Run], T], invalid: Invalid | None = None) -> Iterator[tuple[T, Run]]:
        """``(decode(run), run)`` for each run. A run ``decode`` refuses (a msgspec error)
        is cut again by a scan; a fault in a run cut right is one BadInput naming the item
        (``invalid`` says what a ValidationError means to the reader, None: the default)."""
        while not self._done:
            run, fast = self._cut()
            if run is None:
                return
            try:
                decoded = decode(run)
            except REFUSALS as exc:
                again = self._scanned(run.start) if fast else run
                if again.data == run.data:
                    raise self.fault(exc, run, invalid) from None
                run = again
                try:
                    decoded = decode(run)
                except REFUSALS as exc2:
                    raise self.fault(exc2, run, invalid) from None
            self._next = run.first + len(decoded)
            yield decoded, run

    def drain(self) -> None:
        """Read to the array's end (when a reader stopped early, the walk still goes on right)."""
        for _ in self.runs(lambda run: _RAW_ITEMS.decode(run.data)):
            pass

    def fault(self, exc: BaseException, run: Run, invalid: Invalid | None = None) -> BadInput:
        """One line for what a decoder refused in ``run`` (cut right): the item, with the line
        and character while the run is still in the buffer."""
        doc = self._doc
        if isinstance(exc, msgspec.ValidationError):
            found = invalid(exc, run) if invalid is not None else None
            if found is not None:
                return found
            item, rest = item_path(str(exc))
            path = f"{self.key}[{run.first + item}]{rest}" if item is not None else self.key
            return doc.refusal(exc, run.data, run.offset - 1, path)
        if isinstance(exc, RecursionError):
            return doc.refusal(exc, run.data, run.offset - 1, f"{self.key}[{run.first + _deepest_item(run.data)}]")
        locate = (lambda i: doc.location(run.start - 1 + i)) if run.epoch == doc._epoch else None
        return doc.refusal(exc, run.data, run.offset - 1, self.key, locate, first=run.first)

    # -- cutting -----------------------------------------------------------------------

    def _cut(self) -> tuple[Run | None, bool]:
        """The next run (None past the array's end), and whether it was cut without a scan."""
        doc = self._doc
        if len(doc._buf) - doc._pos < doc.run_bytes and not doc._eof:
            doc._fill(doc.run_bytes)
        ch = doc._peek()
        where = f"{self.key}[{self._next}]"
        if ch < 0:
            raise doc.error("truncated JSON: the input ends inside a value", len(doc._buf), where)
        if ch == CLOSE_ARRAY:
            if self._next:  # "[1,]": a comma with no item after it
                raise doc.error("invalid JSON: expected a value, found ']'", path=where)
            doc._pos += 1
            self._done = True
            return None, False
        start = doc._pos
        cut = _last_item_end(doc._buf, start, start + doc.run_bytes)
        if cut > start:
            doc._pos = _BLANKS.match(doc._buf, cut).end() + 1  # type: ignore[union-attr]  # past the comma
            return self._run(start, cut), True
        return self._scanned(start), False

    def _run(self, start: int, end: int) -> Run:
        doc = self._doc
        data = b"".join((b"[", memoryview(doc._buf)[start:end], b"]"))  # one copy
        return Run(data, self._next, doc._base + start, start, doc._epoch)

    def _scanned(self, start: int) -> Run:
        """The run from the buffer position ``start`` (an item's start) cut by a scan: to the
        last comma between items in the buffer, or to the array's end; reading on while one
        item has no end."""
        doc = self._doc
        doc._pos = start
        where = f"{self.key}[{self._next}]"
        while True:
            buf, start = doc._buf, doc._pos
            marks, chars, depth = scan(buf, start, 1)
            closed = np.flatnonzero(depth <= 0)
            if len(closed):
                end = int(marks[closed[0]])
                if buf[end] != CLOSE_ARRAY:
                    raise doc.error(f"invalid JSON: expected ',' or ']', found {doc._char(end)!r}", end, where)
                if not buf[start:end].strip(b" \t\r\n"):
                    raise doc.error("invalid JSON: expected a value, found ']'", end, where)
                doc._pos = end + 1
                self._done = True
                return self._run(start, end)
            commas = marks[(chars == COMMA) & (depth == 1)]
            if len(commas):  # the last one within a run's bytes, else the first
                within = commas[commas <= start + doc.run_bytes]
                comma = int(within[-1] if len(within) else commas[0])
                doc._pos = comma + 1
                return self._run(start, comma)
            doc._early_fault(b"[" + buf[start:], start - 1, where)  # one item runs past the buffer
            doc._more(where)


def scan(buf: bytes, start: int, depth: int, end: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Brackets, braces and commas outside strings in ``buf[start:end]`` (``start`` outside
    any string): their positions in ``buf``, the characters, and the depth after each,
    counted from ``depth``."""
    data = np.frombuffer(buf, dtype=np.uint8, offset=start, count=(len(buf) if end is None else end) - start)
    quotes = real_quotes(data)
    marks = np.flatnonzero(
        (data == OPEN_OBJECT) | (data == OPEN_ARRAY) | (data == CLOSE_OBJECT) | (data == CLOSE_ARRAY) | (data == COMMA)
    )
    if len(quotes):
        marks = marks[np.searchsorted(quotes, marks) % 2 == 0]
    chars = data[marks]
    step = np.where((chars == OPEN_OBJECT) | (chars == OPEN_ARRAY), 1, np.where(chars == COMMA, 0, -1))
    return marks + start, chars, depth + np.cumsum(step, dtype=np.int64)


def real_quotes(data: np.ndarray) -> np.ndarray:
    """Positions of the quotes that open or close a string (not escaped by an odd run of backslashes)."""
    quotes = np.flatnonzero(data == QUOTE)
    if len(quotes) == 0:
        return quotes
    maybe = quotes[(quotes > 0) & (data[np.maximum(quotes - 1, 0)] == BACKSLASH)]
    if len(maybe) == 0:
        return quotes
    escaped = []
    for q in maybe.tolist():  # rare: count the backslash run before this quote
        run, i = 0, q - 1
        while i >= 0 and data[i] == BACKSLASH:
            run += 1
            i -= 1
        if run % 2:
            escaped.append(q)
    return np.setdiff1d(quotes, np.array(escaped, dtype=quotes.dtype), assume_unique=True) if escaped else quotes


def item_path(message: str) -> tuple[int | None, str]:
    """The item index and the rest of the path msgspec names (``... - at `$[12].key```)."""
    _head, sep, tail = message.partition(" - at `$[")
    if not sep or not tail.endswith("`"):
        return None, ""
    index, sep, rest = tail[:-1].partition("]")
    return (int(index), rest) if sep and index.isdigit() else (None, "")


def head(message: str) -> str:
    """msgspec's message without its path."""
    return message.partition(" - at `$")[0]


def got(message: str) -> str:
    """The JSON type msgspec says it found (``Expected `float`, got `str```), in words."""
    found = head(message).rpartition("got `")[2].rstrip("`")
    return _TYPE_WORDS.get(found, found)


_TYPE_WORDS = {
    "str": "a string",
    "int": "a number",
    "float": "a number",
    "bool": "a boolean",
    "null": "null",
    "array": "an array",
    "object": "an object",
}


def out_of_range(file: str, message: str, path: str) -> BadInput | None:
    """msgspec's refusal of a number it cannot hold, as what it is (None: another refusal)."""
    text = head(message)
    if text.startswith("Integer value out of range"):
        return BadInput(file, str(exceeded(None, "an integer has more digits than", "4,300")), where=path)
    if text.startswith("Number out of range"):
        return BadInput(file, "number out of range (it reads as infinity; a value must be finite)", where=path)
    return None


def _string_end(buf: bytes, start: int) -> int | None:
    """Just past the string that opens at ``buf[start]`` (a quote), or None when it runs past the buffer."""
    pos = start + 1
    while True:
        quote = buf.find(b'"', pos)
        if quote < 0:
            return None
        before = quote - 1
        while buf[before] == BACKSLASH:
            before -= 1
        if (quote - 1 - before) % 2 == 0:  # not escaped
            return quote + 1
        pos = quote + 1


def _last_item_end(buf: bytes, start: int, end: int, tries: int = 8) -> int:
    """Just past the last ``}`` followed (after blanks) by ``,`` in ``buf[start:end]``, or -1."""
    pos = min(end, len(buf))
    for _ in range(tries):
        pos = buf.rfind(b"}", start, pos)
        if pos < 0:
            return -1
        after = _BLANKS.match(buf, pos + 1).end()  # type: ignore[union-attr]
        if after < len(buf) and buf[after] == COMMA:
            return pos + 1
    return -1


def _item_at(data: bytes, index: int) -> int:
    """Which item of the run ``data`` (``[a,b,...]``) holds byte ``index``."""
    marks, chars, depth = scan(data, 0, 0)
    return int(np.count_nonzero((chars == COMMA) & (depth == 1) & (marks < index)))


def _deepest_item(data: bytes) -> int:
    """The first item of the run ``data`` nested deeper than the limit."""
    marks, _chars, depth = scan(data, 0, 0)
    deep = np.flatnonzero(depth > MAX_DEPTH + 1)
    return _item_at(data, int(marks[deep[0]])) if len(deep) else 0


def _continuations(buf: bytes, end: int) -> int:
    """UTF-8 continuation bytes in ``buf[:end]``, so that positions count characters."""
    if buf.isascii():  # the usual case, and the fastest test there is (no copy of a prefix)
        return 0
    data = np.frombuffer(buf, dtype=np.uint8, count=end)
    return int(np.count_nonzero((data & 0xC0) == 0x80))


class _NonFinite(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NonFinite(name)


_STRICT = json.JSONDecoder(parse_constant=_refuse_constant)


def _python_fault(file: str, data: bytes, path: str, first: int | None = None) -> BadInput | None:
    """The place of what msgspec refused without one (a lone surrogate escape), found by
    the standard library's parser: on the error path only, over one value, or a run of
    items from ``path[first]``."""
    try:
        value = _STRICT.decode(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None  # msgspec's own account stands
    if first is not None and isinstance(value, list):
        stack: list[tuple[Any, str]] = [(item, f"{path}[{first + i}]") for i, item in reversed(list(enumerate(value)))]
    else:
        stack = [(value, path)]
    while stack:
        v, where = stack.pop()
        if isinstance(v, dict):
            for k, item in reversed(list(v.items())):
                stack.append((item, f"{where}.{k}" if where else str(k)))
                stack.append((k, where))
        elif isinstance(v, list):
            stack.extend((item, f"{where}[{i}]") for i, item in reversed(list(enumerate(v))))
        elif isinstance(v, str) and not v.isascii():
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return BadInput(
                    file,
                    "string contains a lone surrogate (\\ud800-\\udfff escape without its pair; not valid Unicode)",
                    where=where if len(where) <= 120 else where[:117] + "...",
                )
    return None


def raw_items(run: Run) -> list[msgspec.Raw]:
    """A run's items checked as JSON and left undecoded."""
    return _RAW_ITEMS.decode(run.data)
