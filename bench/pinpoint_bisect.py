"""wb's bisect search beside Pinpoint's, on the same simulated commit histories.

    .venv/bin/python bench/pinpoint_bisect.py [--histories 200] [--commits 64] [--seed 1] [--markdown]

A history is ``--commits`` commits with one culprit at a random place; every commit from
the culprit on is slower by the effect (1, 2, 5 or 10 %). Each run's value is a real
recorded run time (``bench/data/aa_run_times.json``, the A/A bench's recording) times its
commit's factor: both searches draw from one machine, a stream of consecutive recorded
runs of one workload (so slow stretches and drift come along), each from its own random
place in the recording.

- **wb**: the search of ``wb bisect`` (``workbench.bisect.bisection.walk``: the endpoint
  check, midpoints, ``classify``), each step a sequential rerun of A (the reference), B
  (the candidate) and A′ in rounds of random order, looked at after every round from 3
  (``workbench.stats.sequential.look``), up to ``--max-rounds``; δ is half the effect
  sought (what a user who expects a 5 % regression asks for: anything beyond 2.5 %).
- **Pinpoint**: ``bench/pinpoint.py`` (job_state/compare/exploration as published),
  10 attempts per change doubling to 160 on "unknown", the alert's magnitude (the effect
  in the metric's units), lower is better; the 2024 thresholds (low 0.05, high ≥ 0.10)
  that every dashboard bisect uses since catapult e9703661f, and the 2018 ones (low 0.01).

Reported per workload and effect: the share of histories where each names the culprit,
names a wrong commit, or names none (wb: no regression found, or a range of skipped
candidates that holds it), and the runs each spent (wb: 3 per round per step; Pinpoint:
one per attempt). Builds are not counted for either.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pinpoint
from aa_sessions import DATA, Cell, load_cells, noise_floor

from workbench.bisect.bisection import Search, walk
from workbench.bisect.classify import GOOD, UNDECIDED, UNTESTED, classify
from workbench.bisect.result import CandidateState, Spec, Step
from workbench.stats.sequential import CONTINUE, SequentialDesign, look

EFFECTS = (0.01, 0.02, 0.05, 0.10)


class Machine:
    """One bench machine: consecutive recorded runs from a random place, normalised to the
    cell's median (so an effect is a share of the time), times the commit's factor."""

    def __init__(self, cell: Cell, rng: np.random.Generator) -> None:
        self.chunks = [c[~np.isnan(c)] for c in cell.chunks]
        self.median = float(np.median(np.concatenate(self.chunks)))
        self.rng = rng
        self._jump()
        self.runs = 0

    def _jump(self) -> None:
        self.chunk = self.chunks[self.rng.integers(len(self.chunks))]
        self.at = int(self.rng.integers(len(self.chunk)))

    def run(self, factor: float) -> float:
        if self.at >= len(self.chunk):
            self._jump()
        value = self.chunk[self.at] / self.median * factor
        self.at += 1
        self.runs += 1
        return float(value)


@dataclass(frozen=True)
class History:
    commits: int
    culprit: int
    effect: float

    def factor(self, commit: int) -> float:
        return 1.0 + self.effect if commit >= self.culprit else 1.0


def wb_bisect(history: History, machine: Machine, *, delta: float, max_rounds: int) -> tuple[str, int | None]:
    """wb's search over the history: (outcome, the commit it names first bad or None)."""
    spec = Spec(name="sim", bench=("bench",), workdir="", delta=delta, max_rounds=max_rounds)
    n = history.commits
    candidates = [CandidateState(rev=f"{i:06d}", title="", status=GOOD if i == 0 else UNTESTED) for i in range(n)]
    search = Search(candidates, lo=0, hi=n - 1, reference=0)
    design = SequentialDesign(max_rounds)

    def measure(ref_i: int, cand_i: int, endpoint: bool) -> Step:
        d: list[float] = []
        d_aa: list[float] = []
        lk = None
        for _ in range(max_rounds):
            arms = {}
            for arm in machine.rng.permutation(["A", "B", "A'"]):
                arms[arm] = machine.run(history.factor(cand_i if arm == "B" else ref_i))
            d.append(math.log(arms["B"] / arms["A"]))
            d_aa.append(math.log(arms["A'"] / arms["A"]))
            lk = look(design, d, delta, d_aa)
            if lk.decision != CONTINUE:
                break
        assert lk is not None
        verdict = None if lk.decision == CONTINUE else lk.decision
        ci = (lk.low95, lk.high95) if math.isfinite(lk.low95) and math.isfinite(lk.high95) else None
        klass = UNDECIDED
        if not endpoint:
            assert search.endpoint is not None and search.endpoint.ratio is not None
            klass = classify(verdict, ci or (math.nan, math.nan), search.endpoint.ratio)
        return Step(
            step=len(search.steps) + 1,
            endpoint=endpoint,
            reference=ref_i,
            candidate=cand_i,
            rev=candidates[cand_i].rev,
            against=candidates[ref_i].rev,
            verdict=verdict,
            ratio=lk.ratio if math.isfinite(lk.ratio) else None,
            ci95=ci,
            rounds_used=len(d),
            **({} if endpoint else {"klass": klass}),
        )

    walk(spec, search, measure, lambda status: None)
    result = search.result
    assert result is not None
    if result.outcome == "found" and isinstance(result.first_bad, str):
        return "found", int(result.first_bad)
    return result.outcome, None


def pinpoint_bisect(history: History, machine: Machine, *, rule: str) -> tuple[str, int | None]:
    job = pinpoint.Job(
        history.commits,
        run=lambda c: machine.run(history.factor(c)),
        magnitude=history.effect,  # the alert's delta, in units of the (normalised) metric
        rule=pinpoint.RULES[rule],
        shuffle=lambda batch: machine.rng.shuffle(batch),
    )
    try:
        for _ in pinpoint.bisect(job):
            pass
    except RuntimeError:  # MAX_BUILDS
        return "max-builds", None
    culprits = [b for a, b in job.differences() if b - a == 1]
    if len(culprits) == 1:
        return "found", culprits[0]
    return ("several" if culprits else "none"), None


@dataclass
class Tally:
    right: int = 0
    wrong: int = 0
    none: int = 0
    runs: int = 0
    n: int = 0

    def add(self, outcome: tuple[str, int | None], culprit: int, runs: int) -> None:
        self.n += 1
        self.runs += runs
        kind, named = outcome
        if named is None:
            self.wrong += kind == "several"
            self.none += kind != "several"
        elif named == culprit:
            self.right += 1
        else:
            self.wrong += 1

    def text(self) -> str:
        return (
            f"{self.right / self.n:.3f} / {self.wrong / self.n:.3f} / {self.none / self.n:.3f}, "
            f"{self.runs / self.n:.0f} runs"
        )


def compare_searches(
    cell: Cell, effect: float, *, histories: int, commits: int, seed: int, max_rounds: int
) -> dict[str, Tally]:
    rng = np.random.default_rng([seed, int(effect * 1000)])
    tallies = {"wb": Tally(), "pinpoint 2024": Tally(), "pinpoint 2018": Tally()}
    for _ in range(histories):
        history = History(commits, int(rng.integers(1, commits)), effect)
        for name, tally in tallies.items():
            machine = Machine(cell, np.random.default_rng(rng.integers(1 << 62)))
            if name == "wb":
                outcome = wb_bisect(history, machine, delta=effect / 2, max_rounds=max_rounds)
            else:
                outcome = pinpoint_bisect(history, machine, rule=name.split()[1])
            tally.add(outcome, history.culprit, machine.runs)
    return tallies


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--histories", type=int, default=200)
    ap.add_argument("--commits", type=int, default=64)
    ap.add_argument("--max-rounds", type=int, default=20)
    ap.add_argument(
        "--noise",
        default="sleep:2,cpu:2,sleep:99",
        help="noise sources: WORKLOAD:MAX_LOAD (recorded chunks of the workload, no background load of ours, "
        "started at that 1-minute load average or less)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    cells = {(c.workload, c.load): c for c in load_cells(args.data)}
    head = ("noise from", "effect", "wb: right / wrong / none, runs", "Pinpoint 2024", "Pinpoint 2018")
    print("| " + " | ".join(head) + " |" if args.markdown else "  ".join(head))
    if args.markdown:
        print("|" + "---|" * len(head))
    for source in args.noise.split(","):
        workload, max_load = source.split(":")
        cell = cells[(workload, "idle")].quiet(float(max_load))
        noise = noise_floor(cell)
        for effect in EFFECTS:
            t = compare_searches(
                cell, effect, histories=args.histories, commits=args.commits, seed=args.seed, max_rounds=args.max_rounds
            )
            row = (
                f"{workload}, load ≤ {max_load} ({len(cell.chunks)} chunk{'s' * (len(cell.chunks) != 1)}, "
                f"noise {100 * noise:.1f} %)",
                f"{100 * effect:g} %",
                t["wb"].text(),
                t["pinpoint 2024"].text(),
                t["pinpoint 2018"].text(),
            )
            print("| " + " | ".join(row) + " |" if args.markdown else "  ".join(row), flush=True)
    print(
        f"\n{args.histories} histories of {args.commits} commits per row (seed {args.seed}); wb: δ = effect / 2, "
        f"at most {args.max_rounds} rounds a step; {time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
