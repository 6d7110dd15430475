"""One rank's trace, normalized: what both the Kineto and the Nsight Systems importers produce.

Only what the training breakdown needs is kept, as columns: GPU activities, host
CUDA API calls, CPU operators, step ranges, data-loader waits and checkpoint ranges.
Times are int64 nanoseconds on the rank's own clock (epoch nanoseconds when the
format says so, see ``clock``); names are interned into ``names``.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# GPU activity kinds (column ``gpu_kind``).
KERNEL, COLLECTIVE, MEMCPY, MEMSET = 0, 1, 2, 3

# Communication kernels across NCCL/RCCL generations: ncclKernel_* (2.1x), ncclDevKernel_*
# (>= 2.19, and RCCL's ncclDevKernel_Generic), ncclSymDevKernel_*, rccl*. Not HTA's ``^hip``,
# which would call any HIP kernel communication.
_COMM_NAME = re.compile(r"^(nccl|rccl)|nccl(Dev|Sym)?Kernel", re.IGNORECASE)


def is_communication_kernel(name: str) -> bool:
    return bool(_COMM_NAME.search(name))


# Host-side data-loader waits: PyTorch's record_function around ``next(dataloader)``.
_LOADER_NAME = re.compile(r"^enumerate\(DataLoader\)#|DataLoaderIter\.__next__|^DataLoader\b")
# Checkpoint saves (not activation checkpointing, which is recompute, not I/O).
_CHECKPOINT_NAME = re.compile(
    r"(save|write|async_save|dcp)[ _.:]*(distributed_)?checkpoint|checkpoint[ "
    r"_.:]*(save|write)|^dcp[.:]+save|torch\.distributed\.checkpoint",
    re.IGNORECASE,
)
_STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")


def is_loader_wait(name: str) -> bool:
    return bool(_LOADER_NAME.search(name))


def is_checkpoint(name: str) -> bool:
    return bool(_CHECKPOINT_NAME.search(name))


def step_number(name: str) -> int | None:
    m = _STEP_NAME.match(name)
    return int(m.group(1)) if m else None


class Names:
    """String interning: one id per distinct name."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.values: list[str] = []

    def id(self, name: str) -> int:
        found = self.ids.get(name)
        if found is None:
            found = self.ids[name] = len(self.values)
            self.values.append(name)
        return found


class Columns:
    """Append-only typed columns (``array`` keeps them compact while streaming)."""

    def __init__(self, **typecodes: str) -> None:
        self._cols = {name: array(code) for name, code in typecodes.items()}
        for name, col in self._cols.items():
            setattr(self, name, col)

    def finish(self) -> dict[str, np.ndarray]:
        return {
            name: np.frombuffer(col, dtype=col.typecode).copy()
            if len(col)
            else np.zeros(0, dtype=np.dtype(col.typecode))
            for name, col in self._cols.items()
        }


def _empty(*names: str, dtype: Any = np.int64) -> dict[str, np.ndarray]:
    return {n: np.zeros(0, dtype=dtype) for n in names}


def empty_gpu() -> dict[str, np.ndarray]:
    return _empty("start", "end", "kind", "stream", "correlation", "name", "device")


def empty_runtime() -> dict[str, np.ndarray]:
    return _empty("start", "end", "correlation", "name")


@dataclass
class RankTrace:
    """One rank's activity. Interval tables have ``start`` and ``end`` (int64 ns)."""

    source: Path
    rank: int | None
    world_size: int | None
    names: list[str]
    # GPU activities: start, end, kind (KERNEL...), stream, correlation (-1 when absent), name, device
    gpu: dict[str, np.ndarray] = field(default_factory=empty_gpu)
    # Host CUDA runtime/driver calls: start, end, correlation, name
    runtime: dict[str, np.ndarray] = field(default_factory=empty_runtime)
    # CPU operators and user annotations (inclusive durations): start, end, name
    ops: dict[str, np.ndarray] = field(default_factory=lambda: _empty("start", "end", "name"))
    # Step ranges: number, start, end
    steps: dict[str, np.ndarray] = field(default_factory=lambda: _empty("number", "start", "end"))
    loader: dict[str, np.ndarray] = field(default_factory=lambda: _empty("start", "end"))
    checkpoint: dict[str, np.ndarray] = field(default_factory=lambda: _empty("start", "end"))
    # Recorded shapes (``record_shapes``): the ``shape`` columns of ``gpu`` and ``ops`` index
    # into ``shapes`` (-1: none recorded); absent columns mean the format has none.
    shapes: list[str] = field(default_factory=list)
    # Device caching-allocator events (``[memory]``, ``[OutOfMemory]``): time (ns),
    # allocated, reserved and bytes (this event's allocation, negative when freed), oom.
    memory: dict[str, np.ndarray] | None = None
    # Device names (hardware identity) of the GPUs this rank used; empty = unknown.
    devices: list[str] = field(default_factory=list)
    framework: str | None = None
    # "epoch" when times are Unix-epoch ns, "session" when on the capture's own timebase.
    clock: str = "epoch"
    meta: dict[str, object] = field(default_factory=dict)  # the trace's own metadata, as the importer kept it
    # Whether the format can carry these at all (False: the column is unknown, not zero).
    has_host_api: bool = True
    has_loader_annotations: bool = False
    has_checkpoint_annotations: bool = False

    @property
    def span(self) -> tuple[int, int] | None:
        """First start and last end over everything recorded."""
        starts = [t["start"].min() for t in (self.gpu, self.runtime, self.ops, self.steps) if len(t["start"])]
        ends = [t["end"].max() for t in (self.gpu, self.runtime, self.ops, self.steps) if len(t["end"])]
        if not starts:
            return None
        return int(min(starts)), int(max(ends))
