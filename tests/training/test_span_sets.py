"""Interval union and windowed lengths, checked against a brute-force timeline."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.training import span_sets as iv


def test_union_merges_overlapping_and_touching_and_remembers_the_opener():
    u = iv.union(np.array([10, 0, 5, 30, 20]), np.array([15, 5, 8, 40, 30]))
    assert u.starts.tolist() == [0, 10, 20]
    assert u.ends.tolist() == [8, 15, 40]
    assert u.first.tolist() == [1, 0, 4]  # input indices of the events that opened each interval
    assert u.total == 8 + 5 + 20


def test_empty_inputs():
    assert len(iv.union(np.array([]), np.array([]))) == 0
    assert iv.window_lengths(np.array([]), np.array([]), np.array([0]), np.array([10])).tolist() == [0.0]


def test_window_lengths_split_intervals_at_window_edges():
    # One interval spanning three windows, one outside every window.
    got = iv.window_lengths(np.array([5, 100]), np.array([35, 110]), np.array([0, 10, 30]), np.array([10, 20, 40]))
    assert got.tolist() == [5.0, 10.0, 5.0]


intervals = st.lists(st.tuples(st.integers(0, 200), st.integers(0, 40)), min_size=0, max_size=30)
windows = st.lists(st.integers(0, 260), min_size=2, max_size=10, unique=True)


@settings(max_examples=200, deadline=None)
@given(intervals, windows)
def test_union_window_lengths_match_a_brute_force_timeline(spans, edges):
    starts = np.array([s for s, _ in spans], dtype=np.int64)
    ends = np.array([s + d for s, d in spans], dtype=np.int64)
    edges = sorted(edges)
    w_starts, w_ends = np.array(edges[:-1]), np.array(edges[1:])
    covered = np.zeros(300, dtype=bool)
    summed = np.zeros(300)
    for s, e in zip(starts, ends):
        covered[s:e] = True
        summed[s:e] += 1
    u = iv.union(starts, ends)
    assert u.total == covered.sum()
    assert np.all(u.starts[1:] > u.ends[:-1])  # disjoint, not touching
    got_union = iv.union_window_lengths(u, w_starts, w_ends)
    got_sum = iv.window_lengths(starts, ends, w_starts, w_ends)
    for i, (a, b) in enumerate(zip(w_starts, w_ends)):
        assert got_union[i] == covered[a:b].sum()
        assert got_sum[i] == summed[a:b].sum()
