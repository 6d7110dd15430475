"""The lens contract: what must match, what is recorded, the primary metric, the phases,
the work unit and the guardrails of one kind of investigation.

A lens is pure: it reads ``store.records.RunRecord`` values and computes numbers from
them. It never imports the application (``workbench``) nor the database. Every number it
returns is a float, with ``nan`` for "unknown" (never zero).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Literal

import numpy as np

from lenses.bounds import PLAUSIBLE, screen
from store.records import SAMPLES, Dimension, RunRecord
from store.run_meta import SampleFinding

NAN = float("nan")

# The window of a run is checked like a must-match dimension in every lens: steady
# against startup or checkpointing cannot isolate a change.
WINDOW_DIMENSION = "window"


def observed_window(run: RunRecord) -> dict[str, Dimension]:
    """The run's window kind as a measured dimension; absent (unknown) when not stated."""
    kind = str(run.window.get("kind") or "unknown")
    return {} if kind == "unknown" else {WINDOW_DIMENSION: Dimension(kind, "measured")}


# --------------------------------------------------------------------------- values


def normalize_text(value: Any) -> str:
    """A dimension value as comparable text: case, spacing and key order do not count."""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(",", ":")).casefold()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return " ".join(str(value).split()).casefold()


def default_equal(a: Any, b: Any) -> bool:
    na, nb = as_number(a), as_number(b)
    if na is not None and nb is not None:
        return math.isclose(na, nb, rel_tol=1e-9, abs_tol=1e-12)
    return normalize_text(a) == normalize_text(b)


_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def as_number(value: Any) -> float | None:
    """``value`` as a number when it is one, or a text that is only a number and a unit
    word ("1024", "1024 samples", "8 ranks"); otherwise ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        found = _NUMBER.findall(value)
        if len(found) == 1:
            return float(found[0])
    return None


# --------------------------------------------------------------------------- columns


def column(run: RunRecord, name: str, table: str = SAMPLES) -> np.ndarray | None:
    """A numeric column as float64 (``nan`` = unknown), or ``None`` when the run lacks it."""
    cols = run.tables.get(table) or {}
    if name not in cols:
        return None
    arr = np.asarray(cols[name])
    if arr.dtype.kind == "b":
        return arr.astype(np.float64)
    if arr.dtype.kind in "iuf":
        return arr.astype(np.float64, copy=False)
    out = np.full(arr.shape, np.nan)
    for i, v in enumerate(arr.tolist()):
        n = as_number(v) if not isinstance(v, bool) else float(v)
        if n is not None:
            out[i] = n
    return out


def finite(values: np.ndarray | None) -> np.ndarray:
    if values is None:
        return np.empty(0)
    return values[np.isfinite(values)]


def mean_of(values: np.ndarray | None) -> float:
    v = finite(values)
    return float(v.mean()) if v.size else NAN


def quantile_of(values: np.ndarray | None, q: float) -> float:
    """The q-quantile (linear interpolation) of the known values; ``nan`` when none."""
    v = finite(values)
    return float(np.quantile(v, q)) if v.size else NAN


STATISTICS: dict[str, Callable[[np.ndarray | None], float]] = {
    "mean": mean_of,
    "median": lambda v: quantile_of(v, 0.5),
    "p50": lambda v: quantile_of(v, 0.5),
    "p90": lambda v: quantile_of(v, 0.9),
    "p95": lambda v: quantile_of(v, 0.95),
    "p99": lambda v: quantile_of(v, 0.99),
    "min": lambda v: float(finite(v).min()) if finite(v).size else NAN,
    "max": lambda v: float(finite(v).max()) if finite(v).size else NAN,
    "sum": lambda v: float(finite(v).sum()) if finite(v).size else NAN,
    "count": lambda v: float(finite(v).size),
}


# --------------------------------------------------------------------------- contract


@dataclass(frozen=True)
class DimensionSpec:
    """One dimension of a lens. ``must_match`` dimensions refuse the pair when different
    or unknown; the others are recorded and reported. ``changeable`` is false for
    dimensions that can never be the change under test (the window kind)."""

    name: str
    title: str
    must_match: bool
    changeable: bool = True
    equal: Callable[[Any, Any], bool] = default_equal


@dataclass(frozen=True)
class MetricSpec:
    name: str
    title: str
    unit: str
    lower_is_better: bool = True


@dataclass(frozen=True)
class PhaseSpec:
    """A phase column of the samples. ``in_primary``: part of what the primary metric
    measures (TTFT = frontend + queue + prefill); ``stage`` places it for observations
    (``before_model`` or ``model`` for inference)."""

    name: str
    title: str
    column: str
    unit: str = "ms"
    in_primary: bool = True
    stage: str = ""


@dataclass(frozen=True)
class ExtraMetric:
    """A metric a team adds without code: a statistic of a sample column, or a quality value."""

    name: str
    title: str
    unit: str = ""
    column: str | None = None
    statistic: str = "mean"
    quality: str | None = None
    table: str = SAMPLES
    lower_is_better: bool = True

    def value(self, run: RunRecord) -> float:
        if self.quality is not None:
            v = run.quality.get(self.quality)
            return float(v) if v is not None and math.isfinite(float(v)) else NAN
        return STATISTICS[self.statistic](column(run, self.column or "", self.table))


GUARDRAIL_RULES = ("max", "min", "max_increase", "max_increase_pct", "within", "within_pct")


@dataclass(frozen=True)
class GuardrailSpec:
    """A guardrail: ``metric`` (a lens guardrail value, an extra metric or a quality key)
    must obey ``rule`` with ``limit``:

    - ``max`` / ``min``: the candidate's value is at most / at least ``limit``;
    - ``max_increase`` / ``max_increase_pct``: candidate − baseline is at most ``limit``
      (absolute, or percent of the baseline);
    - ``within`` / ``within_pct``: |candidate − baseline| is at most ``limit``.
    """

    name: str
    title: str
    metric: str
    rule: str
    limit: float
    unit: str = ""

    def __post_init__(self) -> None:
        if self.rule not in GUARDRAIL_RULES:
            raise ValueError(
                f"guardrail {self.name!r}: unknown rule {self.rule!r} (one of {', '.join(GUARDRAIL_RULES)})"
            )

    def judge(self, baseline: float, candidate: float) -> GuardrailState:
        """``held``, ``broken`` or ``unknown`` (a value is missing)."""
        needs_baseline = self.rule not in ("max", "min")
        if not math.isfinite(candidate) or (needs_baseline and not math.isfinite(baseline)):
            return "unknown"
        diff = candidate - baseline if needs_baseline else NAN
        if self.rule.endswith("_pct"):
            if baseline == 0:
                return "unknown" if diff != 0 else "held"
            diff = 100.0 * diff / abs(baseline)
        ok = {
            "max": candidate <= self.limit,
            "min": candidate >= self.limit,
            "max_increase": diff <= self.limit,
            "max_increase_pct": diff <= self.limit,
            "within": abs(diff) <= self.limit,
            "within_pct": abs(diff) <= self.limit,
        }[self.rule]
        return "held" if ok else "broken"


# What a guardrail's rule says of a side's mean: held, broken, or unknown (a value is missing). The same
# words as workbench.vocabulary.GuardrailState, which the results that carry it use (lenses import no application).
GuardrailState = Literal["held", "broken", "unknown"]


@dataclass(frozen=True)
class WorkPerItem:
    """The valid work of one item (a request, a step): what must be equal for a timing
    comparison to mean anything."""

    name: str  # "tokens per request"
    value: float


@dataclass(frozen=True)
class Lens:
    """A lens contract plus the computations that read its numbers from a run.

    Subclasses implement ``primary_value``, ``phase_values`` and, where the data can say,
    ``observed_dimensions`` (values checked from the samples rather than from labels).
    """

    name: str
    title: str
    dimensions: tuple[DimensionSpec, ...]
    primary: MetricSpec
    phases: tuple[PhaseSpec, ...]
    phase_note: str
    work_unit: str
    guardrails: tuple[GuardrailSpec, ...] = ()
    metrics: tuple[ExtraMetric, ...] = ()
    # Phases are never summed into the primary metric by the workbench; this says why.
    phases_additive: bool = False
    # The per-run statistic that speaks for a phase in effects and observations: the
    # one matching the primary metric (p95 beside TTFT p95, mean beside mean step time).
    phase_statistic: str = "mean"
    extensions: tuple[str, ...] = field(default=())
    # How the comparison speaks of phases, asked by ``workbench.compare`` instead of the
    # lens's name. "one": the stayed and moved phases in one sentence (exposed time);
    # "each": a sentence per moved phase, the stayed ones together.
    phase_sentences: str = "one"
    # The phases carry ``stage`` ("before_model", "model"): a change of the primary is
    # located at a stage when every part of the primary at the other stage is known.
    locates_by_stage: bool = False
    # A run is an observation window of a pool, not a set of comparable items: window
    # metrics stand in for phases, the work is the window's (``window_work``) and the
    # observations are about the window (waiting jobs, idle capacity).
    runs_are_windows: bool = False
    # What stands in for phases when ``runs_are_windows`` (values from ``window_metrics``).
    window_metric_specs: tuple[MetricSpec, ...] = ()
    # Said of the work when ``runs_are_windows``.
    work_note: str = ""
    # Some values of the primary had not ended when the run did (``censored_values``):
    # lower bounds, reported beside the primary, never in its mean.
    primary_censored: bool = False
    # The primary is a mean time per item of fixed work, so a throughput change follows
    # from it: 1/θ − 1 for a time ratio θ (mean step time; not TTFT p95).
    throughput_from_primary: bool = False
    # The first series of ``item_series`` (the primary's per-item measure; its title says
    # what a line over time shows) and what orders the items in time.
    item_measure: MetricSpec | None = None
    item_order: str = "item order"
    # What one sample is, in sentences ("requests", "steps", "jobs").
    item_name: str = "items"
    # The samples' column (ms) that times one item from its ``started_at``: what a flight
    # recorder's slow span is (a step, a request); None where items are not timed spans.
    span_column: str | None = None

    def with_metric(self, name: str) -> "Lens | None":
        """This lens with the statistic ``name`` as its primary (``--metric``); None for a
        lens whose primary is fixed (only the inference lens offers several)."""
        return None

    # -- contract views
    @property
    def must_match(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dimensions if d.must_match)

    @property
    def also_recorded(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dimensions if not d.must_match)

    def dimension(self, name: str) -> DimensionSpec | None:
        return next((d for d in self.dimensions if d.name == name), None)

    def extended(
        self,
        *,
        guardrails: tuple[GuardrailSpec, ...] = (),
        metrics: tuple[ExtraMetric, ...] = (),
        source: str = "",
    ) -> "Lens":
        """This lens with more guardrails and metrics (a same-named one replaces the old)."""
        new_g = {g.name: g for g in self.guardrails} | {g.name: g for g in guardrails}
        new_m = {m.name: m for m in self.metrics} | {m.name: m for m in metrics}
        return replace(
            self,
            guardrails=tuple(new_g.values()),
            metrics=tuple(new_m.values()),
            extensions=self.extensions + ((source,) if source else ()),
        )

    # -- computations (run level)
    def primary_value(self, run: RunRecord) -> float:
        raise NotImplementedError

    def primary_bounds(self, run: RunRecord) -> tuple[float, float] | None:
        """Bucket bounds ``(low, high)`` of the primary figure when the run gives it from a
        histogram (high ``inf``: the +Inf bucket); ``None`` when the figure is exact."""
        return None

    def phase_values(self, run: RunRecord) -> dict[str, np.ndarray]:
        """Each phase's per-sample values (``nan`` = unknown) for this run."""
        out = {}
        for phase in self.phases:
            values = column(run, phase.column)
            if values is not None:
                out[phase.name] = values[self.valid_mask(run, len(values))]
        return out

    def phase_summary(self, run: RunRecord) -> dict[str, dict[str, float]]:
        """Per phase: mean, p50 and p95 of this run's samples (descriptive)."""
        return {
            name: {"mean": mean_of(v), "p50": quantile_of(v, 0.5), "p95": quantile_of(v, 0.95)}
            for name, v in self.phase_values(run).items()
        }

    def valid_mask(self, run: RunRecord, n: int) -> np.ndarray:
        """Which samples count (all, unless the lens knows better: failed requests don't)."""
        return np.ones(n, dtype=bool)

    # -- what a sample means (DESIGN section 9): one check, after every importer
    def check_samples(self, run: RunRecord) -> list[SampleFinding]:
        """Decide, in place, which of ``run``'s samples are valid, the same way whatever
        format they came from, and say what was found. The base check keeps every value
        outside its plausible range (``lenses.bounds.PLAUSIBLE``) as unknown; a lens adds
        its own rules (a failed request, a step without a boundary, a job without times)."""
        return screen(run, PLAUSIBLE.get(self.name, {}))

    def population(self, run: RunRecord) -> tuple[int, int] | None:
        """``(items, valid items)`` a guardrail of this run stands on (requests, and those
        that did not fail); ``None`` when the lens has no such notion or the run cannot say."""
        return None

    def observed_dimensions(self, run: RunRecord) -> dict[str, Dimension]:
        """Dimension values the data itself shows (source ``derived`` or ``measured``)."""
        return {}

    def guardrail_value(self, run: RunRecord, metric: str) -> float:
        """The run's value of a guardrail metric: an extra metric, else a quality value."""
        for m in self.metrics:
            if m.name == metric:
                return m.value(run)
        v = run.quality.get(metric)
        try:
            f = float(v) if v is not None else NAN
        except (TypeError, ValueError):
            return NAN
        return f if math.isfinite(f) else NAN

    def work_per_item(self, run: RunRecord) -> WorkPerItem | None:
        """The valid work of one item, from the data; ``None`` when the data cannot say."""
        return None

    def throughput(self, run: RunRecord) -> tuple[float, str] | None:
        """Work per second and its unit, where the run defines both; else ``None``."""
        return None

    def window_metrics(self, run: RunRecord) -> dict[str, float]:
        """Extra per-run figures shown beside the phases (fleet window metrics)."""
        return {}

    def window_work(self, run: RunRecord) -> float:
        """The work of one window (``runs_are_windows``), in ``work_unit``; ``nan`` unknown."""
        return NAN

    def censored_values(self, run: RunRecord) -> np.ndarray:
        """Right-censored values of the primary's items (``primary_censored``): how long
        those not ended by the run's end had lasted, lower bounds."""
        return np.empty(0)

    def item_series(self, run: RunRecord) -> dict[str, np.ndarray]:
        """Per-item values in time order: the primary's per-item measure first (when the
        lens has one), then the phases."""
        return self.phase_values(run)

    def stated_statistics(self, run: RunRecord, measure: str) -> dict[str, float]:
        """The statistics of ``measure`` (an ``item_series`` name) the run's file states where it
        has no items (a summary-only benchmark result): ``p50``, ``p95``, ``mean``... as stated,
        none derived; empty when the file states none."""
        return {}
