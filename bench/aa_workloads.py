#!/usr/bin/env python3
"""Two small workloads for the A/A bench, beside the bundled CPU one: memory-bound, and sleep-and-wake.

Each speaks the rerun harness protocol (a native capture, training lens, one ``step_ms``
sample per step, written to ``$WB_CAPTURE_OUT`` or ``--out``), so it can run under
``wb rerun`` as well as under ``bench/aa_sessions.py record``:

- ``memory``: every step gathers 512 Ki values at random places of a ``--mib`` MiB table
  (far beyond the core's L2; no prefetcher can guess the next address): its time is set
  by the latency of the shared cache and memory, which other processes on the machine use too.
- ``sleep``: every step sleeps ``--sleep-ms`` and wakes to a little work, the shape of a
  step that waits on I/O or a device: its time is set by the scheduler's wake-up latency
  and timer slack, not by the CPU.

Standalone (numpy only), like ``captures/workloads/cpu_workload.py``.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

GATHERS = 1 << 19


def memory_steps(args: argparse.Namespace) -> list[float]:
    table = np.ones((args.mib << 20) // 8)
    where = np.random.default_rng(0).integers(0, len(table), GATHERS)

    def step() -> float:
        t0 = time.perf_counter()
        table[where].sum()
        return (time.perf_counter() - t0) * 1000.0

    for _ in range(args.warmup):
        step()
    return [step() for _ in range(args.steps)]


def sleep_steps(args: argparse.Namespace) -> list[float]:
    buf = bytearray(4096)

    def step() -> float:
        t0 = time.perf_counter()
        time.sleep(args.sleep_ms / 1000.0)
        for i in range(0, len(buf), 64):  # a little work on waking: touch a page
            buf[i] = (buf[i] + 1) & 0xFF
        return (time.perf_counter() - t0) * 1000.0

    for _ in range(args.warmup):
        step()
    return [step() for _ in range(args.steps)]


STEPS = {"memory": memory_steps, "sleep": sleep_steps}


def capture(args: argparse.Namespace, times: list[float]) -> dict:
    return {
        "format": "workbench.capture/1",
        "lens": "training",
        "label": f"aa_workloads {args.kind}",
        "dimensions": {
            "model": f"aa_workloads {args.kind}",
            "objective": "a/a bench",
            "hardware": platform.processor() or platform.machine(),
            "topology": "single process",
            "rank_count": 1,
            "framework": f"numpy {np.__version__}",
        },
        "window": {"kind": "steady", "warmup_excluded": args.warmup},
        "samples": [{"step": i, "rank": 0, "step_ms": t} for i, t in enumerate(times)],
        "workload": {"name": f"aa_workloads.{args.kind}", "mib": args.mib, "sleep_ms": args.sleep_ms},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=sorted(STEPS))
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--mib", type=int, default=64, help="memory: MiB of the table (default 64)")
    p.add_argument("--sleep-ms", type=float, default=2.0, help="sleep: the wait per step (default 2 ms)")
    p.add_argument("--out", default=None, help="capture path (default $WB_CAPTURE_OUT)")
    args = p.parse_args(argv)
    if args.steps < 1 or args.warmup < 0 or args.mib < 1 or args.sleep_ms < 0:
        p.error("--steps and --mib must be positive, --warmup and --sleep-ms not negative")
    out = args.out or os.environ.get("WB_CAPTURE_OUT")
    if not out:
        print("aa_workloads: set WB_CAPTURE_OUT or pass --out", file=sys.stderr)
        return 2
    doc = capture(args, STEPS[args.kind](args))
    with open(f"{out}.partial", "w", encoding="utf-8") as f:
        json.dump(doc, f)
    os.replace(f"{out}.partial", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
