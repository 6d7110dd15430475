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

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from sqlalchemy import JSON, Column, ForeignKey, Integer, Text, event, func
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, SQLModel, col, select

from store.append_only import attach
from store.errors import StoreError
from store.tables import utcnow_iso

if TYPE_CHECKING:
    from sqlmodel import Session

    from store.api import Store

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


def get_investigation(store: "Store", investigation_id: int) -> Investigation | None:
    """The investigation with this id, or ``None``."""
    with store.session() as s:
        return s.get(Investigation, investigation_id)


# -- the store's doors: each opens its own session (nothing outside store/ does) ---------------


class InvestigationNotFound(StoreError):
    """No investigation by that id."""


class InvestigationReadOnly(StoreError):
    """An investigation imported from a bundle takes no new records."""


def _writable(s: "Session", investigation_id: int) -> Investigation:
    row = s.get(Investigation, investigation_id)
    if row is None:
        raise InvestigationNotFound(f"no investigation {investigation_id} (see 'wb investigate list')")
    if row.imported_bundle_id is not None:
        raise InvestigationReadOnly(f"investigation {investigation_id} was imported from a bundle and is read-only")
    return row


def add_comparison(store: "Store", row: InvestigationComparison) -> InvestigationComparison:
    """Store a comparison of its investigation (refused when the investigation is read-only);
    the first one names the run sets the frame left open."""
    with store.session() as s:
        inv = _writable(s, row.investigation_id)
        s.add(row)
        s.flush()
        if not inv.baseline_runs and not inv.candidate_runs:
            inv.baseline_runs, inv.candidate_runs = list(row.baseline_runs), list(row.candidate_runs)
            s.add(inv)
        return row


def add_observation(store: "Store", row: Observation) -> Observation:
    """Pin an observation (or a retraction) of its investigation (refused when read-only)."""
    with store.session() as s:
        _writable(s, row.investigation_id)
        s.add(row)
        s.flush()
        return row


def get_comparison(store: "Store", comparison_id: int) -> InvestigationComparison | None:
    """A stored comparison by id, or ``None``."""
    with store.session() as s:
        return s.get(InvestigationComparison, comparison_id)


def get_observation(store: "Store", observation_id: int) -> Observation | None:
    """An observation by id, or ``None``."""
    with store.session() as s:
        return s.get(Observation, observation_id)


def observation_ids_from(store: "Store", investigation_id: int, source: str) -> list[int]:
    """The ids of the investigation's observations pinned from ``source`` (``comparison:ID``)."""
    with store.session() as s:
        stmt = select(Observation.id).where(
            Observation.investigation_id == investigation_id, Observation.source == source
        )
        return [int(i) for i in s.exec(stmt).all() if i is not None]


def add_investigation(store: "Store", row: Investigation) -> int:
    """Frame a new investigation; its id."""
    with store.session() as s:
        s.add(row)
        s.flush()
        return int(row.id)  # type: ignore[arg-type]


def investigations_with_counts(store: "Store") -> list[tuple[Investigation, dict[str, int]]]:
    """Every investigation, oldest first, with its counts of comparisons, observations and
    hypotheses, read in one transaction."""
    counted = (("comparisons", InvestigationComparison), ("observations", Observation), ("hypotheses", Hypothesis))
    with store.session() as s:
        rows = s.exec(select(Investigation).order_by(Investigation.id)).all()  # type: ignore[arg-type]
        return [
            (
                row,
                {
                    name: int(s.exec(select(func.count()).select_from(t).where(t.investigation_id == row.id)).one())
                    for name, t in counted
                },
            )
            for row in rows
        ]


@dataclass(frozen=True)
class InvestigationRecords:
    """An investigation with every record of it, oldest first; ``decisions``: each hypothesis's
    status rows by hypothesis id."""

    investigation: Investigation
    comparisons: list[InvestigationComparison]
    observations: list[Observation]
    hypotheses: list[Hypothesis]
    decisions: dict[int, list[HypothesisStatus]]


def investigation_records(store: "Store", investigation_id: int) -> InvestigationRecords:
    """The investigation and its records, read in one transaction (``InvestigationNotFound``)."""
    with store.session() as s:
        row = s.get(Investigation, investigation_id)
        if row is None:
            raise InvestigationNotFound(f"no investigation {investigation_id} (see 'wb investigate list')")

        def of(table: Any) -> list[Any]:
            return list(s.exec(select(table).where(table.investigation_id == row.id).order_by(table.id)).all())

        hypotheses = of(Hypothesis)
        decisions: dict[int, list[HypothesisStatus]] = {int(h.id): [] for h in hypotheses}
        if decisions:
            stmt = (
                select(HypothesisStatus)
                .where(HypothesisStatus.hypothesis_id.in_(list(decisions)))  # type: ignore[attr-defined]
                .order_by(HypothesisStatus.id)
            )
            for st in s.exec(stmt).all():
                decisions[st.hypothesis_id].append(st)
        return InvestigationRecords(row, of(InvestigationComparison), of(Observation), hypotheses, decisions)


def get_hypothesis(store: "Store", hypothesis_id: int) -> Hypothesis | None:
    """A hypothesis by id, or ``None``."""
    with store.session() as s:
        return s.get(Hypothesis, hypothesis_id)


def add_hypothesis_status(store: "Store", status: HypothesisStatus) -> list[HypothesisStatus]:
    """Append a status decision to a hypothesis's history; the whole history, oldest first."""
    with store.session() as s:
        s.add(status)
        s.flush()
        stmt = (
            select(HypothesisStatus)
            .where(HypothesisStatus.hypothesis_id == status.hypothesis_id)
            .order_by(col(HypothesisStatus.id))
        )
        return list(s.exec(stmt).all())


class BundleKeptMeanwhile(StoreError):
    """A concurrent import kept this bundle between the check and the insert (the unique
    checksum decided; this import rolled back)."""


class BundleCopy:
    """A verified bundle's records copied into the store in one transaction
    (:func:`copying_bundle`): each ``add`` gets its id, which later records cite."""

    def __init__(self, session: "Session") -> None:
        self._s = session

    def kept(self, checksum: str) -> tuple[int, int | None] | None:
        """(bundle id, its investigation's id) when a bundle with this checksum is kept already."""
        existing = self._s.exec(select(ImportedBundle).where(ImportedBundle.checksum == checksum)).first()
        if existing is None:
            return None
        inv = self._s.exec(select(Investigation).where(Investigation.imported_bundle_id == existing.id)).first()
        return int(existing.id), (int(inv.id) if inv is not None and inv.id is not None else None)  # type: ignore[arg-type]

    def add(self, row: Any) -> int:
        """Add a record; its id."""
        self._s.add(row)
        self._s.flush()
        return int(row.id)

    def retracts(self, observation_id: int, retracted_id: int | None) -> None:
        """Mark a copied observation as the retraction of another (copied in any order)."""
        row = self._s.get(Observation, observation_id)
        assert row is not None, "copied in this transaction"
        row.retracts_id = retracted_id
        self._s.add(row)
        self._s.flush()


@contextmanager
def copying_bundle(store: "Store") -> Iterator[BundleCopy]:
    """A :class:`BundleCopy` over one transaction (``BundleKeptMeanwhile`` when a concurrent
    import kept the same bundle first)."""
    try:
        with store.session() as s:
            yield BundleCopy(s)
    except IntegrityError:
        raise BundleKeptMeanwhile("a concurrent import kept this bundle first") from None
