"""Benchmark: what ``--plot`` adds to ``wb inspect`` on a multi-rank training pair.

Builds two synthetic training runs of RANKS ranks × STEPS steps (one straggler in the
candidate), then times, in one process and one run so the ratios compare:

  (a) the anchor: ``workbench.compare.inspect`` of the pair (the report's own work);
  (b) ``inspect_plots``: the phase over time and the rank plot (plotext, three figures
      each: the plot and one per side to find the cells the sides share).

Prints each median of REPEAT runs and (b)/(a). Say the load average beside the numbers.

    .venv/bin/python bench/plots.py [--ranks 1024] [--steps 50] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "compare")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()

    from factories import training_run  # the tests' run builder

    from lenses import builtin_lens
    from workbench.compare import inspect
    from workbench.compare.plots import inspect_plots

    dims = {"rank_count": a.ranks, "effective_batch": a.ranks * 32}  # what the data show, so the pair is comparable
    base = [training_run("b", seed=1, ranks=a.ranks, steps=a.steps, **dims)]
    cand = [training_run("c", seed=2, ranks=a.ranks, steps=a.steps, compute=262.0, **dims)]
    cand[0].samples["step_ms"][cand[0].samples["rank"] == a.ranks // 3] += 40.0
    lens = builtin_lens("training")
    inspect_plots(lens, base, cand)  # warm: plotext's import is not the plot's cost

    def timed(fn) -> float:
        times = []
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    first = inspect(base, cand)
    assert first.comparison.comparable and first.ranks is not None, (
        first.comparison.refusal
    )  # the whole detail, as --plot has
    anchor = timed(lambda: inspect(base, cand))
    plot = timed(lambda: inspect_plots(lens, base, cand))
    print(f"ranks {a.ranks} × steps {a.steps}, median of {a.repeat}; load average {os.getloadavg()[0]:.2f}")
    print(f"  (a) inspect (anchor)      {anchor * 1000:8.1f} ms")
    print(f"  (b) inspect_plots         {plot * 1000:8.1f} ms   (b)/(a) = {plot / anchor:.2f}")


if __name__ == "__main__":
    main()
