"""Start-up latency of the CLI, side by side with `python -c pass`, in one run.

Rows: `python -c pass` (the floor), `wb --help` (the anchor: no store, no numpy),
`python -c "import numpy, scipy.special"` (the anchor of the comparisons: the libraries
their statistics need), `wb runs` on an empty and on the demo store, `wb compare` and
`wb inspect` on the demo inference pair (5 vs 5 runs) and on the demo fleet pair (5 vs 5
windows, 5 A/A controls), each with `--json`. Rounds are interleaved (every command once
per round) so that a busy shared machine slows them all alike; the figures are the median
wall time and the median CPU time (user + system) of the child, with the ratios of the
wall median to `wb --help`'s and to the numpy + scipy.special import's, and the load
average before and after.

Children run with byte-compiled modules (as an installed wb is): PYTHONDONTWRITEBYTECODE
is cleared for them and one warm-up round comes first. They run in a scratch directory,
so ``PYTHONPATH=OTHER_CHECKOUT`` measures another checkout's code with the same venv.

    .venv/bin/python bench/cli_latency.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEMO_INFERENCE = [
    "1",
    "2",
    "3",
    "4",
    "5",
    "--vs",
    "11",
    "12",
    "13",
    "14",
    "15",
    "--change",
    "engine_revision=v0.8.2:v0.8.3",
]

DEMO_FLEET = ["31", "32", "33", "34", "35", "--vs", "41", "42", "43", "44", "45"]
DEMO_FLEET += [arg for run in range(36, 41) for arg in ("--control", str(run))]
LIBRARIES = "python -c 'import numpy, scipy.special'"


def timed(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    py = sys.executable
    wb = [py, "-m", "workbench"]
    with tempfile.TemporaryDirectory(prefix="wb-cli-latency-") as tmp:
        env = {**os.environ, "XDG_DATA_HOME": tmp, "PYTHONDONTWRITEBYTECODE": ""}
        env.pop("WB_STORE", None)
        empty, demo = str(Path(tmp) / "empty.sqlite"), str(Path(tmp) / "wb" / "demo.sqlite")
        subprocess.run(
            [py, "-c", "from store import open_store; open_store(__import__('sys').argv[1]).ensure_exists()", empty],
            env=env,
            check=True,
            cwd=tmp,
        )
        subprocess.run([*wb, "demo", "--json"], env=env, check=True, stdout=subprocess.DEVNULL, cwd=tmp)
        rows = {
            "python -c pass": [py, "-c", "pass"],
            "wb --help": [*wb, "--help"],
            LIBRARIES: [py, "-c", "import numpy, scipy.special"],
            "wb runs (empty store)": [*wb, "--store", empty, "runs", "--json"],
            "wb runs (demo store)": [*wb, "--store", demo, "runs", "--json"],
            "wb compare (demo inference)": [*wb, "--store", demo, "compare", *DEMO_INFERENCE, "--json"],
            "wb inspect (demo inference)": [*wb, "--store", demo, "inspect", *DEMO_INFERENCE, "--json"],
            "wb compare (demo fleet)": [*wb, "--store", demo, "compare", *DEMO_FLEET, "--json"],
            "wb inspect (demo fleet)": [*wb, "--store", demo, "inspect", *DEMO_FLEET, "--json"],
        }
        for cmd in rows.values():  # warm-up: byte-compile, fill the page cache
            if timed(cmd, env, tmp)[2] != 0:
                sys.exit(f"failed: {' '.join(cmd)}")
        load_before = os.getloadavg()
        walls: dict[str, list[float]] = {k: [] for k in rows}
        cpus: dict[str, list[float]] = {k: [] for k in rows}
        for _ in range(args.rounds):
            for name, cmd in rows.items():
                wall, cpu, _rc = timed(cmd, env, tmp)
                walls[name].append(wall)
                cpus[name].append(cpu)
        load_after = os.getloadavg()
    anchor = statistics.median(walls["wb --help"])
    libraries = statistics.median(walls[LIBRARIES])
    print(
        f"CLI latency, {args.rounds} interleaved rounds; load average {load_before[0]:.2f} before, {load_after[0]:.2f} "
        f"after "
        f"(1-min; {os.cpu_count()} CPUs, shared)"
    )
    print(f"{'command':42} {'wall median':>12} {'wall min':>9} {'CPU median':>11} {'× --help':>9} {'× libs':>7}")
    for name in rows:
        med = statistics.median(walls[name])
        print(
            f"{name:42} {med:>10.3f} s {min(walls[name]):>7.3f} s {statistics.median(cpus[name]):>9.3f} s "
            f"{med / anchor:>8.2f}× {med / libraries:>6.2f}×"
        )
    print("× libs: the wall median over python -c 'import numpy, scipy.special' (the comparisons' target: ≤ 1.2×)")


if __name__ == "__main__":
    main()
