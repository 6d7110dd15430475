"""The rerun comparison (``wb rerun report --json``) as frozen, typed records.

One execution's result: the plan it ran, the runs (failed ones kept), the paired B/A
analysis with its A/A control, the verdict and flags, the sequential look of a
sequential plan, and the guardrails. ``to_json()`` is the stored and printed document,
key for key (fields are declared in the document's order; keys that the document leaves
out when they do not apply default to ``None`` and are omitted), and ``from_json()``
decodes it back: ``RerunReport.from_json(r.to_json()) == r``. The JSON Schema is in
docs/schema/rerun-report.json.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from workbench.compare.results import Effect, Refusal, Work
from workbench.rerun.plan import Warmup
from workbench.vocabulary import GuardrailState, Record
from workbench.stats.verdicts import Flag, Verdict

FORMAT = "wb.rerun.comparison/1"

# The arms (baseline, candidate, the A/A control) and how one run of an arm ended.
Arm = Literal["A", "B", "A'"]
RunStatus = Literal["ok", "failed", "interrupted"]


class PlanInfo(Record, frozen=True, kw_only=True, omit_defaults=True):
    """The plan as the comparison read it (``stopping``/``spending`` only for a sequential plan)."""

    id: int
    name: str
    digest: str
    lens: str
    metric: str
    statistic: str
    higher_is_better: bool
    rounds: int
    order: str
    seed: int
    delta: float
    warmup: Warmup
    stopping: str | None = None
    spending: str | None = None


class ExecutionInfo(Record, frozen=True, kw_only=True):
    id: int
    status: str  # store.rerun: running, interrupted, complete, ...
    host: str
    started_at: str
    ended_at: str | None
    workdir: str


class Rounds(Record, frozen=True, kw_only=True):
    planned: int
    used: tuple[int, ...]  # rounds with A, B and A′ all measured: the paired analysis
    left_out: tuple[int, ...]  # finished rounds where an arm failed or has no value


class RunRow(Record, frozen=True, kw_only=True, omit_defaults=True):
    """One run of one arm (round 0: warm-up). ``stderr_tail``: what a failed run said last
    (untrusted text: cleaned before display); absent for a run that did not fail."""

    round: int
    arm: Arm
    slot: int
    status: RunStatus
    reason: str
    started_at: str
    wall_s: float | None
    exit_status: int | None
    run_id: int | None
    statistic: float | None
    stderr_tail: str | None = None
    # Work per second of the run (work per item over the statistic's time per item), when
    # the arms' work per item differs and the verdict is on throughput (``RerunReport.basis``).
    throughput: float | None = None


class ArmFailures(Record, frozen=True, kw_only=True):
    finished: int
    failed: int
    reasons: dict[str, int]  # why -> how many runs


class DesignInfo(Record, frozen=True, kw_only=True):
    """``stats.sequential.SequentialDesign`` as it was run."""

    stopping: str
    max_rounds: int
    alpha: float
    spending: str
    first_look: int


class SequentialResult(Record, frozen=True, kw_only=True):
    """The look after the rounds complete so far; for a sequential plan its decision is
    the verdict (``CONTINUE``: none yet)."""

    design: DesignInfo
    stopped_at_round: int | None
    decision: str  # a Verdict, or CONTINUE
    why: str
    ratio: float | None
    repeated_ci95: tuple[float | None, float | None]
    aa_unstable: bool | None
    fixed_design_rounds: int | None
    method: str

    @property
    def verdict(self) -> Verdict | None:
        return None if self.decision == "CONTINUE" else Verdict(self.decision)


class GuardrailResult(Record, frozen=True, kw_only=True, omit_defaults=True):
    """A guardrail judged on arm means (B against A), beside A′ against A as the noise reference."""

    name: str
    metric: str
    rule: str
    limit: float
    source: str  # "plan" or "lens:<name>"
    status: GuardrailState
    means: dict[str, float | None]  # arm -> mean of per-run values (None: no run said)
    runs_with_value: dict[str, int]
    control_status: GuardrailState
    why: str | None = None


class Basis(Record, frozen=True, kw_only=True):
    """What the verdict is on when the arms' valid work per item differs: throughput (work
    per second, higher is better), never the time alone."""

    metric: str  # "throughput"
    unit: str  # "samples/s", "tokens/s"
    why: str


class DimensionCheck(Record, frozen=True, kw_only=True, omit_defaults=True):
    """One dimension of the arms as the compare layer reads it from their captures (B
    against A; ``control``: A′'s value where it is not A's)."""

    name: str
    state: str
    must_match: bool
    baseline: Any = None
    candidate: Any = None
    note: str | None = None
    declared_change: bool = False
    accepted: str | None = None


class RerunReport(Record, frozen=True, kw_only=True, omit_defaults=True):
    """The comparison of one execution (see docs/verify.md). ``comparison_id`` is set
    once it is stored (the printed form leads with it; the stored body has none)."""

    comparison_id: int | None = None
    format: str
    plan: PlanInfo
    execution: ExecutionInfo
    partial: bool
    rounds: Rounds
    runs: tuple[RunRow, ...]
    failures: dict[str, ArmFailures]  # arm -> counts
    scope: str
    notes: tuple[str, ...]
    # stats.Analysis as the compare layer carries it (None below two complete rounds)
    analysis: Effect | None
    verdict: Verdict | None
    flags: tuple[Flag, ...]
    reason: str
    sequential: SequentialResult | None = None
    guardrails: tuple[GuardrailResult, ...]
    # The contract of wb compare, kept (workbench.compare.contract): the arms' dimensions
    # read from their captures, the refusal when A and B are not comparable (then no
    # analysis and no verdict), why A′ is not the baseline again (then UNSTABLE), the
    # arms' work, and the basis of the verdict when their work per item differs.
    dimensions: tuple[DimensionCheck, ...] = ()
    refusal: Refusal | None = None
    control_mismatch: str | None = None
    work: Work | None = None
    basis: Basis | None = None

    def with_id(self, comparison_id: int) -> "RerunReport":
        """The printed form: the stored comparison's id leads the document."""
        return msgspec.structs.replace(self, comparison_id=comparison_id)

    def stored(self) -> "RerunReport":
        """The form kept in the store (no ``comparison_id``)."""
        return msgspec.structs.replace(self, comparison_id=None)
