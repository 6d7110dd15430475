"""A bounded ring of sealed segments: the recorder's memory, trimmed by bytes and age.

Records are fixed-width rows of float64 appended to the *active* segment, an
``array('d')``. One ``fromlist`` call appends a whole row, and under the GIL that C call
is atomic, so writers take no lock. Sealing swaps in a fresh active segment under a lock
and rebuilds the tuple of kept segments, oldest dropped first until the bytes fit the
budget and nothing kept is older than the age budget (the design of Go's
``runtime/trace`` flight recorder: sealed generations, a byte and an age limit).

A snapshot seals the active segment and takes the tuple of sealed segments: copying a
reference. It then reads those segments outside any lock; the ring keeps going.

Byte accounting uses each segment's real allocation (``sys.getsizeof``) and reserves the
active segment's full size, so memory stays at the budget however long the process runs.
A writer that loaded the old active segment just before a seal may append one row to it
after sealing: the row is kept (it is in a kept segment) and at most one row per seal is
missing from that segment's byte count.
"""

from __future__ import annotations

import sys
import threading
from array import array
from dataclasses import dataclass

# array('d') over-allocates by about 1/16 as it grows; reserve that for the active segment.
_GROWTH = 1.0 + 1.0 / 16
_ARRAY_HEADER = sys.getsizeof(array("d"))


@dataclass(frozen=True)
class Segment:
    """Sealed rows (flat, ``width`` values per row) and when it was sealed (ring clock, ns)."""

    values: array
    rows: int
    nbytes: int
    sealed_at_ns: float


@dataclass(frozen=True)
class RingView:
    """What a snapshot reads: the kept segments, oldest first, and the ring's counters."""

    name: str
    fields: tuple[str, ...]
    segments: tuple[Segment, ...]
    evicted_segments: int
    evicted_rows: int

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.segments)

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for s in self.segments)


class SegmentRing:
    """Rows of ``len(fields)`` float64 values, bounded by ``max_bytes`` and ``max_age_ns``.

    Writers call ``ring.append([v0, v1, ...])`` (exactly ``width`` values) and, from time
    to time, ``ring.maybe_seal(now_ns)``; ``now_ns`` is the caller's clock (the recorder's
    clock relative to its start), the same one used for the age budget.
    """

    def __init__(
        self,
        name: str,
        fields: tuple[str, ...],
        *,
        max_bytes: int,
        max_age_ns: float | None,
        segment_rows: int,
        seal_every_ns: float | None,
        now_ns: float = 0.0,
    ) -> None:
        if max_bytes <= 0:
            raise ValueError(f"{name}: max_bytes must be positive")
        self.name = name
        self.fields = tuple(fields)
        self.width = len(self.fields)
        self.max_bytes = int(max_bytes)
        self.max_age_ns = max_age_ns
        # A segment is at most 1/16 of the budget, so trimming by whole segments stays
        # within ~6 % of it and the newest sealed segment always fits.
        most_rows = max(1, int(self.max_bytes / 16 / (8 * self.width * _GROWTH)))
        self.segment_rows = max(1, min(int(segment_rows), most_rows))
        self.segment_values = self.segment_rows * self.width
        self.seal_every_ns = seal_every_ns
        self._active_reserve = int(_ARRAY_HEADER + self.segment_values * 8 * _GROWTH)
        self._lock = threading.Lock()
        self._sealed: tuple[Segment, ...] = ()
        self._sealed_bytes = 0
        self.evicted_segments = 0
        self.evicted_rows = 0
        self._open(now_ns)

    # -- writing ---------------------------------------------------------------------

    def _open(self, now_ns: float) -> None:
        self.active = array("d")
        # Bound method of the active array: the whole hot path is one C call.
        self.append = self.active.fromlist
        self.opened_at_ns = now_ns

    def full(self) -> bool:
        return len(self.active) >= self.segment_values

    def maybe_seal(self, now_ns: float) -> None:
        """Seal when the active segment is full or older than ``seal_every_ns``."""
        if len(self.active) >= self.segment_values or (
            self.seal_every_ns is not None and self.active and now_ns - self.opened_at_ns >= self.seal_every_ns
        ):
            self.seal(now_ns)
        elif self.max_age_ns is not None and self._sealed and (now_ns - self._sealed[0].sealed_at_ns > self.max_age_ns):
            with self._lock:
                self._keep(self._sealed, now_ns)

    def seal(self, now_ns: float) -> None:
        with self._lock:
            values = self.active
            rows = len(values) // self.width
            self._open(now_ns)
            kept = self._sealed
            if rows:
                kept = kept + (Segment(values, rows, sys.getsizeof(values), now_ns),)
            self._keep(kept, now_ns)

    def _keep(self, kept: tuple[Segment, ...], now_ns: float) -> None:
        """Drop the oldest segments until the byte and age budgets hold (lock held)."""
        total = sum(s.nbytes for s in kept)
        room = self.max_bytes - self._active_reserve
        drop = 0
        while drop < len(kept) and (
            total > room or (self.max_age_ns is not None and now_ns - kept[drop].sealed_at_ns > self.max_age_ns)
        ):
            total -= kept[drop].nbytes
            self.evicted_rows += kept[drop].rows
            drop += 1
        self.evicted_segments += drop
        self._sealed = kept[drop:]
        self._sealed_bytes = total

    # -- reading ---------------------------------------------------------------------

    def view(self, now_ns: float) -> RingView:
        """Seal the active segment and return the kept segments (references, no copy)."""
        self.seal(now_ns)
        with self._lock:
            return RingView(self.name, self.fields, self._sealed, self.evicted_segments, self.evicted_rows)

    @property
    def retained_bytes(self) -> int:
        """Bytes the ring holds now: sealed segments plus the active one's allocation."""
        return self._sealed_bytes + sys.getsizeof(self.active)

    def counters(self) -> dict[str, int]:
        return {
            "max_bytes": self.max_bytes,
            "retained_bytes": self.retained_bytes,
            "retained_segments": len(self._sealed) + (1 if self.active else 0),
            "evicted_segments": self.evicted_segments,
            "evicted_records": self.evicted_rows,
        }

    def reset(self, now_ns: float) -> None:
        """Forget everything (a forked child starts with an empty ring and a fresh lock)."""
        self._lock = threading.Lock()
        self._sealed = ()
        self._sealed_bytes = 0
        self.evicted_segments = 0
        self.evicted_rows = 0
        self._open(now_ns)
