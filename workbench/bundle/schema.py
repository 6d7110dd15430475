"""A bundle's records as typed readers: export checks what it writes with them, verify and
import read with them, so a bundle that verifies imports into records every reader can use.

Each member's shape is a msgspec Struct; decoding validates and names the place of a value of
another type (``$.recipe.content.comparisons[0].engine.version: Expected `str`, got `int```)
instead of an internal error later (``wb investigate show`` of the imported copy, ``bundle
export``, ``--recompute``). Keys are optional where an older writer (format 1.0) left them
out; unknown keys are allowed (the checksum covers them, ``docs/bundle-format.md``).

What varies by its source stays open: a run's ``meta`` and ``window``, a compare engine's
``result`` document (``wb evidence verify --recompute`` rebuilds it whole), evidence items.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from workbench.bundle.decisions import DecisionInput, Problem

if TYPE_CHECKING:
    from store.records import RunRecord

# What kind of evidence a hypothesis's test is: the kinds that can decide it (bundle/decisive.py).
TestKind = Literal["rerun", "comparison", "bisection", "diagnosis"]
HypothesisStatus = Literal["open", "supported", "refuted", "undetermined"]
ActionKind = Literal["configuration", "version", "restart", "escalation", "retry"]
DimensionSource = Literal["declared", "measured", "derived"]


class Doc(msgspec.Struct, frozen=True, kw_only=True):
    """A bundle record (keys it does not know are passed over)."""


class Tool(Doc, frozen=True, kw_only=True):
    name: str
    version: str


class Frame(Doc, frozen=True, kw_only=True):
    ref: str
    title: str = ""
    lens: str = ""
    question: str = ""
    guardrails: list[str] = []
    intended_change: dict[str, list[Any]] = {}
    created_by: str = ""
    created_at: str = ""
    baseline: list[str] = []
    candidate: list[str] = []


class DimensionDoc(Doc, frozen=True, kw_only=True):
    value: Any = None
    source: DimensionSource = "declared"
    declaration: int | None = None


class WorkDoc(Doc, frozen=True, kw_only=True):
    unit: str = ""
    amount: float | None = None


class RunDoc(Doc, frozen=True, kw_only=True):
    ref: str
    id: int | None = None
    label: str = ""
    lens: str = ""
    dimensions: dict[str, DimensionDoc] = {}
    window: dict[str, Any] = {}
    work: WorkDoc | None = None
    quality: dict[str, float | None] = {}
    meta: dict[str, Any] = {}
    sample_count: int | None = None
    captures: list[str] = []
    declarations: list[dict[str, Any]] = []


class EngineIdentity(Doc, frozen=True, kw_only=True):
    name: str | UnsetType = UNSET
    version: str | UnsetType = UNSET


class DeclarationInForce(Doc, frozen=True, kw_only=True):
    run: str
    dimension: str
    value: Any = None
    declaration: int


class RecipeComparison(Doc, frozen=True, kw_only=True):
    ref: str
    baseline: list[str]
    candidate: list[str]
    parameters: dict[str, Any] = {}
    engine: EngineIdentity = EngineIdentity()
    control: list[str] = []
    declarations: list[DeclarationInForce] | UnsetType = UNSET


class PlanRecordDoc(Doc, frozen=True, kw_only=True):
    """A rerun plan as the rerun harness stored it (never run from a bundle)."""

    id: int
    name: str
    lens: str = ""
    digest: str = ""
    body: dict[str, Any] = {}
    investigation_id: int | None = None
    created_at: str = ""


class CarriedPlan(Doc, frozen=True, kw_only=True):
    ref: str
    record: dict[str, Any]  # a PlanRecordDoc, or {"unavailable": why} when the store had none

    def plan(self) -> PlanRecordDoc | None:
        """The plan record typed (``None``: unavailable); ``msgspec.ValidationError`` names the place."""
        return None if "unavailable" in self.record else msgspec.convert(self.record, PlanRecordDoc)


class ExecutionDoc(Doc, frozen=True, kw_only=True):
    id: int
    status: str
    host: str = ""
    started_at: str = ""
    ended_at: str | None = None
    workdir: str = ""


class RunLogEntry(Doc, frozen=True, kw_only=True):
    """One run of one arm as the executor logged it (inputs of a rerun comparison)."""

    round: int
    arm: Literal["A", "B", "A'"]
    slot: int
    status: Literal["ok", "failed", "interrupted"]
    reason: str = ""
    started_at: str = ""
    wall_s: float | None = None
    exit_status: int | None = None
    run: str | None = None  # the bundle's ref of the run it imported
    stderr_tail: str | None = None


class RerunInputs(Doc, frozen=True, kw_only=True):
    """What a carried rerun comparison was made of (format 1.1): its plan, its execution and
    the run log as they were when it was taken; the arms' runs are in ``runs``/``samples``.
    ``unavailable``: the exporting store did not have it (then nothing else is said)."""

    ref: str
    id: int | None = None
    plan: str = ""  # rerun-plan/N
    execution: ExecutionDoc | None = None
    runs: list[RunLogEntry] = []
    created_at: str = ""
    unavailable: str | None = None


class BisectionDoc(Doc, frozen=True, kw_only=True):
    ref: str
    investigation: str | None = None
    name: str = ""
    status: str = ""
    spec: dict[str, Any] = {}
    state: dict[str, Any] = {}


class VerificationDoc(Doc, frozen=True, kw_only=True):
    plan: str | None = None
    observed: dict[str, Any] = {}
    by: str
    at: str


class ActionDoc(Doc, frozen=True, kw_only=True):
    ref: str
    kind: ActionKind
    changes: dict[str, list[Any]] = {}
    scope: str = ""
    because: list[str] = []
    evidence: list[dict[str, Any]] = []
    expect: dict[str, Any] = {}
    retry: dict[str, Any] = {}
    created_by: str = ""
    created_at: str
    decisions: list[DecisionInput] = []
    verifications: list[VerificationDoc] = []


class Acceptance(Doc, frozen=True, kw_only=True):
    comparison: str
    dimension: str
    why: str


class Recipe(Doc, frozen=True, kw_only=True):
    comparisons: list[RecipeComparison] = []
    declared_changes: dict[str, list[Any]] | None = None
    acceptances: list[Acceptance] = []
    guardrails: list[str] | None = None
    rerun_plans: list[CarriedPlan] = []
    rerun_comparisons: list[RerunInputs] | UnsetType = UNSET  # format 1.1
    bisections: list[BisectionDoc] = []
    actions: list[ActionDoc] = []


class ResultComparison(Doc, frozen=True, kw_only=True):
    ref: str
    result: dict[str, Any]


class StatedVerdict(Doc, frozen=True, kw_only=True):
    comparison: str
    comparable: bool
    verdict: str | None


class CarriedRerun(Doc, frozen=True, kw_only=True):
    ref: str
    record: dict[str, Any]


class StatedStatus(Doc, frozen=True, kw_only=True):
    action: str
    status: str | None
    reason: str | None
    why: str


class Results(Doc, frozen=True, kw_only=True):
    comparisons: list[ResultComparison] = []
    verdicts: list[StatedVerdict] = []
    rerun_comparisons: list[CarriedRerun] = []
    actions: list[StatedStatus] = []


class ObservationDoc(Doc, frozen=True, kw_only=True):
    ref: str
    kind: Literal["observation", "retraction"] = "observation"
    text: str
    evidence: list[Any] = []
    source: str | None = None
    retracts: str | None = None
    retracted_by: str | None = None
    pinned_by: str = ""
    pinned_at: str = ""
    label: str = ""


class HypothesisStep(Doc, frozen=True, kw_only=True):
    status: HypothesisStatus
    evidence: list[dict[str, Any]] = []
    note: str | None = ""
    decided_by: str = ""
    decided_at: str = ""


class HypothesisDoc(Doc, frozen=True, kw_only=True):
    ref: str
    statement: str
    test: str
    # The kind of evidence its test is, and the highest id of each evidence kind when it was
    # written (format 1.1; absent: written before wb asked).
    test_kind: TestKind | None = None
    evidence_before: dict[str, int] | None = None
    status: HypothesisStatus = "open"
    links: dict[str, list[Any]] = {}
    history: list[HypothesisStep] = []
    created_by: str = ""
    created_at: str = ""


class Bundle(Doc, frozen=True, kw_only=True):
    """The members every reader reads, typed (the digested parts' ``content``)."""

    tool: Tool
    investigation: Frame
    runs: list[RunDoc] = []
    recipe: Recipe
    results: Results
    observations: list[ObservationDoc] = []
    hypotheses: list[HypothesisDoc] = []


def _contents(bundle: dict[str, Any]) -> dict[str, Any]:
    """The bundle with each digested part's ``content`` in its place (what the typed reader reads)."""
    out = dict(bundle)
    for name in ("recipe", "results"):
        part = bundle.get(name)
        if isinstance(part, dict) and "content" in part:
            out[name] = part["content"]
    return out


def read(bundle: dict[str, Any]) -> Bundle:
    """The bundle typed; ``msgspec.ValidationError`` names the first value of another shape."""
    typed = msgspec.convert(_contents(bundle), Bundle)
    for i, carried in enumerate(typed.recipe.rerun_plans):
        try:
            carried.plan()
        except msgspec.ValidationError as exc:
            why, _, where = str(exc).partition(" - at `$")
            raise msgspec.ValidationError(f"{why} - at `$.recipe.rerun_plans[{i}].record{where.rstrip('`')}`") from None
    return typed


def typed_or_problem(bundle: dict[str, Any]) -> Bundle | Problem:
    """The bundle typed, or where it first differs from the shape wb writes
    (``recipe.comparisons[0].engine.version``)."""
    try:
        return read(bundle)
    except msgspec.ValidationError as exc:
        why, _, where = str(exc).partition(" - at `$")
        return Problem(where.rstrip("`").lstrip(".") or "bundle", why)


@dataclass(frozen=True)
class RerunSource:
    """What ``--recompute`` hands the rerun harness to rebuild one carried rerun comparison:
    the plan record, the inputs the recipe carries (execution, run log) and the arms' runs
    rebuilt from the bundle (by ref)."""

    plan: PlanRecordDoc
    inputs: RerunInputs
    records: Mapping[str, "RunRecord"]


# The rerun harness's rebuilder (``workbench.rerun.report.reanalyze``): a :class:`RerunSource`
# -> the stored comparison document again. Passed in by the layer above.
RerunEngine = Callable[[Any], Mapping[str, object]]
