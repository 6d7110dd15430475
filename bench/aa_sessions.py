"""A/A sessions replayed from real run times: how often wb cries wolf, and its power beside it.

    .venv/bin/python bench/aa_sessions.py [--data bench/data/aa_run_times.json] [--sessions 2000]
                                          [--seed 1] [--markdown]

The run times are real: thousands of short processes of three workloads (the bundled CPU
workload, a memory-bound one, one that sleeps and wakes), idle and under a background
load, recorded once in time order by ``bench/aa_record.py`` (``bench/data/``). The
sessions are **replayed** from them: a session of m rounds takes 3m consecutive recorded
runs of one workload and one condition (so the drift, the outlier runs and the slow
stretches of the machine come with them), and gives each round's three runs to A, B and
A′ in a fresh random order, as ``wb rerun`` does (RMIT). All three arms run the same
command, so every verdict other than "no change" is a false alarm; with an injected
effect, B's values are multiplied by 1.03 or 1.08 (a slowdown of each run's time).

Protocols, as users run them:

- ``fixed 5``, ``fixed 10``: one analysis after m rounds (``workbench.stats.analyze``);
- ``sequential ≤20``: a look after every round from round 3, stopping when it decides
  (``workbench.stats.sequential.look``, O'Brien–Fleming spending);
- ``resumed 10``: fixed 10 rounds, interrupted at a random slot and resumed later: the runs
  after the interruption come from another stretch of the recording (another chunk, minutes
  away); the round the interruption split is run again whole after the resume
  (``workbench.rerun`` since the round-structure rule), so no round mixes the two stretches;
- ``resumed 10 (split kept)``: the same interruptions with the split round's runs kept as
  they fell (the old behaviour), for comparison.

Each verdict is computed twice: with wb's rule (the A/A control widens the interval or
withholds the verdict where it shows more variation than the model assumes;
docs/methods.md section 6) and with the model alone (the B/A interval and the UNSTABLE
guard, the rule before). The false-alarm rate is (REGRESSION + IMPROVEMENT) / sessions
with its Clopper–Pearson 95 % interval. Sessions overlap in the recording (their windows
start at random runs), so the interval speaks for the replay's randomness, not for other
machines or days: the recording holds ``runs / 3m`` disjoint windows per cell.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workbench.stats import analyze
from workbench.stats.analysis import INCONCLUSIVE, MIN_ROUNDS, decide
from workbench.stats.sequential import CONTINUE, SequentialDesign, look

DATA = Path(__file__).resolve().parent / "data" / "aa_run_times.json"
DELTA = 0.02
EFFECTS = (0.0, 0.03, 0.08)
FALSE = ("REGRESSION", "IMPROVEMENT")


@dataclass(frozen=True)
class Cell:
    """The recorded runs of one workload under one condition: chunks of consecutive runs."""

    workload: str
    load: str
    chunks: tuple[np.ndarray, ...]  # run values (ms), NaN where a run failed
    loads: tuple[float, ...]  # the 1-minute load average as each chunk started

    @property
    def runs(self) -> int:
        return sum(len(c) for c in self.chunks)

    @property
    def loadavg(self) -> tuple[float, float]:
        return min(self.loads), max(self.loads)

    def quiet(self, max_load: float) -> "Cell":
        """The chunks recorded while the machine's load average was at most ``max_load``."""
        kept = [(c, x) for c, x in zip(self.chunks, self.loads) if x <= max_load]
        if not kept:
            raise ValueError(f"{self.workload}/{self.load}: no chunk recorded at load {max_load:g} or less")
        return Cell(self.workload, self.load, tuple(c for c, _ in kept), tuple(x for _, x in kept))


def load_cells(path: Path = DATA) -> list[Cell]:
    doc = json.loads(path.read_text())
    grouped: dict[tuple[str, str], list[dict]] = {}
    for session in doc["sessions"]:
        for chunk in session["chunks"]:
            grouped.setdefault((chunk["workload"], chunk["load"]), []).append(chunk)
    return [
        Cell(
            workload,
            load,
            tuple(np.array([np.nan if v is None else v for v in c["values_ms"]], dtype=float) for c in chunks),
            tuple(float(c["loadavg_before"][0]) for c in chunks),
        )
        for (workload, load), chunks in grouped.items()
    ]


# -- one session --------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    """Per-round values of the three arms (rounds with a failed run are left out, as wb does)."""

    a: np.ndarray
    b: np.ndarray
    ap: np.ndarray


def _rounds(runs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Consecutive runs as rounds, each round's three runs given to A, B, A′ in a random order."""
    m = len(runs) // 3
    order = np.argsort(rng.random((m, 3)), axis=1)  # a fresh permutation per round (RMIT)
    return np.take_along_axis(runs[: 3 * m].reshape(m, 3), order, axis=1)


def _window(cell: Cell, runs: int, rng: np.random.Generator) -> np.ndarray:
    fits = [c for c in cell.chunks if len(c) >= runs]
    chunk = fits[rng.integers(len(fits))]
    start = rng.integers(0, len(chunk) - runs + 1)
    return chunk[start : start + runs]


def straight(cell: Cell, rounds: int, rng: np.random.Generator) -> np.ndarray:
    return _rounds(_window(cell, 3 * rounds, rng), rng)


def resumed(cell: Cell, rounds: int, rng: np.random.Generator, *, keep_split: bool) -> np.ndarray:
    """Interrupted after a random slot, resumed in another chunk (minutes later). wb's rule runs
    the split round again whole after the resume; ``keep_split`` keeps its runs as they fell."""
    slots = 3 * rounds
    cut = int(rng.integers(1, slots))  # runs finished before the interruption
    if len(cell.chunks) < 2:
        raise ValueError(f"{cell.workload}/{cell.load}: an interruption needs two chunks")
    first, second = rng.choice(len(cell.chunks), size=2, replace=False)
    before = cell.chunks[first]
    start = rng.integers(0, len(before) - cut + 1)
    head = before[start : start + cut]
    if not keep_split:
        head = head[: 3 * (cut // 3)]  # the split round's finished runs are not used: it runs again
    after = cell.chunks[second]
    need = slots - len(head)
    start = rng.integers(0, len(after) - need + 1)
    return _rounds(np.concatenate([head, after[start : start + need]]), rng)


# -- verdicts -------------------------------------------------------------------------


def _arms(rounds: np.ndarray, effect: float) -> Session:
    ok = ~np.isnan(rounds).any(axis=1)
    r = rounds[ok]
    return Session(r[:, 0], r[:, 1] * (1 + effect), r[:, 2])


def fixed_verdicts(s: Session) -> tuple[str, str, bool]:
    """(wb's verdict, the model-only verdict, whether an arm drifts) of a fixed analysis."""
    if len(s.a) < MIN_ROUNDS:
        return INCONCLUSIVE, INCONCLUSIVE, False
    result = analyze(s.a, s.b, s.ap, paired=True, delta=DELTA, n_boot=0, rank_test=False)
    eff, aa = result.effect, result.aa
    assert eff.primary95 is not None and eff.primary90 is not None and aa is not None
    model = INCONCLUSIVE if aa.unstable else decide(eff.primary95, eff.primary90, DELTA)[0]
    return str(result.verdict), str(model), "DRIFT" in result.flags


def sequential_verdicts(s: Session, design: SequentialDesign) -> tuple[tuple[str, int], tuple[str, int]]:
    """((wb's verdict, rounds used), (the model-only verdict, rounds used)) of a sequential plan."""
    d, d_aa = np.log(s.b / s.a), np.log(s.ap / s.a)
    out = []
    for control in (True, False):
        decision, used = INCONCLUSIVE, len(d)
        for n in design.looks:
            if n > len(d):
                break
            lk = look(design, d[:n], DELTA, d_aa[:n], widen=control)
            if lk.decision != CONTINUE:
                decision, used = lk.decision, n
                break
        out.append((decision, used))
    return out[0], out[1]


# -- the tables -----------------------------------------------------------------------


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    from scipy.stats import beta

    a = (1 - level) / 2
    low = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return low, high


@dataclass
class Tally:
    sessions: int = 0
    false_alarms: int = 0  # REGRESSION or IMPROVEMENT (A/A), REGRESSION (with an effect: hits)
    rounds: int = 0
    drifting: int = 0  # sessions with DRIFT flagged (fixed analyses), and their false alarms
    drifting_alarms: int = 0

    def add(self, verdict: str, rounds: int, effect: float, drifting: bool = False) -> None:
        self.sessions += 1
        self.rounds += rounds
        hit = verdict in FALSE if effect == 0 else verdict == "REGRESSION"
        self.false_alarms += hit
        self.drifting += drifting
        self.drifting_alarms += drifting and hit

    @property
    def rate(self) -> float:
        return self.false_alarms / self.sessions if self.sessions else math.nan


Protocol = Callable[[Cell, np.random.Generator], np.ndarray]


def protocols() -> dict[str, tuple[Protocol, SequentialDesign | None]]:
    return {
        "fixed 5": (lambda c, rng: straight(c, 5, rng), None),
        "fixed 10": (lambda c, rng: straight(c, 10, rng), None),
        "sequential ≤20": (lambda c, rng: straight(c, 20, rng), SequentialDesign(20)),
        "resumed 10": (lambda c, rng: resumed(c, 10, rng, keep_split=False), None),
        "resumed 10 (split kept)": (lambda c, rng: resumed(c, 10, rng, keep_split=True), None),
    }


def replay(
    cells: list[Cell], *, sessions: int, seed: int, effects: tuple[float, ...] = EFFECTS, names: list[str] | None = None
) -> Iterator[tuple[Cell, str, float, Tally, Tally]]:
    """For each cell, protocol and effect: (cell, protocol, effect, wb's tally, the model-only tally)."""
    chosen = {k: v for k, v in protocols().items() if names is None or k in names}
    for i, cell in enumerate(cells):
        for j, (name, (draw, design)) in enumerate(chosen.items()):
            for k, effect in enumerate(effects):
                rng = np.random.default_rng([seed, i, j, k])
                ours, model = Tally(), Tally()
                for _ in range(sessions):
                    s = _arms(draw(cell, rng), effect)
                    if design is None:
                        v, m, drifting = fixed_verdicts(s)
                        ours.add(v, len(s.a), effect, drifting)
                        model.add(m, len(s.a), effect, drifting)
                    else:
                        (v, n), (m, nm) = sequential_verdicts(s, design)
                        ours.add(v, n, effect)
                        model.add(m, nm, effect)
                yield cell, name, effect, ours, model


def noise_floor(cell: Cell) -> float:
    """The SD of the log ratio of two consecutive runs: the noise one A′/A round sees."""
    logs = [np.diff(np.log(c[~np.isnan(c)])) for c in cell.chunks]
    return float(np.concatenate(logs).std(ddof=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--sessions", type=int, default=2000, help="replayed sessions per cell, protocol and effect")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    cells = load_cells(args.data)
    doc = json.loads(args.data.read_text())
    rows: dict[tuple[str, str, str], dict[float, tuple[Tally, Tally]]] = {}
    for cell, name, effect, ours, model in replay(cells, sessions=args.sessions, seed=args.seed):
        rows.setdefault((cell.workload, cell.load, name), {})[effect] = (ours, model)
    by_cell = {(c.workload, c.load): c for c in cells}
    head = (
        "workload",
        "load (1-min avg)",
        "noise",
        "protocol",
        "false alarms, wb (95 % CI)",
        "model only",
        "+3 %: REGRESSION",
        "+8 %: REGRESSION",
        "rounds (+8 %)",
    )
    print("| " + " | ".join(head) + " |" if args.markdown else "  ".join(head))
    if args.markdown:
        print("|" + "---|" * len(head))
    for (workload, load, name), per in rows.items():
        cell = by_cell[(workload, load)]
        aa, aa_model = per[0.0]
        lo, hi = clopper_pearson(aa.false_alarms, aa.sessions)
        cells_text = (
            workload,
            f"{load} ({cell.loadavg[0]:.1f}–{cell.loadavg[1]:.1f})",
            f"{100 * noise_floor(cell):.1f} %",
            name,
            f"{100 * aa.rate:.2f} % [{100 * lo:.2f}, {100 * hi:.2f}]",
            f"{100 * aa_model.rate:.2f} %",
            f"{per[0.03][0].rate:.3f} ({per[0.03][1].rate:.3f})",
            f"{per[0.08][0].rate:.3f} ({per[0.08][1].rate:.3f})",
            f"{per[0.08][0].rounds / per[0.08][0].sessions:.1f}",
        )
        print("| " + " | ".join(cells_text) + " |" if args.markdown else "  ".join(cells_text))
    aa = [per[0.0] for per in rows.values()]
    drifting = sum(t.drifting for t, _ in aa)
    print(
        f"\nA/A sessions with an arm flagged DRIFT (fixed analyses): {drifting}; REGRESSION or IMPROVEMENT: "
        f"{sum(t.drifting_alarms for t, _ in aa)} (model only: {sum(m.drifting_alarms for _, m in aa)})"
    )
    ours_all, model_all = sum(t.false_alarms for t, _ in aa), sum(m.false_alarms for _, m in aa)
    sessions = sum(t.sessions for t, _ in aa)
    lo, hi = clopper_pearson(ours_all, sessions)
    print(
        f"All A/A sessions: {ours_all} of {sessions} false alarms, {100 * ours_all / sessions:.2f} % "
        f"[{100 * lo:.2f}, {100 * hi:.2f}]; model only {model_all} ({100 * model_all / sessions:.2f} %)"
    )
    print(
        f"\n{args.sessions} replayed sessions per row and effect (seed {args.seed}); runs recorded on "
        f"{doc['machine']['cpu']} ({doc['machine']['cores']} cores), {sum(c.runs for c in cells)} runs; "
        f"power: wb's rule (model only); {time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
