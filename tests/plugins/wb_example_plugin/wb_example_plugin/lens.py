"""The ``toy`` lens: requests on one machine; the primary metric is the mean latency."""

from __future__ import annotations

import numpy as np

from lenses.base import WINDOW_DIMENSION, DimensionSpec, Lens, MetricSpec, column, mean_of, observed_window
from store.records import Dimension, RunRecord


class ToyLens(Lens):
    def primary_value(self, run: RunRecord) -> float:
        return mean_of(column(run, "latency_ms"))

    def observed_dimensions(self, run: RunRecord) -> dict[str, Dimension]:
        return observed_window(run)

    def item_series(self, run: RunRecord) -> dict[str, np.ndarray]:
        latency = column(run, "latency_ms")
        return {} if latency is None else {"latency": latency}


LENS = ToyLens(
    name="toy",
    title="Toy latency",
    dimensions=(
        DimensionSpec("machine", "Machine", True),
        DimensionSpec(WINDOW_DIMENSION, "Window kind", True, changeable=False),
        DimensionSpec("build", "Build", False),
    ),
    primary=MetricSpec("mean_latency", "mean latency", "ms"),
    phases=(),
    phase_note="Toy runs have no phases.",
    work_unit="requests",
    # What wb inspect and the TUI call the per-request series (the defaults fit any lens).
    item_measure=MetricSpec("latency", "latency by request", "ms"),
    item_order="request order",
)
