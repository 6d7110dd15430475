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

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from workbench.training import breakdown as bd
from workbench.training import step_facts as sf
from workbench.training.model import RankTrace


@dataclass
class RankSummary:
    source: Path
    rank: int | None
    world_size: int | None
    devices: list[str]
    framework: str | None
    meta: dict[str, object]  # RankTrace.meta
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
    # Per window (``step_facts``): checkpoint host time, optimizer steps, backward operators and passes.
    facts: dict[str, np.ndarray] = field(default_factory=dict)
    host_device_clock: dict[str, float] = field(default_factory=dict)
    launches: dict[str, float] = field(default_factory=dict)  # breakdown.launch_coverage: launch calls vs kernels
    first_collectives: dict[str, np.ndarray] = field(default_factory=dict)
    memory: dict[str, np.ndarray] | None = None  # per window; None: no allocator events in the trace
    # Operators and kernels by recorded shape (text columns coded as in ``operations``); None: no shapes.
    shape_ops: dict[str, np.ndarray] | None = None
    shape_labels: dict[str, list[str]] = field(default_factory=dict)

    def operations_table(self) -> dict[str, np.ndarray]:
        """The operations table as ``breakdown.rank_operations`` made it."""
        return _decode(self.operations, self.labels)

    def shape_table(self) -> dict[str, np.ndarray] | None:
        """Operators and kernels by shape, as ``step_facts.shape_operations`` made them."""
        if self.shape_ops is None:
            return None
        table = _decode(self.shape_ops, self.shape_labels)
        table["rank"] = np.full(len(table["count"]), np.nan if self.rank is None else float(self.rank))
        return table


def share_labels(summary: RankSummary, vocabulary: dict[str, str]) -> RankSummary:
    """The summary with its text labels replaced by the job's one copy of each string.

    Each rank's summary arrives with its own copies of the same kernel names (a few
    hundred, up to 2,000 characters each); kept as they are, a 1,024-rank job would hold
    1,024 copies. Shared, the client's text grows with the distinct names, not the ranks."""
    summary.labels = {k: [vocabulary.setdefault(v, v) for v in values] for k, values in summary.labels.items()}
    summary.shape_labels = {
        k: [vocabulary.setdefault(v, v) for v in values] for k, values in summary.shape_labels.items()
    }
    return summary


def _encode(table: dict[str, np.ndarray], columns: tuple[str, ...]) -> dict[str, list[str]]:
    labels: dict[str, list[str]] = {}
    for column in columns:
        values, codes = np.unique(table[column], return_inverse=True)
        labels[column] = values.tolist()
        table[column] = codes.astype(np.int32)
    return labels


def _decode(coded: dict[str, np.ndarray], labels: dict[str, list[str]]) -> dict[str, np.ndarray]:
    table = dict(coded)
    for column, values in labels.items():
        codes = table[column]
        # Objects, not fixed-width: every row of a name points at one shared string.
        lookup = np.empty(len(values), dtype=object)
        lookup[:] = values
        table[column] = lookup[codes] if len(codes) else np.zeros(0, dtype=object)
    return table


def summarize(trace: RankTrace) -> RankSummary:
    windows = bd.step_windows(trace)
    samples = bd.rank_samples(trace, windows, 0)
    del samples["step_start_ms"]
    operations = bd.rank_operations(trace, windows)
    labels = _encode(operations, ("name", "kind"))
    shape_ops = sf.shape_operations(trace, windows)
    shape_labels: dict[str, list[str]] = {}
    if shape_ops is not None:
        # Names share the operations' vocabulary (every shaped name is there), so only shapes add text.
        shape_labels = {"name": labels["name"], **_encode(shape_ops, ("shape", "kind"))}
        shape_ops["kind"] = shape_ops["kind"].astype(np.int8)
        shape_ops["name"] = np.searchsorted(np.array(labels["name"], dtype=str), shape_ops["name"]).astype(np.int32)
    size = trace.source.stat().st_size if trace.source.exists() else 0
    return RankSummary(
        source=trace.source,
        rank=trace.rank,
        world_size=trace.world_size,
        devices=list(trace.devices),
        framework=trace.framework,
        meta=trace.meta,
        span=trace.span,
        windows=windows,
        unmatched=bd.unmatched_launches(trace, windows),
        samples=samples,
        operations=operations,
        labels=labels,
        read_bytes=size,
        facts=sf.step_facts(trace, windows),
        host_device_clock=sf.host_device_clock(trace),
        launches=bd.launch_coverage(trace),
        first_collectives=sf.first_collectives(trace, windows),
        memory=sf.memory_steps(trace, windows),
        shape_ops=shape_ops,
        shape_labels=shape_labels,
    )
