#!/usr/bin/env python3
"""A small CPU benchmark (numpy) that speaks the rerun harness protocol.

Each step multiplies two ``--size`` x ``--size`` matrices ``--repeat`` times, then
waits ``--wait-ms`` (a stand-in for a kernel or I/O of fixed cost), and is timed on its
own; after ``--warmup`` untimed steps, ``--steps`` timed steps are written as one native
capture (``workbench.capture/1``, training lens: one sample per step, ``step_ms``; with
``--lens inference`` one request per step, ``ttft_ms``) to the path in
``$WB_CAPTURE_OUT`` (or ``--out``).

Knobs for trying the harness:

- ``--slowdown PCT`` makes every step PCT % slower than its own work took, by spinning
  on the step's clock for that share: a known, real effect (5 means 1.05x the time).
- ``--noise PCT`` draws one random factor per run, uniform in [0, PCT %], and delays
  every step by that share: a deliberately noisy workload (run-to-run variation, which
  is what the A/A control must catch; within-run noise would average away).
- ``--fail`` exits non-zero without writing a capture (a broken candidate).

``--clock wall`` (default) times steps with ``perf_counter`` and waits by sleeping.
``--clock cpu`` times steps with the thread's CPU time and waits by burning that much
CPU time, so a step has a known cost that other processes on a busy machine barely
disturb: the harness tests use it to check verdicts against known effects on shared CI
machines (wall-clock noise there is several percent from run to run). BLAS is pinned
to one thread so the CPU clock sees all the work.

Standalone: only numpy is needed, so it can be copied next to any benchmark.
"""

from __future__ import annotations

import os

# One BLAS thread: the CPU clock must see all the work, and runs must not fight for cores.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from datetime import datetime, timezone  # noqa: E402

import numpy as np  # noqa: E402

FORMAT = "workbench.capture/1"
CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}


def spin(clock, seconds: float) -> None:
    """Busy-wait ``seconds`` on ``clock``: exact where a sleep overshoots, and visible to
    the CPU clock."""
    if seconds <= 0:
        return
    end = clock() + seconds
    while clock() < end:
        pass


def run(args: argparse.Namespace) -> dict:
    clock = CLOCKS[args.clock]
    rng = np.random.default_rng()
    a = rng.standard_normal((args.size, args.size))
    b = rng.standard_normal((args.size, args.size))
    # The noise factor is per run, on purpose: see the module docstring.
    noise = random.SystemRandom().uniform(0.0, args.noise / 100.0) if args.noise > 0 else 0.0
    extra = args.slowdown / 100.0 + noise
    wait_s = args.wait_ms / 1000.0
    wait = time.sleep if args.clock == "wall" else (lambda s: spin(clock, s))

    def step() -> float:
        t0 = clock()
        for _ in range(args.repeat):
            a @ b
        if wait_s:
            wait(wait_s)
        work = clock() - t0
        spin(clock, work * extra)
        return (clock() - t0) * 1000.0

    for _ in range(args.warmup):
        step()
    flops = 2.0 * args.size**3 * args.repeat * args.steps
    hardware = platform.processor() or platform.machine()
    if args.lens == "inference":
        # Each step stands in for one request served end to end (first token = last token).
        samples = []
        for i in range(args.steps):
            ms = step()
            samples.append(
                {
                    "id": f"r-{i:04d}",
                    "prompt_tokens": args.size,
                    "output_tokens": 1,
                    "ttft_ms": ms,
                    "e2e_ms": ms,
                    "ok": True,
                }
            )
        dimensions: dict = {
            "model": f"numpy matmul {args.size}x{args.size}",
            "hardware": hardware,
            "topology": "single process",
            "request_mix": f"{args.size} prompt / 1 output tokens",
            "precision": "float64",
            "engine_revision": f"numpy {np.__version__}",
        }
        work = {"unit": "requests", "amount": args.steps}
    else:
        samples = [{"step": i, "rank": 0, "step_ms": step()} for i in range(args.steps)]
        dimensions = {
            "model": f"numpy matmul {args.size}x{args.size}",
            "objective": "cpu benchmark",
            "hardware": hardware,
            "topology": "single process",
            "rank_count": 1,
            "effective_batch": args.repeat,
            "framework": f"numpy {np.__version__}",
        }
        work = {"unit": "flop", "amount": flops}
    return {
        "format": FORMAT,
        "lens": args.lens,
        "label": args.label or f"cpu_workload size={args.size} slowdown={args.slowdown:g}%",
        "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "dimensions": dimensions,
        "window": {"kind": "steady", "warmup_excluded": args.warmup},
        "work": work,
        "samples": samples,
        "workload": {
            "name": "cpu_workload",
            "size": args.size,
            "repeat": args.repeat,
            "wait_ms": args.wait_ms,
            "slowdown_pct": args.slowdown,
            "noise_pct": args.noise,
            "noise_factor": noise,
            "clock": args.clock,
            "python": platform.python_version(),
        },
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=192, help="matrix side (default 192)")
    p.add_argument("--repeat", type=int, default=1, help="matmuls per step (default 1)")
    p.add_argument("--wait-ms", type=float, default=0.0, help="idle wait per step, ms (default 0)")
    p.add_argument("--steps", type=int, default=50, help="timed steps (default 50)")
    p.add_argument("--warmup", type=int, default=5, help="untimed warm-up steps (default 5)")
    p.add_argument("--slowdown", type=float, default=0.0, metavar="PCT", help="make each step PCT %% slower")
    p.add_argument("--noise", type=float, default=0.0, metavar="PCT", help="random per-run delay up to PCT %%")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall", help="step clock (default wall)")
    p.add_argument("--label", default=None, help="run label in the capture")
    p.add_argument(
        "--lens",
        choices=("training", "inference"),
        default="training",
        help="capture lens: training (one step per sample, step_ms) or inference (one request per step, ttft_ms)",
    )
    p.add_argument("--fail", action="store_true", help="exit 1 without writing a capture")
    p.add_argument("--out", default=None, help="capture path (default $WB_CAPTURE_OUT)")
    args = p.parse_args(argv)
    if args.size < 1 or args.steps < 1 or args.repeat < 1 or args.warmup < 0:
        p.error("--size, --steps and --repeat must be positive, --warmup not negative")
    if args.slowdown < 0 or args.noise < 0 or args.wait_ms < 0:
        p.error("--slowdown, --noise and --wait-ms must not be negative")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = args.out or os.environ.get("WB_CAPTURE_OUT")
    if not out:
        print("cpu_workload: set WB_CAPTURE_OUT or pass --out", file=sys.stderr)
        return 2
    if args.fail:
        print("cpu_workload: failing on purpose (--fail)", file=sys.stderr)
        return 1
    capture = run(args)
    tmp = f"{out}.partial"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(capture, f)
    os.replace(tmp, out)  # the harness never sees half a file
    return 0


if __name__ == "__main__":
    sys.exit(main())
