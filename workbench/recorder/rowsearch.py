"""Finding a span's rows in the span ring from outside the workload's threads.

The hot path records nothing about an open span but the span object itself (its sequence
number and start). Whether it has ended is in the ring: its end row (``base + kind``, with
its start) is appended at ``__exit__``. These helpers look for it without a lock and
without copying the ring: the active segment and the segments sealed after the span began
(a segment sealed before that cannot hold a later row), each searched by C calls
(an extended slice of the codes, ``array.index``), newest first.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

from workbench.recorder.capture import NAME_UNIT, PHASE, REQUEST, SEQ_UNIT, STEP

_WIDTH = 3  # code, a, b


def segments_since(ring: Any, since_ns: float) -> list[array]:
    """The ring's arrays that may hold rows appended at or after ``since_ns``, newest first.

    The active array is read before the sealed tuple: a seal in between then makes one
    array appear twice (harmless), never vanish."""
    active = ring.active
    sealed = ring._sealed
    out = [active]
    for seg in reversed(sealed):
        if seg.sealed_at_ns < since_ns:
            break
        if seg.values is not active:
            out.append(seg.values)
    return out


def _matches(values: array, code: float, start: float | None) -> Iterator[int]:
    """Row offsets (in values) whose code is ``code`` (and first value ``start``)."""
    codes = values[0::_WIDTH]  # one C call; the array may grow meanwhile, the slice does not
    i = -1
    while True:
        try:
            i = codes.index(code, i + 1)
        except ValueError:
            return
        at = i * _WIDTH
        if start is None or (at + 1 < len(values) and values[at + 1] == start):
            yield at


class EndSearch:
    """Whether the row ``code`` with first value ``start`` has been appended yet.

    Incremental: each array's scanned prefix is remembered (holding the array, so its id
    cannot be reused), and a later search looks only at rows appended since."""

    def __init__(self, code: float, start: float) -> None:
        self.code = code
        self.start = start
        self._scanned: dict[int, tuple[array, int]] = {}

    def find(self, ring: Any) -> float | None:
        """The row's second value (a span's or a phase's end), or ``None`` while it is absent."""
        arrays = segments_since(ring, self.start)
        seen: dict[int, tuple[array, int]] = {}
        for values in arrays:
            key = id(values)
            _, done = self._scanned.get(key, (values, 0))
            done -= done % _WIDTH
            end = len(values)
            end -= end % _WIDTH
            if end > done:
                for at in _matches(values[done:end], self.code, self.start):
                    return values[done + at + 2]
            seen[key] = (values, end)
        self._scanned = seen
        return None


def phases_done(ring: Any, seq: int, since_ns: float, names: list[str]) -> list[tuple[str, float, float]]:
    """The ended phases of span ``seq`` as ``(name, start, end)``, in the order they began."""
    lo, hi = seq * SEQ_UNIT, (seq + 1) * SEQ_UNIT
    found: list[tuple[str, float, float]] = []
    for values in segments_since(ring, since_ns):
        for at in range(0, len(values) - len(values) % _WIDTH, _WIDTH):
            code = values[at]
            if lo <= code < hi and int(code) % NAME_UNIT == PHASE:
                name_id = (int(code) % SEQ_UNIT) // NAME_UNIT
                name = names[name_id] if name_id < len(names) else "other"
                found.append((name, values[at + 1], values[at + 2]))
    found.sort(key=lambda p: p[1])
    return found


def last_closed(ring: Any) -> tuple[int, float] | None:
    """The newest step or request row in the ring: ``(seq, end)`` (``None`` when there is none)."""
    arrays = [ring.active, *(seg.values for seg in reversed(ring._sealed))]
    for values in arrays:
        codes = values[0::_WIDTH]
        for i in range(len(codes) - 1, -1, -1):
            code = int(codes[i])
            if code % NAME_UNIT in (STEP, REQUEST) and (code % SEQ_UNIT) // NAME_UNIT == 0:
                at = i * _WIDTH
                if at + 2 < len(values):
                    return code // SEQ_UNIT, values[at + 2]
    return None
