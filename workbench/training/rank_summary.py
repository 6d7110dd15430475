"""One rank reduced to what the job needs: computed where the rank was read.

A rank's trace holds every kernel, call and operator (tens of MB of columns for a
large rank); a training run needs only its per-step breakdown, its operations table
and its metadata. ``summarize`` computes those beside the reader (in the worker
process or on the cluster worker), so only the small summary crosses back to the
client. What depends on the other ranks (the job's time origin, which steps are
warm-up or incomplete) is decided later in ``job.build_job`` from the summaries:
the step windows, their unmatched kernel launches and the rank's span travel with
it for that.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.training import breakdown as bd
from workbench.training.model import RankTrace


@dataclass
class RankSummary:
    source: Path
    rank: int | None
    world_size: int | None
    devices: list[str]
    framework: str | None
    meta: dict[str, Any]
    span: tuple[int, int] | None
    windows: bd.Windows
    unmatched: np.ndarray  # kernel launches with no kernel in the trace, per window
    samples: dict[str, np.ndarray]  # step_start_ms is filled in by build_job (needs the job's origin)
    # The operations table with its text columns (name, kind) as codes into ``labels``:
    # a fixed-width numpy string column is as wide as its longest kernel name (2,000
    # characters is common), which would make the summary larger than the trace.
    operations: dict[str, np.ndarray]
    labels: dict[str, list[str]]
    read_bytes: int = 0  # the file's size where it was read

    def operations_table(self) -> dict[str, np.ndarray]:
        """The operations table as ``breakdown.rank_operations`` made it."""
        table = dict(self.operations)
        for column, values in self.labels.items():
            codes = table[column]
            table[column] = np.array(values, dtype=str)[codes] if len(codes) else np.zeros(0, dtype="<U1")
        return table


def summarize(trace: RankTrace) -> RankSummary:
    windows = bd.step_windows(trace)
    samples = bd.rank_samples(trace, windows, 0)
    del samples["step_start_ms"]
    operations = bd.rank_operations(trace, windows)
    labels: dict[str, list[str]] = {}
    for column in ("name", "kind"):
        values, codes = np.unique(operations[column], return_inverse=True)
        labels[column] = values.tolist()
        operations[column] = codes.astype(np.int32)
    size = trace.source.stat().st_size if trace.source.exists() else 0
    return RankSummary(
        source=trace.source, rank=trace.rank, world_size=trace.world_size, devices=list(trace.devices),
        framework=trace.framework, meta=trace.meta, span=trace.span, windows=windows,
        unmatched=bd.unmatched_launches(trace, windows), samples=samples,
        operations=operations, labels=labels, read_bytes=size,
    )
