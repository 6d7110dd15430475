"""Interval arithmetic on integer-nanosecond arrays, vectorized and O(n log n).

Everything the training breakdown needs reduces to two operations: the union of a
set of intervals (sort once, merge with a running maximum of ends) and the length of
a set of intervals falling inside each of many disjoint windows (split at window
edges, then ``bincount``). Intersections and differences come from inclusion and
exclusion over unions: ``|A ∩ B| = |A| + |B| - |A ∪ B|`` and ``|A \\ B| = |A ∪ B| - |B|``.

Times are int64 nanoseconds; lengths come back as float64 nanoseconds (exact below
2^53 ns, about 104 days).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_EMPTY = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class Union:
    """Disjoint, sorted intervals ``[starts[i], ends[i])``.

    ``first`` is, for each merged interval, the index (into the input arrays) of the
    event that opened it: the event that ended the GPU's idle gap before it.
    """

    starts: np.ndarray
    ends: np.ndarray
    first: np.ndarray

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def total(self) -> int:
        return int((self.ends - self.starts).sum())


def union(starts: np.ndarray, ends: np.ndarray) -> Union:
    """Merge possibly overlapping intervals into disjoint ones (touching ones merge)."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    if len(starts) == 0:
        return Union(_EMPTY, _EMPTY, _EMPTY)
    order = np.argsort(starts, kind="stable")
    s = starts[order]
    run_end = np.maximum.accumulate(ends[order])
    opens = np.empty(len(s), dtype=bool)
    opens[0] = True
    opens[1:] = s[1:] > run_end[:-1]
    first = np.flatnonzero(opens)
    last = np.append(first[1:] - 1, len(s) - 1)
    return Union(s[first], run_end[last], order[first])


def union_of(*parts: Union) -> Union:
    """The union of several unions (``first`` is not meaningful on the result)."""
    starts = np.concatenate([p.starts for p in parts]) if parts else _EMPTY
    ends = np.concatenate([p.ends for p in parts]) if parts else _EMPTY
    return union(starts, ends)


def window_lengths(starts: np.ndarray, ends: np.ndarray, win_starts: np.ndarray, win_ends: np.ndarray) -> np.ndarray:
    """For each window, the summed length of the intervals' parts inside it.

    Windows must be sorted and disjoint; intervals may overlap each other (their
    overlap is then counted twice, as a sum should). An interval spanning several
    windows is split at the window edges.
    """
    win_starts = np.asarray(win_starts, dtype=np.int64)
    win_ends = np.asarray(win_ends, dtype=np.int64)
    n_win = len(win_starts)
    if n_win == 0:
        return np.zeros(0)
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    if len(starts) == 0:
        return np.zeros(n_win)
    first = np.searchsorted(win_ends, starts, side="right")  # first window ending after the start
    last = np.searchsorted(win_starts, ends, side="left") - 1  # last window starting before the end
    count = np.maximum(last - first + 1, 0)
    total = int(count.sum())
    if total == 0:
        return np.zeros(n_win)
    which = np.repeat(np.arange(len(starts)), count)
    offset = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    window = np.repeat(first, count) + offset
    lo = np.maximum(starts[which], win_starts[window])
    hi = np.minimum(ends[which], win_ends[window])
    return np.bincount(window, weights=np.maximum(hi - lo, 0).astype(np.float64), minlength=n_win)


def union_window_lengths(u: Union, win_starts: np.ndarray, win_ends: np.ndarray) -> np.ndarray:
    return window_lengths(u.starts, u.ends, win_starts, win_ends)


def gaps(u: Union) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The idle gaps between consecutive merged intervals: (starts, ends, index of the next interval)."""
    if len(u) < 2:
        return _EMPTY, _EMPTY, _EMPTY
    return u.ends[:-1], u.starts[1:], np.arange(1, len(u))
