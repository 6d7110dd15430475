"""What a sample column can physically hold: one table of plausible ranges for every lens.

A value outside its range is not a measurement (a ``-1`` sentinel, ``1e308`` from a corrupt
file, a kernel ending at 2^62 ns that makes a 146-year step, clocks of two processes): the
lens check (``Lens.check_samples``) keeps it as unknown and says why, so it never reaches a
headline. Importers that screen while they read (``workbench.formats.inference_records``)
take their bounds from here too, so there is one table.

The ranges are generous on purpose: they catch values no run can produce, not slow runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from store.records import RunRecord
from store.run_meta import SampleFinding

# No request, step or kernel takes longer than this: about 11.6 days.
DURATION_BOUND_MS = 1e9
# No job waits a year in a queue that is being measured.
WAIT_BOUND_S = 366 * 86400.0
# Times of jobs are epoch seconds (or seconds from a window's own origin): never negative,
# never past 2100-01-01.
TIME_BOUND_S = 4102444800.0


@dataclass(frozen=True)
class Plausible:
    """The range ``[low, high]`` (``(low, high]`` when ``low_open``: a step has a positive
    duration) of one column, in ``unit``; ``what`` names the quantity in sentences."""

    low: float
    high: float
    unit: str
    what: str
    low_open: bool = False

    def outside(self, values: np.ndarray) -> np.ndarray:
        """Where ``values`` are known (not NaN) and outside the range (infinities included)."""
        with np.errstate(invalid="ignore"):
            below = values <= self.low if self.low_open else values < self.low
            return ~np.isnan(values) & (below | (values > self.high))

    def range_text(self) -> str:
        return f"{'(' if self.low_open else '['}{self.low:g}, {self.high:g}] {self.unit}"

    def why(self, value: float) -> str:
        """Why ``value`` is outside: negative, zero (for a positive quantity), infinite or past the bound."""
        if math.isnan(value):
            return "unknown"
        if math.isinf(value):
            return "infinite"
        if value < 0:
            return "negative"
        if value <= self.low:
            return "not positive"
        return f"beyond {self.high:g} {self.unit}"


def _latency(what: str) -> Plausible:
    return Plausible(0.0, DURATION_BOUND_MS, "ms", what)


def _count(what: str, high: float = 1e12) -> Plausible:
    return Plausible(0.0, high, "", what)


_TIME = Plausible(0.0, TIME_BOUND_S, "s", "a job time")

# lens -> table -> column -> range. Columns not listed are not bounded (extra columns of a
# capture, ids, text).
PLAUSIBLE: dict[str, dict[str, dict[str, Plausible]]] = {
    "inference": {
        "samples": {
            **{
                c: _latency("a request latency")
                for c in (
                    "queue_ms",
                    "prefill_ms",
                    "decode_ms",
                    "ttft_ms",
                    "e2e_ms",
                    "itl_ms",
                    "tpot_ms",
                    "frontend_ms",
                    "client_queue_ms",
                )
            },
            "prompt_tokens": _count("a token count", 1e9),
            "output_tokens": _count("a token count", 1e9),
        },
        "itl": {"itl_ms": _latency("an inter-token gap")},
    },
    "training": {
        "samples": {
            "step_ms": Plausible(0.0, DURATION_BOUND_MS, "ms", "a step's duration", low_open=True),
            **{
                c: _latency("a step's phase")
                for c in (
                    "input_ms",
                    "compute_ms",
                    "communication_ms",
                    "checkpoint_ms",
                    "communication_overlapped_ms",
                    "memcpy_ms",
                    "other_ms",
                    "gpu_busy_ms",
                    "idle_ms",
                    "kernel_sum_ms",
                    "host_api_ms",
                    "input_wait_ms",
                    "host_submission_ms",
                    "idle_unresolved_ms",
                )
            },
            "samples": _count("a batch size"),
            "tokens": _count("a token count"),
        },
    },
    "fleet": {
        "samples": {
            "submit": _TIME,
            "eligible": _TIME,
            "start": _TIME,
            "end": _TIME,
            "gpus": _count("a gang size", 1e6),
        },
    },
}


def screen(run: RunRecord, ranges: dict[str, dict[str, Plausible]]) -> list[SampleFinding]:
    """Set every value of ``run``'s tables outside its range to unknown (NaN), in place; one
    finding per column. Tables kept outside memory (a spooled table) are not screened here."""
    found: list[SampleFinding] = []
    for table, columns in ranges.items():
        cols = run.tables.get(table)
        if not isinstance(cols, dict):
            continue
        for name, plausible in columns.items():
            values = cols.get(name)
            if not isinstance(values, np.ndarray) or values.dtype.kind != "f" or not values.size:
                continue
            bad = plausible.outside(values)
            if not bad.any():
                continue
            first = float(values[int(np.argmax(bad))])
            count = int(bad.sum())
            values = cols[name] = values.copy()  # never write through a view of the importer's buffers
            values[bad] = np.nan
            found.append(
                SampleFinding(
                    code="implausible",
                    text=f"{table}.{name}: {count:,} value(s) outside {plausible.range_text()} kept as unknown "
                    f"(first {first:g}: {plausible.why(first)}; not {plausible.what})",
                    count=count,
                    of=int(values.size),
                )
            )
    return found
