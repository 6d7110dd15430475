#!/usr/bin/env python3
"""A GPU benchmark (CuPy GEMM, timed with CUDA events) that speaks the rerun harness protocol.

Each step multiplies an ``M x K`` by a ``K x N`` matrix (``--dtype``, cuBLAS through
``cupy.matmul``) ``--repeat`` times between two CUDA events on the current stream;
the step time is ``cupy.cuda.get_elapsed_time(start, end)``, GPU time, not host time.
After ``--warmup`` untimed steps (cuBLAS handle, memory pool, clocks ramping up),
``--steps`` timed steps are written as one native capture (training lens, ``step_ms``
per step) to ``$WB_CAPTURE_OUT`` (or ``--out``). The device is recorded as a measured
dimension (name, UUID through NVML when available, compute capability).

``--slowdown PCT`` is real extra GPU work: K grows by PCT %, so each GEMM does PCT %
more multiply-adds (the time grows about as much for large, compute-bound shapes).

Needs the ``gpu`` extra (``pip install 'wb[gpu]'``, i.e. cupy-cuda12x). Inputs are made
on the host with numpy and copied, so neither NVRTC nor cuRAND is needed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from datetime import datetime, timezone

FORMAT = "workbench.capture/1"


def device_identity(cp) -> dict:
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    ident = {"name": name, "compute_capability": f"{props['major']}.{props['minor']}", "index": dev.id}
    try:  # the UUID through NVML, when nvidia-ml-py is installed
        import pynvml

        pynvml.nvmlInit()
        try:
            bus = dev.pci_bus_id
            handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus)
            ident["uuid"] = pynvml.nvmlDeviceGetUUID(handle)
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - the UUID is a nice-to-have; absent means unknown
        pass
    return ident


def run(args: argparse.Namespace) -> dict:
    import cupy as cp
    import numpy as np

    k = max(1, round(args.k * (1 + args.slowdown / 100.0)))
    rng = np.random.default_rng(0)
    a = cp.asarray(rng.standard_normal((args.m, k)).astype(args.dtype))
    b = cp.asarray(rng.standard_normal((k, args.n)).astype(args.dtype))
    out = cp.empty((args.m, args.n), dtype=args.dtype)
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def step() -> float:
        start.record()
        for _ in range(args.repeat):
            cp.matmul(a, b, out=out)
        end.record()
        end.synchronize()
        return float(cp.cuda.get_elapsed_time(start, end))

    for _ in range(args.warmup):
        step()
    samples = [{"step": i, "rank": 0, "step_ms": step()} for i in range(args.steps)]
    ident = device_identity(cp)
    flops = 2.0 * args.m * args.n * k * args.repeat * args.steps
    return {
        "format": FORMAT,
        "lens": "training",
        "label": args.label or f"gpu_workload gemm {args.m}x{k}x{args.n} {args.dtype} slowdown={args.slowdown:g}%",
        "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "dimensions": {
            "model": f"cupy GEMM {args.m}x{args.k}x{args.n} {args.dtype}",
            "objective": "gpu benchmark",
            "hardware": f"1x {ident['name']}",
            "topology": "single GPU",
            "rank_count": 1,
            "effective_batch": args.repeat,
            "framework": f"cupy {cp.__version__}",
        },
        "window": {"kind": "steady", "warmup_excluded": args.warmup},
        "work": {"unit": "flop", "amount": flops},
        "samples": samples,
        "workload": {
            "name": "gpu_workload",
            "m": args.m,
            "n": args.n,
            "k": args.k,
            "k_effective": k,
            "dtype": args.dtype,
            "repeat": args.repeat,
            "slowdown_pct": args.slowdown,
            "timing": "CUDA events (GPU time)",
            "device": ident,
            "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
            "cuda_driver": cp.cuda.runtime.driverGetVersion(),
            "python": platform.python_version(),
        },
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--m", type=int, default=4096)
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--k", type=int, default=4096)
    p.add_argument("--dtype", choices=["float16", "float32", "float64"], default="float16")
    p.add_argument("--repeat", type=int, default=10, help="GEMMs per timed step (default 10)")
    p.add_argument("--steps", type=int, default=30, help="timed steps (default 30)")
    p.add_argument("--warmup", type=int, default=5, help="untimed warm-up steps (default 5)")
    p.add_argument("--slowdown", type=float, default=0.0, metavar="PCT", help="grow K by PCT %%: real extra work")
    p.add_argument("--label", default=None)
    p.add_argument("--out", default=None, help="capture path (default $WB_CAPTURE_OUT)")
    args = p.parse_args(argv)
    if min(args.m, args.n, args.k, args.repeat, args.steps) < 1 or args.warmup < 0 or args.slowdown < 0:
        p.error("sizes, --repeat and --steps must be positive; --warmup and --slowdown not negative")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = args.out or os.environ.get("WB_CAPTURE_OUT")
    if not out:
        print("gpu_workload: set WB_CAPTURE_OUT or pass --out", file=sys.stderr)
        return 2
    try:
        import cupy  # noqa: F401
    except ImportError:
        print("gpu_workload: cupy is not installed (pip install 'wb[gpu]')", file=sys.stderr)
        return 2
    try:
        capture = run(args)
    except Exception as exc:  # noqa: BLE001 - no driver, no device, out of memory: one line, exit 1
        print(f"gpu_workload: the GEMM could not run: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    tmp = f"{out}.partial"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(capture, f)
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
