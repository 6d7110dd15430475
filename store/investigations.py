"""Investigation tables: frame, stored comparisons, observations, hypotheses, imported bundles.

Observations are immutable: nothing updates an ``observation`` row. Retracting one is
a new row whose ``retracts_id`` names it, and both are kept. A hypothesis's status is
the latest of its ``hypothesis_status`` rows (history kept, append-only: the ORM and the
database's triggers refuse a change, ``store.append_only``). Hypotheses and
observations are separate tables; nothing converts one into the other.

Run references are JSON lists of run ids (an imported investigation keeps the
bundle's run refs instead, as strings: its runs are in the bundle, not the store).
JSON columns hold plain JSON only (the workbench layer removes NaN before writing).
"""

from __future__ import annotations

from typing import Any, Optional

from sqlalchemy import JSON, Column, ForeignKey, Integer, Text, event
from sqlmodel import Field, SQLModel

from store.append_only import attach
from store.errors import StoreError
from store.tables import utcnow_iso

HYPOTHESIS_STATUSES = ("open", "supported", "refuted", "undetermined")


class Investigation(SQLModel, table=True):
    """The frame: lens, decision question, guardrails, intended change, run sets."""

    __tablename__ = "investigation"
    id: Optional[int] = Field(default=None, primary_key=True)
    title: str = ""
    lens: str = Field(index=True)
    question: str = Field(sa_column=Column(Text, nullable=False))
    guardrails: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    # {dimension: [from, to]}
    intended_change: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    baseline_runs: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    candidate_runs: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    created_by: str = ""
    created_at: str = Field(default_factory=utcnow_iso)
    # Imported investigations are read-only copies of a colleague's bundle.
    imported_bundle_id: Optional[int] = Field(
        default=None, sa_column=Column(Integer, ForeignKey("imported_bundle.id", ondelete="SET NULL"), nullable=True)
    )


class InvestigationComparison(SQLModel, table=True):
    """A comparison made inside an investigation: its parameters and the stored result JSON."""

    __tablename__ = "investigation_comparison"
    id: Optional[int] = Field(default=None, primary_key=True)
    investigation_id: int = Field(
        sa_column=Column(Integer, ForeignKey("investigation.id", ondelete="CASCADE"), index=True, nullable=False)
    )
    baseline_runs: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    candidate_runs: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    # {"lens", "changes": {dim: [from, to]}, "accepts": {dim: why}}
    parameters: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    # {"name", "version"}: which engine produced ``result``
    engine: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    result: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    comparable: bool = False
    verdict: Optional[str] = None
    # The ref the comparison had in the bundle it was imported from, if any.
    origin_ref: Optional[str] = None
    created_by: str = ""
    created_at: str = Field(default_factory=utcnow_iso)


class Observation(SQLModel, table=True):
    """A pinned fact with its evidence. Never updated; a retraction is a new row."""

    __tablename__ = "observation"
    id: Optional[int] = Field(default=None, primary_key=True)
    investigation_id: int = Field(
        sa_column=Column(Integer, ForeignKey("investigation.id", ondelete="CASCADE"), index=True, nullable=False)
    )
    text: str = Field(sa_column=Column(Text, nullable=False))
    # [{"kind": "run"|"metric"|"window"|"value"|"comparison"|..., ...}] or the engine's evidence
    evidence: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    # "manual", or "comparison:<id>" for observations taken from a stored comparison
    source: str = "manual"
    retracts_id: Optional[int] = Field(
        default=None, sa_column=Column(Integer, ForeignKey("observation.id", ondelete="SET NULL"), nullable=True)
    )
    origin_ref: Optional[str] = None
    pinned_by: str = ""
    pinned_at: str = Field(default_factory=utcnow_iso)


class Hypothesis(SQLModel, table=True):
    """A falsifiable statement and the test that would decide it."""

    __tablename__ = "hypothesis"
    id: Optional[int] = Field(default=None, primary_key=True)
    investigation_id: int = Field(
        sa_column=Column(Integer, ForeignKey("investigation.id", ondelete="CASCADE"), index=True, nullable=False)
    )
    statement: str = Field(sa_column=Column(Text, nullable=False))
    test: str = Field(sa_column=Column(Text, nullable=False))
    # What kind of evidence the test is (rerun, comparison, bisection, diagnosis: the kinds that
    # can decide it); NULL for a hypothesis written before it was asked (any decisive kind).
    test_kind: Optional[str] = None
    # {evidence table: its highest id when the hypothesis was written}: evidence at or below it
    # was recorded before the hypothesis and cannot decide it; NULL before it was recorded.
    evidence_before: Optional[dict[str, Any]] = Field(default=None, sa_column=Column(JSON, nullable=True))
    origin_ref: Optional[str] = None
    created_by: str = ""
    created_at: str = Field(default_factory=utcnow_iso)


class HypothesisStatus(SQLModel, table=True):
    """One status decision; the latest row is the hypothesis's current status."""

    __tablename__ = "hypothesis_status"
    id: Optional[int] = Field(default=None, primary_key=True)
    hypothesis_id: int = Field(
        sa_column=Column(Integer, ForeignKey("hypothesis.id", ondelete="CASCADE"), index=True, nullable=False)
    )
    status: str  # one of HYPOTHESIS_STATUSES
    # [{"kind": "rerun_plan"|"comparison"|"rerun_comparison", "id": ...}]
    evidence: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    note: str = ""
    decided_by: str = ""
    decided_at: str = Field(default_factory=utcnow_iso)


class HistoryImmutable(StoreError):
    """A hypothesis's status decisions are history: never changed nor removed."""


@event.listens_for(HypothesisStatus, "before_update")
@event.listens_for(HypothesisStatus, "before_delete")
def _decisions_are_history(_mapper: Any, _connection: Any, target: HypothesisStatus) -> None:
    raise HistoryImmutable(f"hypothesis decision {target.id} is history: it is never changed nor removed")


attach(HypothesisStatus.__table__)  # type: ignore[attr-defined]  # the database refuses it too (store.append_only)


class ImportedBundle(SQLModel, table=True):
    """A colleague's bundle kept verbatim for review (read-only; nothing in it is run)."""

    __tablename__ = "imported_bundle"
    id: Optional[int] = Field(default=None, primary_key=True)
    checksum: str = Field(index=True, unique=True)
    format_version: str
    tool: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    source_name: str = ""
    # The bundle text exactly as read (so it can be re-verified or re-exported as is).
    content: str = Field(sa_column=Column(Text, nullable=False))
    verified: bool = False
    imported_by: str = ""
    imported_at: str = Field(default_factory=utcnow_iso)
