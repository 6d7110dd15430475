"""The fleet lens: one sample is a job; a run is an observation window of a GPU pool.

Window metrics (capture-format.md): queue wait = start − eligible over the jobs that
started inside the window (eligible comes from the eligibility history; without it the
wait is unknown, never start − submit in disguise); allocated GPUs = time-weighted mean
over the window, and at its end; waiting jobs = eligible but not started at the
window's end, with their gang sizes.

Waits that have not ended are still waits (docs/lenses.md, "Censored waits"): a job
eligible and still waiting at the window's end has waited at least (end − eligible), a
right-censored wait. It is kept as a lower bound: in the mean wait with the waiting jobs
included (a lower bound of the mean), in the Kaplan–Meier median wait (``survival``:
scipy's ``ecdf`` on ``CensoredData``, in numpy), and in service attainment: a started
job met or missed ``wait_target_s``; a waiting job already past it is a known miss; one
still within it is pending (unknown: attainment is over the decided jobs, with bounds that count the
pending jobs as met and as missed).

Samples carry epoch seconds with ``nan`` for unknown; the pool is
``run.meta["pool"] = {"capacity_gpus", "window_start", "window_end", "wait_target_s"}``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from lenses.base import NAN, WINDOW_DIMENSION, DimensionSpec, Lens, MetricSpec, column, finite, observed_window
from lenses.job_check import check_jobs
from store.records import Dimension, RunRecord
from store.run_meta import Pool, SampleFinding

_RECORDED_WORDS = {"recorded", "yes", "true", "1", "complete", "present", "available"}


def _epoch(value: float | str | None) -> float:
    """A pool figure (``store.run_meta.Pool``): the number, or text read as one or as an ISO time."""
    if value is None:
        return NAN
    try:
        return float(value)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return NAN
    return dt.timestamp() if dt.tzinfo else NAN  # a time without a zone is not guessed


def eligibility_equal(a: Any, b: Any) -> bool:
    def norm(v: Any) -> str:
        s = " ".join(str(v).split()).casefold()
        if s in _RECORDED_WORDS:
            return "recorded"
        return "partial" if s.startswith("partial") else s  # "partial (24 of 25 jobs)"

    return norm(a) == norm(b)


@dataclass(frozen=True)
class FleetWindow:
    """Everything the fleet lens reads from one run, computed once."""

    start: float
    end: float
    capacity: float
    wait_target_s: float
    waits: np.ndarray  # start − eligible of jobs that started inside the window
    censored: np.ndarray  # end − eligible of jobs still waiting at the window's end (lower bounds)
    attained: float  # share of decided jobs within target (0..1), nan when unknown
    met: int  # started within the target
    missed: int  # started after waiting longer than the target
    known_misses: int  # still waiting, already longer than the target
    pending: int  # still waiting, not yet past the target: undecided
    allocated_mean: float
    allocated_end: float
    waiting_gangs: tuple[int, ...]  # gang sizes of jobs waiting at the window's end
    eligibility_known: bool
    gpu_hours: float
    starts_known: bool = True  # False when the run has no start column: who waited is unknown

    @property
    def attainment_bounds(self) -> tuple[float, float]:
        """Attainment with the pending jobs counted as missed, and as met (0..1)."""
        total = self.met + self.missed + self.known_misses + self.pending
        if not total or not math.isfinite(self.wait_target_s):
            return NAN, NAN
        return self.met / total, (self.met + self.pending) / total

    @property
    def mean_wait_lower(self) -> float:
        """Mean wait with the waiting jobs at their elapsed wait: a lower bound of the mean."""
        both = np.concatenate([self.waits, self.censored])
        return float(both.mean()) if both.size else NAN

    def km_median(self) -> tuple[float, float]:
        """(Kaplan–Meier median wait, the time it is known to exceed). The median is the
        smallest finished wait t with S(t) ≤ 0.5; when S never falls to 0.5 (most jobs
        still waiting) it is ``nan`` and the second value is the longest wait seen, which
        it exceeds. ``(nan, nan)`` without waits."""
        return km_median(self.waits, self.censored)

    @property
    def idle_end(self) -> float:
        if not (math.isfinite(self.capacity) and math.isfinite(self.allocated_end)):
            return NAN
        return self.capacity - self.allocated_end


def read_window(run: RunRecord) -> FleetWindow:
    pool = run.typed_meta.pool or Pool()
    gpus = column(run, "gpus")
    n = run.sample_count
    nan_col = np.full(n, np.nan)
    gpus = gpus if gpus is not None else nan_col
    submit = column(run, "submit")
    eligible = column(run, "eligible")
    start = column(run, "start")
    starts_known = start is not None
    end = column(run, "end")
    submit = submit if submit is not None else nan_col
    eligible = eligible if eligible is not None else nan_col
    start = start if start is not None else nan_col
    end = end if end is not None else nan_col

    ws, we = _epoch(pool.window_start), _epoch(pool.window_end)
    if not math.isfinite(ws):
        known = finite(np.concatenate([eligible, submit, start]))
        ws = float(known.min()) if known.size else NAN
    if not math.isfinite(we):
        known = finite(np.concatenate([end, start]))
        we = float(known.max()) if known.size else NAN
    capacity = _epoch(pool.capacity_gpus)
    target = _epoch(pool.wait_target_s)

    started_in = np.isfinite(start) & (start >= ws) & (start <= we)
    waits = (start - eligible)[started_in & np.isfinite(eligible)]
    eligibility_known = bool(n) and bool(np.isfinite(eligible).all())

    # Jobs still waiting at the window's end: eligible before the end, not started by
    # then, not ended before it. Only when the run has no eligibility history at all
    # does submission stand in (and the observation then says idle GPUs may not be usable).
    ready = eligible if np.isfinite(eligible).any() else submit
    not_started = ~np.isfinite(start) | (start > we)
    not_gone = ~np.isfinite(end) | (end > we)
    waiting = np.isfinite(ready) & (ready <= we) & not_started & not_gone & starts_known
    waiting_gangs = tuple(int(g) for g in gpus[waiting] if math.isfinite(g))

    # Right-censored waits: eligible (known), still waiting at the window's end.
    censored = (we - eligible)[waiting & np.isfinite(eligible)]
    if math.isfinite(target):
        met, missed = int((waits <= target).sum()), int((waits > target).sum())
        known_misses, pending = int((censored > target).sum()), int((censored <= target).sum())
    else:
        met = missed = known_misses = pending = 0
    decided = met + missed + known_misses
    attained = met / decided if decided else NAN

    # GPUs allocated over time: every job's [start, end) clipped to the window.
    span = we - ws
    run_from = np.clip(start, ws, we)
    run_to = np.clip(np.where(np.isfinite(end), end, we), ws, we)
    # A job that held GPUs in the window with an unknown gang size makes the total unknown, not smaller.
    ran = np.isfinite(start) & (run_to > run_from)
    gpu_seconds = float((gpus[ran] * (run_to[ran] - run_from[ran])).sum())  # NaN when a gang size is unknown
    allocated_mean = gpu_seconds / span if math.isfinite(span) and span > 0 else NAN
    at_end = np.isfinite(start) & (start <= we) & (~np.isfinite(end) | (end > we))
    allocated_end = float(gpus[at_end].sum()) if n else NAN

    return FleetWindow(
        start=ws,
        end=we,
        capacity=capacity,
        wait_target_s=target,
        waits=waits,
        censored=censored,
        attained=attained,
        met=met,
        missed=missed,
        known_misses=known_misses,
        pending=pending,
        allocated_mean=allocated_mean,
        allocated_end=allocated_end,
        waiting_gangs=waiting_gangs,
        eligibility_known=eligibility_known,
        gpu_hours=gpu_seconds / 3600.0,
        starts_known=starts_known,
    )


def survival(waits: np.ndarray, censored: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct times, S at each): the Kaplan–Meier survival function of the finished
    waits with the waiting jobs right-censored. The arithmetic is scipy's ``ecdf`` on
    ``CensoredData`` (1.17) step for step, so the values are its values to the last bit
    (tests/lenses/test_fleet_survival.py); it lives here because importing ``scipy.stats``
    for it cost every fleet comparison 0.5 s (issue 47)."""
    if not censored.size:  # scipy's uncensored branch: S = 1 − (share at or below t)
        times, counts = np.unique(np.sort(waits), return_counts=True)
        return times, 1 - np.cumsum(counts) / waits.size
    times = np.concatenate((waits, censored))
    started = np.concatenate((np.ones(waits.size, dtype=np.int64), np.zeros(censored.size, dtype=np.int64)))
    order = np.argsort(times)
    times, started = times[order], started[order]
    at_risk = np.arange(times.size, 0, -1)
    distinct = np.diff(times, prepend=-np.inf, append=np.inf) > 0
    first, last = distinct[:-1], distinct[1:]  # first and last place of each distinct time
    n = at_risk[first]
    d = np.diff(np.cumsum(started)[last], prepend=0)  # jobs that started at each distinct time
    return times[first], np.cumprod((n - d) / n)


def km_median(waits: np.ndarray, censored: np.ndarray) -> tuple[float, float]:
    """See ``FleetWindow.km_median``: (median, lower bound when the median is not reached)."""
    if not (waits.size or censored.size):
        return NAN, NAN
    longest = float(max(waits.max(initial=0.0), censored.max(initial=0.0)))
    if not waits.size:  # nobody started: S(t) = 1 up to the longest censored wait
        return NAN, longest
    times, sf = survival(waits, censored)
    below = np.flatnonzero(sf <= 0.5 + 1e-12)
    if below.size:
        return float(times[below[0]]), NAN
    return NAN, longest


class FleetLens(Lens):
    def check_samples(self, run: RunRecord) -> list[SampleFinding]:
        return [*super().check_samples(run), *check_jobs(run, _epoch)]

    def primary_value(self, run: RunRecord) -> float:
        waits = read_window(run).waits
        return float(waits.mean()) if waits.size else NAN

    def phase_values(self, run: RunRecord) -> dict[str, np.ndarray]:
        return {}

    def window_metrics(self, run: RunRecord) -> dict[str, float]:
        w = read_window(run)
        return {
            "service_attainment": 100.0 * w.attained if math.isfinite(w.attained) else NAN,
            "mean_wait_with_waiting": w.mean_wait_lower,
            "km_median_wait": w.km_median()[0],
            "allocated_gpus": w.allocated_mean,
            "allocated_gpus_end": w.allocated_end,
            "capacity_gpus": w.capacity,
            "idle_gpus_end": w.idle_end,
            "waiting_jobs": float(len(w.waiting_gangs)) if w.starts_known else NAN,
        }

    def observed_dimensions(self, run: RunRecord) -> dict[str, Dimension]:
        out = observed_window(run)
        eligible = column(run, "eligible")
        known = finite(eligible).size if eligible is not None else 0
        if run.sample_count and known == run.sample_count:
            out["eligibility_history"] = Dimension("recorded", "derived")
        elif known:
            out["eligibility_history"] = Dimension(f"partial ({known} of {run.sample_count} jobs)", "derived")
        elif "eligibility_history" in run.dimensions:
            # Declared, but the jobs carry no eligible times: the label disagrees with the data.
            out["eligibility_history"] = Dimension("none in the data", "derived")
        capacity = _epoch((run.typed_meta.pool or Pool()).capacity_gpus)
        if math.isfinite(capacity):
            out["capacity_gpus"] = Dimension(int(capacity) if capacity.is_integer() else capacity, "measured")
        return out

    def window_work(self, run: RunRecord) -> float:
        return read_window(run).gpu_hours

    def censored_values(self, run: RunRecord) -> np.ndarray:
        return read_window(run).censored

    def item_series(self, run: RunRecord) -> dict[str, np.ndarray]:
        """Queue waits of the jobs that started inside the window, in start order."""
        start, eligible = column(run, "start"), column(run, "eligible")
        if start is None or eligible is None:
            return {}
        w = read_window(run)
        inside = np.isfinite(start) & np.isfinite(eligible) & (start >= w.start) & (start <= w.end)
        order = np.argsort(start[inside], kind="stable")
        return {"queue_wait": (start - eligible)[inside][order]}

    def guardrail_value(self, run: RunRecord, metric: str) -> float:
        metrics = self.window_metrics(run)
        if metric in metrics:
            return metrics[metric]
        return super().guardrail_value(run, metric)


WINDOW_METRICS = (
    # name, title, unit, higher is better
    ("service_attainment", "Service attainment", "%", True),
    ("mean_wait_with_waiting", "Mean wait incl. waiting (≥)", "s", False),
    ("km_median_wait", "Median wait (Kaplan–Meier)", "s", False),
    ("allocated_gpus", "Allocated GPUs (time-weighted)", "GPUs", True),
    ("allocated_gpus_end", "Allocated GPUs at window end", "GPUs", True),
    ("waiting_jobs", "Waiting jobs at window end", "jobs", False),
)

LENS = FleetLens(
    name="fleet",
    title="GPU fleet",
    dimensions=(
        DimensionSpec("pool", "Pool", True),
        DimensionSpec("capacity_gpus", "Pool capacity (GPUs)", True),
        DimensionSpec("device_types", "Device types", True),
        DimensionSpec("scheduler_policy", "Scheduler policy", True),
        DimensionSpec("eligibility_history", "Eligibility history", True, equal=eligibility_equal),
        DimensionSpec(WINDOW_DIMENSION, "Window kind", True, changeable=False),
        DimensionSpec("workload_mix", "Workload mix", False),
    ),
    primary=MetricSpec("mean_queue_wait", "mean queue wait", "s"),
    phases=(),
    phase_note="Fleet windows have no phases; the window metrics are shown instead, each computed over the whole "
    "window.",
    work_unit="GPU-hours",
    guardrails=(),
    runs_are_windows=True,
    window_metric_specs=tuple(
        MetricSpec(name, title, unit, lower_is_better=not higher) for name, title, unit, higher in WINDOW_METRICS
    ),
    work_note="GPU-hours allocated in each window (mean over windows); windows are compared, not equal work",
    primary_censored=True,
    item_measure=MetricSpec("queue_wait", "queue wait by job start", "s"),
    item_order="job start time",
    item_name="jobs",
)
