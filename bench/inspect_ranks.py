"""Benchmark: ``wb inspect`` of two N-rank training jobs, peak client memory against N.

The stores are bench/scale_ranks.py's (N copies of a real rank trace, job A and job B with
one straggler), imported once here if absent (``WB_BENCH_DIR``, default
/tmp/wb-bench-scale; the import is minutes at 1,024 ranks) and kept. Each ``wb inspect A
--vs B --json`` runs in a fresh process (peak RSS sampled every 20 ms, bytecode cached);
with ``--against DIR`` the same command runs with another checkout's code (PYTHONPATH=DIR)
in the same sitting, interleaved, and the two JSON documents are checked equal. Each
checkout reads its own copy of the store: a store records a fingerprint of the ``store``
package's source, and a process whose code differs from it creates the tables again
(SQLAlchemy imported), once, which alternating checkouts on one file would measure.

    .venv/bin/python bench/inspect_ranks.py [--ranks 64 256 1024] [--rounds 3] [--steps all|steady]
        [--against /path/to/old/checkout]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path

import scale_ranks as sr
from _cached import env as cached_env
from _cached import load_average


def store_of(ranks: int) -> str:
    """The N-rank store with jobs A and B, imported once."""
    path = sr.WORK / f"ranks{ranks}" / "inspect.sqlite"
    done = path.with_suffix(".done")
    url = f"sqlite:///{path}"
    if not done.exists():
        a, b, _straggler = sr.prepare(ranks, 60.0)
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        for label, d in ((f"A{ranks}", a), (f"B{ranks}", b)):
            sr._checked(sr.measure(["--store", url, "import", str(d), "--label", label, "--json"]), f"import {label}")
        done.touch()
    return url


def copy_for(url: str, i: int) -> str:
    """The ``i``-th checkout's own copy of the store (see above)."""
    path = Path(url.removeprefix("sqlite:///"))
    copy = path.with_name(f"{path.stem}-{i}.sqlite")
    if not copy.exists() or copy.stat().st_mtime < path.stat().st_mtime:
        shutil.copyfile(path, copy)
    return f"sqlite:///{copy}"


STEPS = "all"


def inspect(url: str, ranks: int, code: str) -> dict:
    os.environ.update({k: v for k, v in cached_env().items() if k != "PYTHONPATH"})
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sr.REPO = Path(code)  # measure() runs `wb` with PYTHONPATH=REPO
    args = ["--store", url, "inspect", f"A{ranks}", "--vs", f"B{ranks}", "--steps", STEPS, "--json", *sr.ACCEPT]
    return sr._checked(sr.measure(args), f"inspect at {ranks} ranks ({code})", (0, 3))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[64, 256, 1024])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", choices=("all", "steady"), default="all", help="wb inspect --steps")
    ap.add_argument("--against", help="another checkout (the code before a change), run beside this one")
    args = ap.parse_args()
    global STEPS
    STEPS = args.steps
    codes = {"this checkout": str(sr.REPO)}
    if args.against:
        codes = {"before (--against)": args.against, **codes}
    stores = {n: store_of(n) for n in args.ranks}
    for i, code in enumerate(codes.values()):  # byte-compile each checkout, settle each copy's fingerprint
        for ranks, url in stores.items():
            inspect(copy_for(url, i), ranks, code)
    print(
        f"wb inspect A --vs B --steps {STEPS} --json, peak client RSS (MB) and wall (s), median of {args.rounds}; "
        f"load {load_average()}"
    )
    print(f"{'ranks':>6} " + " ".join(f"{name:>28}" for name in codes))
    for ranks, url in stores.items():
        got: dict[str, list[dict]] = {name: [] for name in codes}
        for _ in range(args.rounds):
            for i, (name, code) in enumerate(codes.items()):
                got[name].append(inspect(copy_for(url, i), ranks, code))
        docs = {name: json.loads(runs[-1]["stdout"]) for name, runs in got.items()}
        same = len({json.dumps(d, sort_keys=True) for d in docs.values()}) == 1
        cells = []
        for runs in got.values():
            mb = statistics.median(r["client_mb"] for r in runs)
            wall = statistics.median(r["wall_s"] for r in runs)
            cells.append(f"{mb:>10.0f} MB {wall:>8.2f} s")
        print(f"{ranks:>6} " + " ".join(f"{c:>28}" for c in cells) + ("" if same else "  RESULTS DIFFER"))
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    sys.exit(main())
