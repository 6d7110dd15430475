"""Generate the small Kineto traces of the step-less and CUDA-graph shapes (issue 44).

Written from the writer's source, PyTorch 2.5's profiler (Kineto, CUPTI 12.4): the
2024 generation (float microseconds relative to a top-level ``baseTimeNanoseconds``
written after ``traceEvents``), ``cpu_op`` / ``user_annotation`` / ``cuda_runtime`` /
``kernel`` / ``gpu_memcpy`` categories and their ``args`` (``External id``,
``correlation``, ``device``, ``stream``, ``cbid``). The annotations are PyTorch's own
``record_function`` names: ``Optimizer.step#SGD.step`` and
``Optimizer.zero_grad#SGD.zero_grad`` (torch/optim/optimizer.py), and
``enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__``
(torch/utils/data/dataloader.py ``_BaseDataLoaderIter.__next__``). A CUDA-graph replay
is one ``cudaGraphLaunch`` runtime call (cbid 311) whose kernels CUPTI did not record
(graph-level tracing off), as in traces of ``torch.cuda.graphs`` / ``torch.compile``
``mode="reduce-overhead"`` runs.

Figures the tests check by hand are stated here:

- ``stepless/optimizer-steps.json.gz``: 30 iterations, no ``ProfilerStep#``. Iteration k
  (1..30) lasts ``200 + 3 * (k % 4)`` ms: it starts with the data loader's ``__next__``
  and ends where its ``Optimizer.step#SGD.step`` ends, exactly where the next begins.
- ``stepless/no-annotations.json.gz``: the same work with neither annotation (nor steps).
- ``nsys-schema2/schema2.sqlite``: an Nsight Systems export of schema major 2: the metadata table
  is ``EXPORT_META_DATA`` (name, value), as before the 2024 rename to ``META_DATA_EXPORT``,
  and the kernel and runtime tables carry the columns of the 2019 schema reference (nsys
  10.1 user guide, "SQLite Export Schema Reference"). The version value is chosen for the
  test (a 2.x), not copied from a release.
- ``cuda-graph/graph-replay.json.gz``: 8 ``ProfilerStep#`` of 20 ms; each copies its
  input (0.2 ms), replays a graph (one ``cudaGraphLaunch``, about 10 ms of kernels not in
  the trace) and then launches one sampling kernel at 9 ms: 8 graph launches and 8
  kernel launches against 8 recorded kernels.

Deterministic. Run from the repository root: ``python tests/data/training/make_traces.py``.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
BASE_NS = 1_729_500_000_000_000_000  # baseTimeNanoseconds (2024-10-21)
PID = 4711
DEVICE = {
    "id": 0,
    "name": "NVIDIA H100 80GB HBM3",
    "totalGlobalMem": 84929347584,
    "computeMajor": 9,
    "computeMinor": 0,
    "maxThreadsPerBlock": 1024,
    "maxThreadsPerMultiprocessor": 2048,
    "regsPerBlock": 65536,
    "regsPerMultiprocessor": 65536,
    "warpSize": 32,
    "sharedMemPerBlock": 49152,
    "sharedMemPerMultiprocessor": 233472,
    "numSms": 132,
    "sharedMemPerBlockOptin": 232448,
}
LOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
OPTIMIZER = "Optimizer.step#SGD.step"


class Trace:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.external = 0
        self.correlation = 100

    def host(self, cat: str, name: str, ts_ms: float, dur_ms: float, **args: Any) -> None:
        self.external += 1
        self.events.append(
            {
                "ph": "X",
                "cat": cat,
                "name": name,
                "pid": PID,
                "tid": PID,
                "ts": round(ts_ms * 1000, 3),
                "dur": round(dur_ms * 1000, 3),
                "args": {"External id": self.external, **args},
            }
        )

    def launch(self, call: str, cbid: int, ts_ms: float, kernel: str | None, k_ts_ms: float, k_dur_ms: float) -> None:
        """A runtime launch call and, unless ``kernel`` is None, the kernel CUPTI recorded for it."""
        self.correlation += 1
        self.host("cuda_runtime", call, ts_ms, 0.006, cbid=cbid, correlation=self.correlation)
        if kernel is None:
            return
        cat = "gpu_memcpy" if kernel.startswith("Memcpy") else "kernel"
        self.events.append(
            {
                "ph": "X",
                "cat": cat,
                "name": kernel,
                "pid": 0,
                "tid": 7,
                "ts": round(k_ts_ms * 1000, 3),
                "dur": round(k_dur_ms * 1000, 3),
                "args": {
                    "External id": self.external,
                    "device": 0,
                    "context": 1,
                    "stream": 7,
                    "correlation": self.correlation,
                },
            }
        )

    def document(self, name: str) -> dict[str, Any]:
        return {
            "schemaVersion": 1,
            "deviceProperties": [DEVICE],
            "cupti_version": 24,
            "cuda_runtime_version": 12040,
            "cuda_driver_version": 12040,
            "profile_memory": 0,
            "with_stack": 0,
            "record_shapes": 0,
            "trace_id": "5A3F0C1E9B2D4E6F8A7B9C0D1E2F3A4B",
            "displayTimeUnit": "ms",
            "traceEvents": self.events,
            "traceName": name,
            "baseTimeNanoseconds": BASE_NS,
        }


def iteration_ms(k: int) -> float:
    return 200.0 + 3.0 * (k % 4)


def stepless(annotated: bool) -> dict[str, Any]:
    t = Trace()
    start = 1.0
    for k in range(1, 31):
        d = iteration_ms(k)
        if annotated:
            t.host("user_annotation", LOADER, start, 4.0)
            t.host("user_annotation", "Optimizer.zero_grad#SGD.zero_grad", start + 4.05, 0.02)
        t.host("cpu_op", "aten::copy_", start + 4.1, 0.05)
        t.launch("cudaMemcpyAsync", 41, start + 4.11, "Memcpy HtoD (Pageable -> Device)", start + 4.2, 0.5)
        t.host("cpu_op", "aten::linear", start + 5.0, 0.1)
        t.launch("cudaLaunchKernel", 211, start + 5.05, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", start + 5.1, 120.0)
        t.host("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", start + 6.0, 0.2)
        t.host("cpu_op", "aten::mm", start + 6.05, 0.1)
        t.launch("cudaLaunchKernel", 211, start + 6.1, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n", start + 125.2, 60.0)
        if annotated:
            t.host("user_annotation", OPTIMIZER, start + d - 1.0, 1.0)
        t.host("cpu_op", "aten::_foreach_add_", start + d - 0.9, 0.3)
        t.launch(
            "cudaLaunchKernel",
            211,
            start + d - 0.85,
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel",
            start + d - 0.8,
            0.6,
        )
        start += d
    return t.document("optimizer-steps.json" if annotated else "no-annotations.json")


def graph_replay() -> dict[str, Any]:
    t = Trace()
    for s in range(1, 9):
        start = 1.0 + (s - 1) * 20.0
        t.host("user_annotation", f"ProfilerStep#{s}", start, 20.0)
        t.host("cpu_op", "aten::copy_", start + 0.1, 0.05)
        t.launch("cudaMemcpyAsync", 41, start + 0.12, "Memcpy HtoD (Pinned -> Device)", start + 0.2, 0.2)
        t.host("cpu_op", "CUDAGraph::replay", start + 0.5, 0.1)
        t.launch("cudaGraphLaunch", 311, start + 0.55, None, 0, 0)  # ~10 ms of kernels, none recorded
        t.host("cpu_op", "aten::argmax", start + 9.0, 0.05)
        t.launch("cudaLaunchKernel", 211, start + 9.01, "void at::native::reduce_kernel<512, 1>", start + 11.0, 0.3)
    return t.document("graph-replay.json")


def schema2(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    con.executescript(
        """
        CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT NOT NULL, end INT NOT NULL, globalTid INT NOT NULL,
            correlationId INT NOT NULL, nameId INT NOT NULL, returnValue INT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,
            contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT NOT NULL, globalPid INT NOT NULL,
            demangledName INT NOT NULL, shortName INT NOT NULL);
        INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'sgemm_128x64_nn');
        INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_SCHEMA_VERSION', '2.7.1');
        INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1000, 1006, 72057594037927937, 7, 1, 0);
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1100, 2100, 0, 1, 7, 7, 72057594037927936, 2, 2);
        """
    )
    con.commit()
    con.close()


def write(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(doc, separators=(",", ":")).encode()
    path.write_bytes(gzip.compress(data, mtime=0))


if __name__ == "__main__":
    write(HERE / "stepless" / "optimizer-steps.json.gz", stepless(annotated=True))
    write(HERE / "stepless" / "no-annotations.json.gz", stepless(annotated=False))
    write(HERE / "cuda-graph" / "graph-replay.json.gz", graph_replay())
    schema2(HERE / "nsys-schema2" / "schema2.sqlite")
