"""Sequential stopping by simulation: error rates held, rounds saved (a benchmark, not a test).

    .venv/bin/python bench/sequential.py [--sessions 10000] [--markdown]

For each noise level (coefficient of variation of one run's value: 1, 2, 3, 5 %) and each
maximum number of rounds (10, 20, 30): simulated A/B/A′ sessions with no effect (the false
REGRESSION and IMPROVEMENT rates, which must stay at or under α = 0.05 in all) and with a
5 % slowdown (the detection rate and the mean rounds used), through the same
``workbench.stats.sequential`` code a live rerun uses. Beside them, the fixed 10-round
design on the same data model: one look at the end with the ordinary t interval.
δ = 2 %, O'Brien–Fleming-type spending, looks after every round from round 3.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workbench.stats.sequential import SequentialDesign, fixed_rates, simulate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--delta", type=float, default=0.02)
    ap.add_argument("--spending", default="obrien-fleming")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table (for docs/methods.md)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = []
    for cv in (0.01, 0.02, 0.03, 0.05):
        fixed = fixed_rates(10, effect=0.05, cv=cv, delta=args.delta, sessions=args.sessions, seed=2)
        fixed_aa = fixed_rates(10, effect=0.0, cv=cv, delta=args.delta, sessions=args.sessions, seed=1)
        rows.append((cv, "fixed 10", fixed_aa, fixed))
        for n in (10, 20, 30):
            design = SequentialDesign(n, spending=args.spending)
            aa = simulate(design, effect=0.0, cv=cv, delta=args.delta, sessions=args.sessions, seed=1)
            hit = simulate(design, effect=0.05, cv=cv, delta=args.delta, sessions=args.sessions, seed=2)
            rows.append((cv, f"sequential ≤{n}", aa, hit))
    head = (
        "CV",
        "design",
        "A/A: false REGRESSION",
        "false IMPROVEMENT",
        "EQUIVALENT",
        "rounds",
        "+5 %: REGRESSION",
        "rounds",
    )
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print("  ".join(head))
    for cv, name, aa, hit in rows:
        cells = (
            f"{cv * 100:g} %",
            name,
            f"{aa['REGRESSION']:.4f}",
            f"{aa['IMPROVEMENT']:.4f}",
            f"{aa['EQUIVALENT']:.3f}",
            f"{aa['mean_rounds']:.1f}",
            f"{hit['REGRESSION']:.3f}",
            f"{hit['mean_rounds']:.1f}",
        )
        print(("| " + " | ".join(cells) + " |") if args.markdown else "  ".join(cells))
    print(
        f"\n{args.sessions} sessions per cell, δ = {args.delta:g}, {args.spending} spending; "
        f"{time.perf_counter() - t0:.1f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
