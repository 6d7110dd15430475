"""Ranks as a dimension of a training run: per-rank step time and phases, the rank that
is slowest per step and how often, and which ranks moved most between two runs.

Everything here is computed from the run's ``samples`` (one row per step and rank), so
runs stored before it read the same way, and with array operations only: a 1,024-rank
job is a few thousand rows a step, never a Python loop over rows.

A rank's figures are descriptive: its steps are not independent samples, so no
interval is drawn from them, and a rank that is slow is an observation, not a cause.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The per-rank measures: the step, and the two phases a straggler trades between
# (its own compute is longer; the others wait for it in exposed communication).
MEASURES = ("step_ms", "compute_ms", "communication_ms", "input_ms")
MOVED_MIN_MS = 1e-6  # below a nanosecond an offset has not moved (float noise, not a change)


def rank_table(samples: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One row per rank: steps seen, the mean of each measure (NaN: unknown), and in how
    many steps it was the slowest rank."""
    rank = np.asarray(samples.get("rank", np.zeros(0)), dtype=np.float64)
    known = np.isfinite(rank)
    ranks, inverse = np.unique(rank[known], return_inverse=True)
    out: dict[str, np.ndarray] = {"rank": ranks, "steps": np.bincount(inverse, minlength=len(ranks)).astype(np.float64)}
    for measure in MEASURES:
        values = np.asarray(samples.get(measure, np.full(len(rank), np.nan)), dtype=np.float64)[known]
        finite = np.isfinite(values)
        n = np.bincount(inverse[finite], minlength=len(ranks))
        sums = np.bincount(inverse[finite], weights=values[finite], minlength=len(ranks))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"{measure}_mean"] = np.where(n > 0, sums / np.maximum(n, 1), np.nan)
    slow = slowest_per_step(samples)
    counts = (
        {float(r): int(c) for r, c in zip(*np.unique(slow["rank"], return_counts=True))} if len(slow["rank"]) else {}
    )
    out["slowest_steps"] = np.array([counts.get(float(r), 0) for r in ranks], dtype=np.float64)
    return out


def slowest_per_step(samples: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per step with two or more ranks timed: the slowest rank, its step time, and the
    median rank's (so the margin is against the typical rank, not the runner-up)."""
    step = np.asarray(samples.get("step", np.zeros(0)), dtype=np.float64)
    rank = np.asarray(samples.get("rank", np.zeros(len(step))), dtype=np.float64)
    ms = np.asarray(samples.get("step_ms", np.full(len(step), np.nan)), dtype=np.float64)
    ok = np.isfinite(step) & np.isfinite(rank) & np.isfinite(ms)
    step, rank, ms = step[ok], rank[ok], ms[ok]
    empty = {k: np.zeros(0) for k in ("step", "rank", "step_ms", "median_step_ms")}
    if not len(step):
        return empty
    order = np.lexsort((rank, -ms, step))  # per step, slowest first (ties: lowest rank)
    step, rank, ms = step[order], rank[order], ms[order]
    starts = np.flatnonzero(np.r_[True, step[1:] != step[:-1]])
    sizes = np.diff(np.r_[starts, len(step)])
    medians = np.array([float(np.median(ms[s : s + n])) for s, n in zip(starts, sizes)])  # one per step, not per row
    keep = sizes >= 2
    return {
        "step": step[starts][keep],
        "rank": rank[starts][keep],
        "step_ms": ms[starts][keep],
        "median_step_ms": medians[keep],
    }


@dataclass(frozen=True)
class SlowestRank:
    """The rank that is slowest in most steps, by how much, in which steps."""

    rank: int
    steps_slowest: int
    steps_compared: int
    margin_ms_median: float  # its step time minus the median rank's, median over the steps it was slowest
    median_step_ms: float
    steps: tuple[float, ...]


def slowest_rank(samples: dict[str, np.ndarray]) -> SlowestRank | None:
    slow = slowest_per_step(samples)
    if not len(slow["rank"]):
        return None
    ranks, counts = np.unique(slow["rank"], return_counts=True)
    best = int(np.argmax(counts))  # ties: the lowest rank (np.unique sorts)
    leader = slow["rank"] == ranks[best]
    return SlowestRank(
        rank=int(ranks[best]),
        steps_slowest=int(counts[best]),
        steps_compared=len(slow["rank"]),
        margin_ms_median=float(np.median(slow["step_ms"][leader] - slow["median_step_ms"][leader])),
        median_step_ms=float(np.median(slow["median_step_ms"])),
        steps=tuple(float(s) for s in slow["step"][leader]),
    )


@dataclass(frozen=True)
class RankMove:
    """One rank's offset from its run's median rank, baseline against candidate, in the
    measure where it moved most (``moved_ms`` = candidate offset - baseline offset)."""

    rank: int
    measure: str
    baseline_offset_ms: float
    candidate_offset_ms: float
    moved_ms: float


def ranks_moved(
    base: list[dict[str, np.ndarray]], cand: list[dict[str, np.ndarray]], top: int
) -> tuple[list[RankMove], int]:
    """The ``top`` ranks whose offset from the median rank changed most between the sides
    (each side: the mean over its runs of the rank's offset), and how many ranks both
    sides share. Offsets, not raw times: a change that moves every rank alike (a slower
    kernel everywhere) moves no rank; a straggler moves its own compute and, in the
    others, their waiting."""
    sides = [_offsets([rank_table(s) for s in runs]) for runs in (base, cand)]
    shared = sorted(set(sides[0]) & set(sides[1]))
    moves = []
    for r in shared:
        b, c = sides[0][r], sides[1][r]
        deltas = {m: c[m] - b[m] for m in MEASURES if np.isfinite(b[m]) and np.isfinite(c[m])}
        if not deltas:
            continue
        measure = max(deltas, key=lambda m: (abs(deltas[m]), -MEASURES.index(m)))
        moves.append(
            RankMove(
                rank=int(r),
                measure=measure,
                baseline_offset_ms=float(b[measure]),
                candidate_offset_ms=float(c[measure]),
                moved_ms=float(deltas[measure]),
            )
        )
    moves = [m for m in moves if abs(m.moved_ms) >= MOVED_MIN_MS]  # a rank that kept its place did not move
    moves.sort(key=lambda m: (-abs(m.moved_ms), m.rank))
    return moves[:top], len(shared)


def _offsets(tables: list[dict[str, np.ndarray]]) -> dict[float, dict[str, float]]:
    """Per rank, per measure: its mean minus the median rank's mean, averaged over the side's runs."""
    acc: dict[float, dict[str, list[float]]] = {}
    for t in tables:
        if len(t["rank"]) < 2:
            continue  # one rank has no median rank to differ from
        for m in MEASURES:
            col = t[f"{m}_mean"]
            if not np.isfinite(col).any():
                continue
            offset = col - float(np.nanmedian(col))
            for r, v in zip(t["rank"].tolist(), offset.tolist()):
                acc.setdefault(r, {}).setdefault(m, []).append(v)
    return {
        r: {m: float(np.mean(vs[m])) if m in vs and np.isfinite(vs[m]).all() else float("nan") for m in MEASURES}
        for r, vs in acc.items()
    }
