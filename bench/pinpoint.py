"""Pinpoint's bisection decision procedure, as a reference to run beside wb's (bench only).

Ported from catapult-project/catapult at 6fd8bbe72367 (2025-11-18),
``dashboard/dashboard/pinpoint/models/``; names follow the source:

- ``compare/compare.py`` ``Compare``: p = min(Kolmogorov–Smirnov p, Mann–Whitney U p)
  of two changes' values; **DIFFERENT** when p ≤ the low threshold, **SAME** when p > the
  high threshold, **UNKNOWN** in between. Since catapult b72ed66dc / e9703661f (2024)
  a job that has benchmark arguments (every bisect from the dashboard: ``job.py`` calls
  ``Explore(self.benchmark_arguments, ...)``) uses low = max(0.01, 0.05) and
  high = max(table, 0.10) (``_MIN_LOW_THRESHOLDS_FUNCTIONAL``,
  ``_MIN_HIGH_THRESHOLDS_FUNCTIONAL``): ``RULES["2024"]``; before, low 0.01 and the table's
  high threshold: ``RULES["2018"]``.
- ``compare/thresholds.py``: the high threshold by magnitude (in interquartile ranges,
  0.3 to 4.0) and sample size, a table simulated for a 1 % false-negative rate
  (``bench/data/pinpoint_thresholds.json``, read from that file); the low threshold 0.01.
- ``compare/mann_whitney_u.py``, ``compare/kolmogorov_smirnov.py``: their pure-Python
  tests (normal approximation; the asymptotic Kolmogorov distribution).
- ``job_state.py``: every change starts with ``MIN_ATTEMPTS`` = 10 attempts; ``Explore``
  compares every adjacent pair of changes: DIFFERENT inserts their midpoint (and, when
  they are adjacent commits, they are a culprit: ``Differences``); UNKNOWN adds attempts
  to the change(s) of the pair with fewer attempts, doubling them (``AddAttempts``), up
  to ``MAX_ATTEMPTS`` = 160; SAME does nothing. In performance mode the magnitude is the
  expected change over the larger IQR of the two (1.0 when not given), and a difference
  in the improvement direction is SAME. ``MAX_BUILDS`` = 60 changes.
- ``exploration.py`` ``Speculate`` (``levels`` = 1) and ``change/commit.py``
  ``Midpoint``: the commit at ``a + (b - a) // 2``, none when a and b are adjacent.
- ``dashboard/common/math_utils.py`` ``Iqr``: quartiles interpolated with C = 1/2.

Checked against Pinpoint's own tests (``compare_test.py``, ``mann_whitney_u_test.py``,
``kolmogorov_smirnov_test.py``, ``thresholds_test.py``, ``exploration_test.py``,
``job_state_test.py``) in ``tests/stats/test_pinpoint_reference.py``.
"""

from __future__ import annotations

import bisect as bisect_module
import functools
import itertools
import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

DIFFERENT, SAME, UNKNOWN = "different", "same", "unknown"
MIN_ATTEMPTS, MAX_ATTEMPTS, MAX_BUILDS = 10, 160, 60
THRESHOLDS = Path(__file__).resolve().parent / "data" / "pinpoint_thresholds.json"


@dataclass(frozen=True)
class Rule:
    """Compare's thresholds: the low one, and floors under both (the 2024 rule)."""

    min_low: float
    min_high: float


RULES = {"2018": Rule(0.0, 0.0), "2024": Rule(0.05, 0.10)}


# -- compare/mann_whitney_u.py, compare/kolmogorov_smirnov.py ---------------------------


def mann_whitney_u(x: Sequence[float], y: Sequence[float]) -> float:
    n1, n2 = len(x), len(y)
    ranked = _rank_data(list(x) + list(y))
    rankx = ranked[0:n1]
    u1 = n1 * n2 + n1 * (n1 + 1) / 2.0 - sum(rankx)
    u2 = n1 * n2 - u1
    t = _tie_correction_factor(ranked)
    if t == 0:
        return 1.0
    sd = math.sqrt(t * n1 * n2 * (n1 + n2 + 1) / 12.0)
    mean_rank = n1 * n2 / 2.0 + 0.5
    big_u = max(u1, u2)
    z = (big_u - mean_rank) / sd
    return 2 * _norm_sf(abs(z))


def _rank_data(a: list[float]) -> list[float]:
    sorter = list(reversed(sorted(range(len(a)), key=a.__getitem__, reverse=True)))
    ranked_min = [0] * len(sorter)
    for i, j in reversed(list(enumerate(sorter))):
        ranked_min[j] = i
    sorter = sorted(range(len(a)), key=a.__getitem__)
    ranked_max = [0] * len(sorter)
    for i, j in enumerate(sorter):
        ranked_max[j] = i
    return [1 + (x + y) / 2.0 for x, y in zip(ranked_min, ranked_max)]


def _tie_correction_factor(rankvals: list[float]) -> float:
    arr = sorted(rankvals)
    cnt = [len(list(group)) for _, group in itertools.groupby(arr)]
    size = len(arr)
    if size < 2:
        return 1.0
    return 1.0 - sum(x**3 - x for x in cnt) / float(size**3 - size)


def _norm_sf(x: float) -> float:
    return (1 - math.erf(x / math.sqrt(2))) / 2


def kolmogorov_smirnov(x: Sequence[float], y: Sequence[float]) -> float:
    n1, n2 = len(x), len(y)
    xs, ys = sorted(x), sorted(y)
    data_all = xs + ys
    cdf1 = [bisect_module.bisect(xs, value) / float(n1) for value in data_all]
    cdf2 = [bisect_module.bisect(ys, value) / float(n2) for value in data_all]
    d = max(math.fabs(a - b) for a, b in zip(cdf1, cdf2))
    en = math.sqrt(n1 * n2 / float(n1 + n2))
    return _kolmogorov((en + 0.12 + 0.11 / en) * d)


def _kolmogorov(y: float) -> float:
    if y < 1.1e-16:
        return 1.0
    x = -2.0 * y * y
    sign, p, r = 1.0, 0.0, 1.0
    while True:
        t = math.exp(x * r * r)
        p += sign * t
        if t == 0.0:
            break
        r += 1.0
        sign = -sign
        if t / p <= 1.1e-16:
            break
    return p + p


# -- compare/thresholds.py, compare/compare.py -------------------------------------------


@lru_cache(maxsize=1)
def _tables() -> dict[str, list[list[float]]]:
    doc = json.loads(THRESHOLDS.read_text())
    return {"performance": doc["performance"], "functional": doc["functional"]}


def high_threshold(mode: str, magnitude: float, sample_size: int) -> float:
    if mode == "functional":
        magnitude_index = int(magnitude * 10) - 1
    elif mode == "performance":
        magnitude_index = int(magnitude * 10) - 3
    else:
        raise NotImplementedError(mode)
    thresholds = _tables()[mode]
    magnitude_index = min(max(magnitude_index, 0), len(thresholds) - 1)
    sample_size_index = min(sample_size, len(thresholds[magnitude_index])) - 1
    return thresholds[magnitude_index][sample_size_index]


LOW_THRESHOLD = 0.01


@dataclass(frozen=True)
class Comparison:
    result: str
    p_value: float | None
    low_threshold: float
    high_threshold: float


def compare(
    values_a: Sequence[float],
    values_b: Sequence[float],
    attempt_count: int,
    mode: str,
    magnitude: float,
    rule: Rule = RULES["2024"],
) -> Comparison:
    low = max(LOW_THRESHOLD, rule.min_low)
    high = max(high_threshold(mode, magnitude, attempt_count), rule.min_high)
    if not (len(values_a) > 0 and len(values_b) > 0):
        return Comparison(UNKNOWN, None, low, high)
    p_value = min(kolmogorov_smirnov(values_a, values_b), mann_whitney_u(values_a, values_b))
    if p_value <= low:
        return Comparison(DIFFERENT, p_value, low, high)
    if p_value <= high:
        return Comparison(UNKNOWN, p_value, low, high)
    return Comparison(SAME, p_value, low, high)


def iqr(values: Sequence[float]) -> float:
    return percentile(values, 0.75) - percentile(values, 0.25)


def percentile(values: Sequence[float], q: float) -> float:
    v = sorted(values)
    index = float(len(v)) * q - 0.5
    floor, ceil = max(math.floor(index), 0), min(math.ceil(index), len(v) - 1)
    if floor == ceil:
        return v[int(index)]
    return v[int(floor)] * (ceil - index) + v[int(ceil)] * (index - floor)


# -- exploration.py, change/commit.py ------------------------------------------------------


def midpoint(a: int, b: int) -> int | None:
    """``Commit.Midpoint`` on commits numbered in order: the one before the middle of an even range."""
    offset = (b - a) // 2
    return None if offset == 0 else a + offset


def speculate(
    changes: list[int],
    change_detected: Callable[[int, int], bool | None],
    on_unknown: Callable[[int, int], None],
    find_midpoint: Callable[[int, int], int | None] = midpoint,
    levels: int = 1,
) -> list[tuple[int, int]]:
    """(insertion index, change) pairs to insert, in an order that keeps ``changes`` sorted."""
    if not changes:
        return []
    additional: list[tuple[int, int]] = []

    def infix(a: int, b: int, depth: int, callback: Callable[[int], None]) -> None:
        if depth == 0:
            return
        m = find_midpoint(a, b)
        if m is None:
            return
        infix(a, m, depth - 1, callback)
        callback(m)
        infix(m, b, depth - 1, callback)

    def speculator(pair_a: tuple[int, int], pair_b: tuple[int, int]) -> tuple[int, int]:
        _, change_a = pair_a
        index_b, change_b = pair_b
        result = change_detected(change_a, change_b)
        if result is None:
            on_unknown(change_a, change_b)
        elif result:
            accumulated: list[int] = []

            def inserter(change: int) -> None:
                if change not in accumulated and change not in changes:
                    accumulated.append(change)
                    additional.append((index_b, change))

            infix(change_a, change_b, levels, inserter)
        return pair_b

    functools.reduce(speculator, enumerate(changes))
    return list(reversed(additional))


# -- job_state.py ------------------------------------------------------------------------------


@dataclass
class Job:
    """A performance bisect over commits 0 .. n−1 (0 good, n−1 bad), lower values better.

    ``run(change)`` gives one attempt's value; ``magnitude``: the expected change in the
    metric's units (an alert's delta), None for 1.0 interquartile range."""

    commits: int
    run: Callable[[int], float]
    magnitude: float | None = None
    improvement_down: bool = True  # anomaly.DOWN: lower is better
    rule: Rule = RULES["2024"]
    initial_attempts: int = MIN_ATTEMPTS
    shuffle: Callable[[list[int]], None] | None = None  # the order a batch of attempts runs in
    changes: list[int] = field(default_factory=list)
    attempts: dict[int, list[float]] = field(default_factory=dict)
    pending: list[int] = field(default_factory=list)

    def add_attempts(self, change: int) -> None:
        current = max(len(self.attempts[change]) + self.pending.count(change), self.initial_attempts)
        self.pending += [change] * current

    def add_change(self, change: int, index: int | None = None) -> None:
        if index:
            self.changes.insert(index, change)
        else:
            self.changes.append(change)
        self.attempts[change] = []
        self.add_attempts(change)
        if len(self.changes) > MAX_BUILDS:
            raise RuntimeError(f"Bisected max number of times: {MAX_BUILDS}")

    def schedule_work(self) -> bool:
        """Run the pending attempts (in the order ``shuffle`` leaves them); False when none were."""
        if not self.pending:
            return False
        batch, self.pending = self.pending, []
        if self.shuffle is not None:
            self.shuffle(batch)
        for change in batch:
            self.attempts[change].append(self.run(change))
        return True

    def compare_changes(self, a: int, b: int) -> str:
        values_a, values_b = self.attempts[a], self.attempts[b]
        if not values_a or not values_b:
            return UNKNOWN
        if self.magnitude:
            max_iqr = max(max(iqr(values_a), iqr(values_b)), 0.001)
            magnitude = abs(self.magnitude / max_iqr)
        else:
            magnitude = 1.0
        sample_count = (len(values_a) + len(values_b)) // 2
        mean_diff = sum(values_b) / len(values_b) - sum(values_a) / len(values_a)
        if mean_diff < 0 and self.improvement_down:
            return SAME
        return compare(values_a, values_b, sample_count, "performance", magnitude, self.rule).result

    def explore(self) -> None:
        refine: set[int] = set()

        def detect(a: int, b: int) -> bool | None:
            c = self.compare_changes(a, b)
            return None if c == UNKNOWN else c == DIFFERENT

        def collect(a: int, b: int) -> None:
            na, nb = len(self.attempts[a]), len(self.attempts[b])
            if na <= nb and na < MAX_ATTEMPTS:
                refine.add(a)
            if nb <= na and nb < MAX_ATTEMPTS:
                refine.add(b)

        additional = speculate(self.changes, detect, collect)
        for change in sorted(refine):
            self.add_attempts(change)
        for index, change in additional:
            self.add_change(change, index)

    def differences(self) -> list[tuple[int, int]]:
        return [(a, b) for a, b in zip(self.changes, self.changes[1:]) if self.compare_changes(a, b) == DIFFERENT]

    def runs(self) -> int:
        return sum(len(v) for v in self.attempts.values())


def bisect(job: Job) -> Iterator[Job]:
    """Start with the good and bad commits, then explore until no work is left (yields each round)."""
    job.add_change(0)
    job.add_change(job.commits - 1)
    while job.schedule_work():
        job.explore()
        yield job
