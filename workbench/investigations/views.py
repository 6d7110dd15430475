"""An investigation as it crosses layers: frozen, typed records with a lossless JSON round trip.

``wb investigate show --json`` prints :class:`InvestigationView` encoded (field order is
the JSON's key order); ``docs/schema/investigation.json`` is its JSON Schema, generated
from these types (``python -m tests.golden.regen`` rewrites it, a test checks it).
msgspec Structs rather than dataclasses: decoding validates (a wrong type names the
place), encoding is fast and the JSON Schema comes from the same definition (see
docs/architecture.md, "Typed results").

A stored comparison's ``result`` is kept as the document the compare engine wrote (raw
JSON, possibly from an older wb or a bundle); ``workbench.compare.model.Comparison.from_json``
types it: :meth:`ComparisonView.comparison`, once per view, whoever reads it.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import msgspec

from workbench.bundle.format import OBSERVATION_LABEL
from workbench.compare.model import Comparison
from workbench.compare.parameters import ComparisonParameters
from workbench.vocabulary import Record, RunRef


class Frame(Record, frozen=True):
    """The decision: lens, question, guardrails, intended change, run sets."""

    id: int
    ref: str
    title: str
    lens: str
    question: str
    guardrails: list[str]
    intended_change: dict[str, list[Any]]
    baseline_runs: list[RunRef]
    candidate_runs: list[RunRef]
    created_by: str
    created_at: str
    imported: bool
    imported_bundle_id: int | None


class InvestigationSummary(Frame, frozen=True):
    """A row of ``wb investigate list``: the frame and how many records it holds."""

    comparisons: int
    observations: int
    hypotheses: int


class EngineIdentity(Record, frozen=True, omit_defaults=True):
    """The compare engine that made a stored comparison (absent parts: not recorded)."""

    name: str | msgspec.UnsetType = msgspec.UNSET
    version: str | msgspec.UnsetType = msgspec.UNSET


class ComparisonView(Record, frozen=True, omit_defaults=True, weakref=True):
    """A stored comparison: what it was asked, the engine that made it and its result
    (absent when asked without it)."""

    id: int
    ref: str
    baseline_runs: list[RunRef]
    candidate_runs: list[RunRef]
    parameters: ComparisonParameters
    engine: EngineIdentity
    comparable: bool
    verdict: str | None  # a Verdict's word (workbench.stats.verdicts: importing it loads the statistics engine)
    created_by: str
    created_at: str
    result: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET  # the engine's document as stored (raw JSON)

    def comparison(self) -> Comparison:
        """The stored result, typed (``msgspec.ValidationError`` names the place when it
        has another shape); a view read without its result has none to type."""
        if self.result is msgspec.UNSET:
            raise ValueError(f"{self.ref} was read without its result")
        typed = _DECODED.get(id(self))
        if typed is None:
            typed = _DECODED[id(self)] = Comparison.from_json(self.result)
            weakref.finalize(self, _DECODED.pop, id(self), None)
        return typed


# Each view's decoded result, by the view's id() while the view lives: the report, the banner and the
# refusal's way out all draw one view, and decoding (the lens, every row) is the costly part. A frozen
# Struct holds no cache of its own, and its dict field makes it unhashable (no WeakKeyDictionary).
_DECODED: dict[int, Comparison] = {}


class ObservationView(Record, frozen=True):
    """A pinned fact with its evidence, or the retraction of one (never edited)."""

    id: int
    ref: str
    label: str
    kind: str  # "observation" or "retraction"
    text: str
    evidence: list[dict[str, Any]]
    source: str | None
    retracts: str | None
    retracted_by: str | None
    pinned_by: str
    pinned_at: str


class HypothesisStep(Record, frozen=True):
    status: str
    evidence: list[dict[str, Any]]
    note: str | None
    decided_by: str
    decided_at: str


class HypothesisView(Record, frozen=True):
    """A claim, the test that would decide it, its status and every decision."""

    id: int
    ref: str
    statement: str
    test: str
    # The kind of evidence its test is (``None``: written before wb asked), and the highest id of
    # each evidence table when it was written (``workbench.bundle.decisive``: what can decide it).
    test_kind: str | None
    evidence_before: dict[str, int] | None
    status: str
    links: dict[str, list[Any]]
    history: list[HypothesisStep]
    created_by: str
    created_at: str


class InvestigationView(Frame, frozen=True):
    """``wb investigate show``: the frame with its comparisons, observations and hypotheses."""

    comparisons: list[ComparisonView]
    observations: list[ObservationView]
    hypotheses: list[HypothesisView]


def frame_of(row: Any) -> Frame:
    return Frame(
        id=row.id,
        ref=f"investigation/{row.id}",
        title=row.title,
        lens=row.lens,
        question=row.question,
        guardrails=list(row.guardrails or []),
        intended_change=dict(row.intended_change or {}),
        baseline_runs=list(row.baseline_runs or []),
        candidate_runs=list(row.candidate_runs or []),
        created_by=row.created_by,
        created_at=row.created_at,
        imported=row.imported_bundle_id is not None,
        imported_bundle_id=row.imported_bundle_id,
    )


def comparison_of(row: Any, *, with_result: bool = True) -> ComparisonView:
    return ComparisonView(
        id=row.id,
        ref=f"comparison/{row.id}",
        baseline_runs=list(row.baseline_runs or []),
        candidate_runs=list(row.candidate_runs or []),
        parameters=ComparisonParameters.from_json(row.parameters),
        engine=msgspec.convert(dict(row.engine or {}), EngineIdentity),
        comparable=row.comparable,
        verdict=row.verdict,
        created_by=row.created_by,
        created_at=row.created_at,
        result=dict(row.result or {}) if with_result else msgspec.UNSET,
    )


def observations_of(rows: Sequence[Any]) -> list[ObservationView]:
    retracted_by = {r.retracts_id: r.id for r in rows if r.retracts_id is not None}
    return [
        ObservationView(
            id=r.id,
            ref=f"observation/{r.id}",
            label=OBSERVATION_LABEL,
            kind="retraction" if r.retracts_id is not None else "observation",
            text=r.text,
            evidence=list(r.evidence or []),
            source=r.source,
            retracts=None if r.retracts_id is None else f"observation/{r.retracts_id}",
            retracted_by=None if r.id not in retracted_by else f"observation/{retracted_by[r.id]}",
            pinned_by=r.pinned_by,
            pinned_at=r.pinned_at,
        )
        for r in rows
    ]


LINK_KEYS = {"rerun_plan": "rerun_plans", "comparison": "comparisons", "rerun_comparison": "rerun_comparisons"}


def hypothesis_of(row: Any, history: Sequence[Any]) -> HypothesisView:
    steps = [
        HypothesisStep(
            status=h.status,
            evidence=list(h.evidence or []),
            note=h.note,
            decided_by=h.decided_by,
            decided_at=h.decided_at,
        )
        for h in history
    ]
    links: dict[str, list[Any]] = {key: [] for key in LINK_KEYS.values()}
    for step in steps:
        for ev in step.evidence:
            kind = ev.get("kind")
            key = LINK_KEYS.get(kind) if isinstance(kind, str) else None
            if key and ev.get("id") not in links[key]:
                links[key].append(ev.get("id"))
    return HypothesisView(
        id=row.id,
        ref=f"hypothesis/{row.id}",
        statement=row.statement,
        test=row.test,
        test_kind=row.test_kind,
        evidence_before=None if row.evidence_before is None else {k: int(v) for k, v in row.evidence_before.items()},
        status=steps[-1].status if steps else "open",
        links=links,
        history=steps,
        created_by=row.created_by,
        created_at=row.created_at,
    )
