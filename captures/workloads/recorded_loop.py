"""A training-like loop that uses the flight recorder, stalls once, and snapshots it.

The loop reads a batch (the ``input`` phase) and runs a small numpy MLP step (the
``compute`` phase). After ``--normal-steps`` steps it snapshots a normal window at that
workload boundary; at ``--stall-at`` its input pipeline stalls for ``--stall-ms``, the
trigger (k x the recent median step time) fires, and the recorder writes the moments
before the stall. Both snapshots are native captures; with ``--store`` (or ``WB_STORE``)
they are imported as they are written, so ``wb compare`` can compare them at once:

    python captures/workloads/recorded_loop.py --store sqlite:///wb.sqlite --out snaps/
    wb --store sqlite:///wb.sqlite show "recorded loop: slow step"
    wb --store sqlite:///wb.sqlite compare "recorded loop: boundary: normal window" \\
        --vs "recorded loop: slow step" --accept window --why "the moments before a stall"

The stall is injected in a named function, so the snapshot's sampled stacks can name it:
``--stall-kind sleep`` waits on "storage" (``slow_storage_read``), ``spin`` burns CPU in
Python (``decode_on_host``), ``gc`` churns reference cycles over a large live heap
(``churn_garbage``: the GC pauses show). The slow step's snapshot is an ``incident`` window;
``wb show`` names the frames that gained most samples in it, and ``wb compare`` refuses it
against the normal window unless accepted (``--accept window --why TEXT``).

The recorder part is the three marked lines; the rest is the toy workload.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from workbench.recorder import Recorder, TriggerRule  # (1) import


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--normal-steps", type=int, default=200, help="snapshot a normal window after this many steps")
    p.add_argument("--stall-at", type=int, default=320)
    p.add_argument("--stall-ms", type=float, default=1000.0)
    p.add_argument(
        "--stall-kind",
        choices=("sleep", "spin", "gc"),
        default="sleep",
        help="what the stalled step does: wait on storage, burn CPU in Python, or churn garbage",
    )
    p.add_argument("--stack-hz", type=float, default=100.0, help="recorder: stack samples per second")
    p.add_argument("--k", type=float, default=5.0, help="trigger: k x the recent median step time")
    p.add_argument("--at-least-ms", type=float, default=200.0, help="trigger: and at least this long")
    p.add_argument("--input-ms", type=float, default=2.0, help="normal time to read a batch")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--out", type=Path, default=Path("wb-snapshots"))
    p.add_argument("--store", default=None, help="store URL (default: $WB_STORE; none: files only)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def slow_storage_read(ms: float) -> None:
    """The injected host stall: a read that waits (the thread sleeps, the CPU idles)."""
    time.sleep(ms / 1000.0)


def decode_on_host(ms: float) -> int:
    """The injected host stall: Python work that holds the CPU (and the GIL)."""
    end = time.perf_counter() + ms / 1000.0
    n = 0
    while time.perf_counter() < end:
        n += sum(i * i for i in range(200))
    return n


# A live heap for the GC phase: every full collection has to walk it.
_LIVE_HEAP: list[object] = []


def churn_garbage(ms: float) -> int:
    """The injected GC-heavy phase: reference cycles by the hundred thousand over a large
    live heap, so the collector runs again and again inside the step."""
    if not _LIVE_HEAP:
        _LIVE_HEAP.extend([i, str(i)] for i in range(300_000))
    end = time.perf_counter() + ms / 1000.0
    made = 0
    while time.perf_counter() < end:
        for _ in range(1000):
            a: list[object] = []
            b = [a]
            a.append(b)  # a cycle: only the collector frees it
        made += 1000
    return made


STALLS = {"sleep": slow_storage_read, "spin": decode_on_host, "gc": churn_garbage}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rng = np.random.default_rng(args.seed)
    w1 = rng.standard_normal((args.width, args.width)) * 0.05
    w2 = rng.standard_normal((args.width, 1)) * 0.05

    # (2) one recorder for the process; the dimensions make its snapshots comparable.
    rec = Recorder(
        lens="training",
        label="recorded loop",
        out_dir=args.out,
        store_url=args.store,
        dimensions={
            "model": f"toy MLP {args.width}x{args.width}",
            "objective": "synthetic regression",
            "hardware": f"{platform.machine()} CPU, {os.cpu_count()} cores",
            "topology": "single process",
            "rank_count": 1,
            "effective_batch": args.batch,
            "framework": f"numpy {np.__version__}",
        },
        # Fire on a step k times slower than the recent median and at least
        # --at-least-ms: on a busy machine a few-ms step often takes 5x longer (the
        # boundary snapshot's own writing can do that), and such jitter must not spend
        # the incident budget. No cooldown and room for 3: should a busy machine still
        # produce a spurious incident, it cannot hide the real one.
        trigger=TriggerRule(
            k_median=args.k, at_least_ms=args.at_least_ms, cooldown_s=0.0, max_incidents=3, max_concurrent=3
        ),
        incident_window_s=0.5,  # the moments before the stall
        stack_hz=args.stack_hz,
    )
    for step in range(args.steps):
        with rec.step():  # (3) around each step; phases are optional
            with rec.phase("input"):
                if step == args.stall_at:
                    STALLS[args.stall_kind](args.stall_ms)  # the injected stall
                else:
                    time.sleep(args.input_ms / 1000.0)  # the data loader
                x = rng.standard_normal((args.batch, args.width))
                y = x[:, :1] * 0.5
            with rec.phase("compute"):
                h = np.tanh(x @ w1)
                err = h @ w2 - y
                w2 -= 0.01 * h.T @ err / args.batch
                loss = float((err**2).mean())
            rec.value("samples", args.batch)
            rec.value("loss", loss)
        if step + 1 == args.normal_steps:
            rec.boundary("normal window")
    rec.close()  # waits for the snapshot writer
    stats = rec.stats()
    print(
        json.dumps(
            {
                "snapshots": stats["snapshot_paths"],
                "imported_runs": stats["imported_run_ids"],
                "incidents": stats["incidents"],
                "faults": stats["faults"],
            },
            indent=2,
        )
    )
    return 0 if stats["faults"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
