"""The typed parts of a comparison result: effects, the primary metric, phases, extra
metrics, guardrails, work and observations, each a frozen ``msgspec.Struct`` whose
encoding is the ``wb compare --json`` contract.

Field order is the JSON's key order (the golden outputs compare bytes). A key the JSON
leaves out when it does not apply defaults to ``UNSET`` (never encoded) rather than
``None`` (encoded as null: unknown). Decoding is tolerant of documents stored before a
field existed: such fields default to ``UNSET``. Non-finite floats may sit in a fresh
result and are written as null (``Comparison.to_json``): unknown, never zero.
"""

from __future__ import annotations


from msgspec import UNSET, UnsetType

from workbench.stats.verdicts import Flag, Gate, Verdict
from workbench.vocabulary import GuardrailState, Record, RunRef

# A number as JSON carries it: an int stays an int (a lens limit, a count), so that a
# decoded result encodes to the same bytes.
Number = int | float


class Result(Record, frozen=True, kw_only=True, omit_defaults=True):
    """The vocabulary's record, leaving out a key that does not apply (``UNSET``, or a default)."""


class Interval(Result, frozen=True, kw_only=True):
    """A confidence interval on the ratio, with its method's parameters."""

    method: str
    level: float
    low: float | None
    high: float | None
    bounded: bool
    role: str  # "primary" (decides) or "cross-check"
    df: Number | None | UnsetType = UNSET
    estimate: float | None | UnsetType = UNSET
    resampling: str | UnsetType = UNSET
    seed: int | UnsetType = UNSET
    n_boot: int | UnsetType = UNSET
    rng: str | UnsetType = UNSET
    numpy_version: str | UnsetType = UNSET
    alpha_prime: float | UnsetType = UNSET


class AAControl(Result, frozen=True, kw_only=True):
    """The A/A control of an effect: A′ against A, the noise floor and what it can resolve."""

    ratio: float | None
    intervals: tuple[Interval, ...]
    noise_floor_sd_log: float | None
    resolution_pct: float | None
    mde_pct: float | None
    mde_pct_exact: float | None
    rounds_needed: int | None
    rounds_needed_equivalence: int | None
    unstable: bool
    underpowered: bool
    n: int
    power: float

    def interval(self, level: float) -> Interval | None:
        return next((i for i in self.intervals if i.level == level and i.role == "primary"), None)


class Widened(Result, frozen=True, kw_only=True):
    """The control rule applied (``stats.control``): the level and scale of the intervals the verdict read."""

    rule: str
    alpha: float
    scale: float | None  # None: infinite (B/A's rounds agree exactly, the control's do not)
    intervals: tuple[Interval, ...]
    model_verdict: Verdict  # what the model alone said: the rule is reported where it changed the verdict or gate
    model_gate: Gate
    why: str


class RankTest(Result, frozen=True, kw_only=True):
    test: str
    statistic: float | None
    p: float | None
    method: str
    min_achievable_p: float | None
    can_reach_alpha: bool


class Tests(Result, frozen=True, kw_only=True):
    method: str
    df: Number | None
    p_no_change: float | None | UnsetType = UNSET
    p_regression_beyond_delta: float | None | UnsetType = UNSET
    p_improvement_beyond_delta: float | None | UnsetType = UNSET
    p_tost: float | None | UnsetType = UNSET
    rank_test: RankTest | UnsetType = UNSET


class Planning(Result, frozen=True, kw_only=True):
    """How many runs would resolve the band, from the noise floor named in ``noise_source``."""

    noise_source: str
    sd_unit_log: float | None
    n: int
    alpha: float
    power: float
    mde_pct: float | None
    rounds_needed: int | None
    rounds_needed_equivalence: int | None
    counts: str


class Drift(Result, frozen=True, kw_only=True):
    slope_log_per_slot: float | None
    pct_per_slot: float | None
    se: float | None
    p: float | None
    n: int
    session_change_pct: float | None


class RunCounts(Result, frozen=True, kw_only=True):
    """How many runs with a known value each side gave an effect."""

    baseline: int
    candidate: int
    control: int | UnsetType = UNSET


class Effect(Result, frozen=True, kw_only=True):
    """The statistics engine's effect on one value per run (``stats.Analysis`` as the
    compare layer carries it), or why there is none: then ``verdict`` is ``None``, the
    analysis fields are ``UNSET`` and ``note`` says why."""

    ratio: float | None | UnsetType = UNSET
    throughput_ratio: float | None | UnsetType = UNSET
    time_change_pct: float | None | UnsetType = UNSET
    throughput_change_pct: float | None | UnsetType = UNSET
    intervals: tuple[Interval, ...] | UnsetType = UNSET
    aa: AAControl | None | UnsetType = UNSET
    verdict: Verdict | None
    flags: tuple[Flag, ...] | UnsetType = UNSET
    gate: Gate | UnsetType = UNSET
    significant_below_threshold: bool | UnsetType = UNSET
    reason: str | UnsetType = UNSET
    widened: Widened | UnsetType = UNSET
    ratio_definition: str | UnsetType = UNSET
    paired: bool | UnsetType = UNSET
    unit: str | UnsetType = UNSET
    delta: float | UnsetType = UNSET
    band: tuple[float, float] | UnsetType = UNSET
    alpha: float | UnsetType = UNSET
    lower_is_better: bool | UnsetType = UNSET
    n: dict[str, int] | UnsetType = UNSET
    means: dict[str, float | None] | UnsetType = UNSET
    tests: Tests | UnsetType = UNSET
    planning: Planning | UnsetType = UNSET
    drift: dict[str, Drift | None] | UnsetType = UNSET
    outliers: dict[str, tuple[int, ...]] | UnsetType = UNSET
    numpy_version: str | UnsetType = UNSET
    runs: RunCounts | UnsetType = UNSET
    note: str | UnsetType = UNSET  # why there is no verdict
    control_note: str | UnsetType = UNSET  # why the A/A control was not used

    def interval(self, level: float, role: str | None = None) -> Interval | None:
        """The first interval at ``level`` (of ``role`` when given)."""
        if not self.intervals:
            return None
        return next((i for i in self.intervals if i.level == level and (role is None or i.role == role)), None)

    @property
    def single_run(self) -> bool:
        """One run (or none) on a side: no uncertainty can be given."""
        if not self.runs:
            return True
        return min(self.runs.baseline, self.runs.candidate) <= 1


def no_effect(note: str, runs: RunCounts | UnsetType = UNSET) -> Effect:
    return Effect(verdict=None, runs=runs, note=note)


class PerRun(Result, frozen=True, kw_only=True):
    """The per-run values an effect was computed from (``None``: unknown on that run)."""

    baseline: tuple[float | None, ...]
    candidate: tuple[float | None, ...]
    control: tuple[float | None, ...] | UnsetType = UNSET


class Censored(Result, frozen=True, kw_only=True):
    """Fleet: jobs still waiting at a window's end (their waits are lower bounds)."""

    jobs: int
    min_elapsed_s: float | None
    max_elapsed_s: float | None
    # When no job of the side started (its mean wait unknown): the mean of the waits so far, a
    # lower bound of the mean the headline gives ("≥ 5,400 s, 6 jobs still waiting").
    mean_at_least_s: float | None | UnsetType = UNSET


class CensoredSides(Result, frozen=True, kw_only=True):
    baseline: Censored
    candidate: Censored


class Bucketed(Result, frozen=True, kw_only=True):
    """A percentile read from histogram buckets (a Prometheus scrape pair): where the
    buckets place each side's figure (the mean of its runs' bucket bounds; a run with an
    exact figure counts as [v, v]); ``*_high`` null: the +Inf bucket (at least ``*_low``).
    The interpolated figure is one point of that interval, never more exact than it."""

    baseline_low: float | None
    baseline_high: float | None
    candidate_low: float | None
    candidate_high: float | None
    delta_low: float | None  # the smallest and largest change the buckets allow (null: unbounded)
    delta_high: float | None
    within_resolution: bool  # the sides' intervals overlap: a change inside the bucket width


class Primary(Result, frozen=True, kw_only=True):
    """The lens's primary metric: each side's mean over runs, the change, the effect."""

    metric: str
    title: str
    unit: str
    baseline: float | None
    candidate: float | None
    delta: float | None
    delta_pct: float | None
    text: str
    per_run: PerRun
    effect: Effect
    censored: CensoredSides | UnsetType = UNSET
    bucketed: Bucketed | UnsetType = UNSET  # a histogram percentile: its bucket bounds


class Phase(Result, frozen=True, kw_only=True):
    """A phase (or a fleet window metric: no ``stage``, no p50, p95 null)."""

    name: str
    title: str
    unit: str
    in_primary: bool
    additive: bool
    stage: str | UnsetType = UNSET
    baseline_mean: float | None
    candidate_mean: float | None
    baseline_p50: float | None | UnsetType = UNSET
    candidate_p50: float | None | UnsetType = UNSET
    baseline_p95: float | None
    candidate_p95: float | None
    statistic: str  # the per-run statistic the effect is on ("mean", "p50", ...)
    effect: Effect

    def side(self, side: str, statistic: str) -> float | None:
        """``baseline``/``candidate`` value of a statistic (``mean``, ``p50``, ``p95``)."""
        value = getattr(self, f"{side}_{statistic}", None)
        return None if value is UNSET else value


class Metric(Result, frozen=True, kw_only=True):
    """A team's extra metric (from a lens extension)."""

    name: str
    title: str
    unit: str
    baseline: float | None
    candidate: float | None
    delta: float | None
    delta_pct: float | None
    effect: Effect


# Why a guardrail is unknown when a side has no value (``contract.guardrails`` may say another reason).
MISSING_NOTE = "a value is missing on a side: the guardrail cannot be judged"


class Guardrail(Result, frozen=True, kw_only=True):
    """A guardrail judged on each side's mean (``held``, ``broken`` or ``unknown``)."""

    name: str
    title: str
    state: GuardrailState
    metric: str
    rule: str
    limit: Number
    unit: str
    baseline: float | None
    candidate: float | None
    note: str | UnsetType = UNSET
    control: float | None | UnsetType = UNSET  # the A/A control's mean
    control_state: GuardrailState | UnsetType = UNSET
    control_note: str | UnsetType = UNSET

    @property
    def broken(self) -> bool:
        return self.state == "broken"


class PerItem(Result, frozen=True, kw_only=True):
    name: str
    baseline: float | None
    candidate: float | None


class Throughput(Result, frozen=True, kw_only=True):
    unit: str
    baseline: float | None
    candidate: float | None
    change_pct: float | None
    from_time_pct: float | None | UnsetType = UNSET  # training: 1/θ − 1 from the time ratio


class Work(Result, frozen=True, kw_only=True):
    """Each side's work, whether the valid work per item is the same (``None``: unknown),
    and the throughput conversion where it holds."""

    unit: str | None
    baseline: float | None
    candidate: float | None
    per_item: PerItem | UnsetType = UNSET
    same: bool | None
    throughput: Throughput | None | UnsetType = UNSET
    note: str | UnsetType = UNSET


class Runs(Result, frozen=True, kw_only=True):
    """The runs of a comparison by store id (or label), per side."""

    baseline: tuple[RunRef, ...]
    candidate: tuple[RunRef, ...]
    control: tuple[RunRef, ...] | UnsetType = UNSET

    def get(self, side: str) -> tuple[RunRef, ...]:
        value = getattr(self, side, ())
        return () if value is UNSET else value


class Evidence(Result, frozen=True, kw_only=True):
    """What an observation rests on. ``values`` holds the figures it cites, whose keys
    differ per observation (phase titles, window facts): plain JSON values."""

    dimensions: tuple[str, ...] | UnsetType = UNSET
    runs: Runs
    metric: str | UnsetType = UNSET
    window: str | tuple[str, ...] | UnsetType = UNSET
    values: dict[str, object] | UnsetType = UNSET
    verdict: Verdict | None | UnsetType = UNSET
    effect_note: str | UnsetType = UNSET
    side: str | UnsetType = UNSET
    per_window: tuple[dict[str, object], ...] | UnsetType = UNSET


class Observation(Result, frozen=True, kw_only=True):
    """A fact the comparison shows; ``kind`` says it is an observation, not a cause."""

    text: str
    evidence: Evidence
    kind: str


class Acceptance(Result, frozen=True, kw_only=True):
    """A refusal overridden with a recorded reason (``--accept DIM --why TEXT``)."""

    dimension: str
    why: str


class Declaration(Result, frozen=True, kw_only=True):
    """A dimension set by ``wb declare`` that the comparison relied on."""

    run: RunRef
    dimension: str
    value: object  # the declared value, as the run's dimension holds it
    declaration: int  # its history id ('wb show RUN' has who and why)


class Refusal(Result, frozen=True, kw_only=True):
    """Why a pair is not comparable: the first blocking dimension, then the others."""

    dimension: str
    reason: str
    also: tuple[str, ...] | UnsetType = UNSET


__all__ = [
    "AAControl",
    "Acceptance",
    "Censored",
    "CensoredSides",
    "Declaration",
    "Drift",
    "Effect",
    "Evidence",
    "Guardrail",
    "Interval",
    "Metric",
    "Observation",
    "PerItem",
    "PerRun",
    "Phase",
    "Planning",
    "Primary",
    "RankTest",
    "Refusal",
    "Result",
    "RunCounts",
    "Runs",
    "Tests",
    "Throughput",
    "Work",
    "no_effect",
]
