"""A synthetic Kineto trace with known figures, written in any of the three format generations.

Each 100 ms step on each rank: the host waits 10 ms on the data loader (a 1 ms
host-to-device copy runs during it), then launches a compute kernel (50 ms on rank 0,
60 ms on rank 1: rank 1 is the straggler) and an all-reduce that starts 2 ms before
the compute ends (2 ms overlapped) and ends, on every rank, at 90 ms into the step
(all ranks leave the collective together). The last 10 ms are idle until the next
step's launches. Step 3 also has a 5 ms checkpoint save in that idle tail.
Rank 1's clock runs ``skew_us`` ahead. Host-only backward and optimizer markers make it a
training step (``backward=False``: forward passes only; ``accumulation``: backward passes
per step); ``mm_dims``: the matmul's recorded input shapes; ``device_lag_us``: the device
clock behind the host's; ``memory_mb``: one allocation of that size per step; ``compute_us``:
the compute kernel's length on this rank instead.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

T0_US = 1_700_000_000_000_000
STEP_US = 100_000
BASE_NS = 1_699_999_000_000_000_000  # for the relative generation (below T0, as Kineto sets it)


def rank_events(
    rank: int,
    steps: int = 4,
    *,
    legacy: bool = False,
    skew_us: int = 0,
    drop_last_kernels: bool = False,
    backward: bool = True,
    accumulation: int = 1,
    mm_dims: list | None = None,
    device_lag_us: int = 0,
    memory_mb: float | None = None,
    compute_us: int | None = None,
) -> list[dict[str, Any]]:
    cat = (
        {"op": "Operator", "ann": "Operator", "rt": "Runtime", "k": "Kernel", "cp": "Memcpy"}
        if legacy
        else {"op": "cpu_op", "ann": "user_annotation", "rt": "cuda_runtime", "k": "kernel", "cp": "gpu_memcpy"}
    )
    compute_us = 50_000 + 10_000 * rank if compute_us is None else compute_us
    events: list[dict[str, Any]] = []
    corr = 1000
    pid, tid = 100 + rank, 100 + rank

    def host(c: str, name: str, ts: int, dur: int, **args: Any) -> None:
        events.append(
            {"ph": "X", "cat": cat[c], "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}
        )

    def gpu(c: str, name: str, ts: int, dur: int, stream: int, correlation: int) -> None:
        ts -= device_lag_us
        ev = {
            "ph": "X",
            "cat": cat[c],
            "name": name,
            "pid": 0,
            "tid": f"stream {stream}" if legacy else stream,
            "ts": ts,
            "dur": dur,
            "args": {"correlation": correlation}
            if legacy
            else {"device": 0, "stream": stream, "correlation": correlation},
        }
        events.append(ev)

    for s in range(1, steps + 1):
        t = T0_US + skew_us * rank + (s - 1) * STEP_US
        last = s == steps
        host("ann", f"ProfilerStep#{s}", t, STEP_US)
        host("ann", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", t, 10_000)
        corr += 1
        host("rt", "cudaMemcpyAsync", t + 4_990, 5, correlation=corr)
        if not (last and drop_last_kernels):
            gpu("cp", "Memcpy HtoD (Pageable -> Device)", t + 5_000, 1_000, 7, corr)
        corr += 1
        host(
            "op",
            "aten::mm",
            t + 9_990,
            20,
            **({"Input Dims": mm_dims, "Input type": ["float"] * len(mm_dims)} if mm_dims else {}),
        )
        if memory_mb is not None:  # one allocation per step and its free: peak allocated memory_mb, reserved twice that
            for ts, nbytes, allocated in ((t + 9_995, memory_mb, memory_mb), (t + 95_000, -memory_mb, 0.0)):
                events.append(
                    {
                        "ph": "i",
                        "s": "t",
                        "cat": "cpu_instant_event",
                        "name": "[memory]",
                        "pid": pid,
                        "tid": tid,
                        "ts": ts,
                        "args": {
                            "Device Type": 1,
                            "Device Id": 0,
                            "Bytes": int(nbytes * 2**20),
                            "Total Allocated": int(allocated * 2**20),
                            "Total Reserved": int(2 * memory_mb * 2**20),
                        },
                    }
                )
        host("rt", "cudaLaunchKernel", t + 10_000, 5, correlation=corr)
        if not (last and drop_last_kernels):
            gpu("k", "volta_sgemm_128x64_nn", t + 10_050, compute_us, 7, corr)
        corr += 1
        host("op", "nccl:all_reduce", t + 10_055, 15)
        if backward:  # host-only markers of a training step: a backward pass per micro-batch, one optimizer step
            for i in range(accumulation):
                at = t + 10_070 + 100 * i
                if i:  # the next micro-batch's forward pass between two backward passes
                    for j in range(10):
                        host("op", "aten::linear", at + 5 * j, 2)
                host("op", "autograd::engine::evaluate_function: MmBackward0", at + 60 if i else at, 2)
            host(
                "op",
                "Optimizer.step#SGD.step",
                t + 10_080 + 100 * (accumulation - 1) + (60 if accumulation > 1 else 0),
                5,
            )
        host("rt", "cudaLaunchKernel", t + 10_060, 5, correlation=corr)
        if not (last and drop_last_kernels):
            start = t + 10_050 + compute_us - 2_000
            gpu(
                "k",
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                start,
                t + 90_000 - start,
                20,
                corr,
            )
        if s == 3:
            host("ann", "save_checkpoint", t + 90_000, 5_000)
    # Flow and instant events a reader must skip.
    events.append({"ph": "s", "id": 1, "pid": pid, "tid": tid, "ts": T0_US, "cat": "ac2g", "name": "ac2g"})
    events.append(
        {"ph": "i", "s": "t", "pid": pid, "tid": tid, "ts": T0_US, "cat": "cpu_instant_event", "name": "[memory]"}
    )
    return events


def trace(
    rank: int, world: int = 2, generation: str = "absolute", *, device: str | None = "NVIDIA A100-SXM4-80GB", **kw: Any
) -> dict[str, Any]:
    """generation: "legacy" (2021 names), "absolute" (integer us), "relative" (float us + baseTimeNanoseconds)."""
    events = rank_events(rank, legacy=generation == "legacy", **kw)
    doc: dict[str, Any] = {"schemaVersion": 1}
    if device:
        doc["deviceProperties"] = [
            {"id": 0, "name": device, "totalGlobalMem": 85e9, "computeMajor": 8, "computeMinor": 0, "numSms": 108}
        ]
    doc["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": world}
    if generation == "relative":
        shift = BASE_NS // 1000
        for ev in events:
            ev["ts"] = round(ev["ts"] - shift + 0.0, 3)
            if "dur" in ev:
                ev["dur"] = float(ev["dur"])
    doc["traceEvents"] = events
    doc["traceName"] = f"rank{rank}.json"
    if generation == "relative":
        doc["baseTimeNanoseconds"] = BASE_NS
    return doc


def write(path: Path, doc: dict[str, Any], *, compact: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, separators=(",", ":")) if compact else json.dumps(doc, indent=1)
    if path.suffix == ".gz":
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    return path
