"""The records a hypothesis can cite as evidence, read in one transaction: stored comparisons
and observations, rerun plans with their comparisons and executions, bisections.

A hypothesis is decided by its own test (``workbench.investigations.origin``); what decides
that reads here, through an :class:`EvidenceReader` (``with reading_evidence(store) as read``),
and a new hypothesis records the highest id of each evidence table when it is written
(:func:`add_hypothesis`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sqlalchemy import func
from sqlmodel import col, select

from store.bisect import Bisection, find_bisection
from store.investigations import (
    Hypothesis,
    HypothesisStatus,
    InvestigationComparison,
    Observation,
    _writable,
)
from store.rerun import RerunComparison, RerunExecution, RerunPlan

if TYPE_CHECKING:
    from sqlmodel import Session

    from store.api import Store

# evidence table -> (its ORM class, the column that says when a row was written)
_STAMPED: dict[str, tuple[Any, Any]] = {
    "comparison": (InvestigationComparison, InvestigationComparison.created_at),
    "rerun_comparison": (RerunComparison, RerunComparison.created_at),
    "bisection": (Bisection, Bisection.created_at),
    "observation": (Observation, Observation.pinned_at),
}


class EvidenceReader:
    """Typed reads of the evidence tables, all in the transaction that made the reader."""

    def __init__(self, session: "Session") -> None:
        self._s = session

    def comparison(self, comparison_id: Any) -> InvestigationComparison | None:
        return self._s.get(InvestigationComparison, comparison_id)

    def observation(self, observation_id: Any) -> Observation | None:
        return self._s.get(Observation, observation_id)

    def bisection(self, ref: str | int | None) -> Bisection:
        """By id, by name, or the latest (``BisectionNotFound``)."""
        return find_bisection(self._s, ref)

    def bisection_by_id(self, bisection_id: int) -> Bisection | None:
        return self._s.get(Bisection, bisection_id)

    def plan(self, plan_id: Any) -> RerunPlan | None:
        return self._s.get(RerunPlan, plan_id)

    def plan_named(self, name: Any) -> RerunPlan | None:
        return self._s.exec(select(RerunPlan).where(RerunPlan.name == name)).first()

    def rerun_comparison(self, comparison_id: Any) -> RerunComparison | None:
        return self._s.get(RerunComparison, comparison_id)

    def plan_comparisons(self, plan_id: Any) -> list[RerunComparison]:
        """A plan's rerun comparisons, oldest first."""
        stmt = select(RerunComparison).where(RerunComparison.plan_id == plan_id).order_by(col(RerunComparison.id))
        return list(self._s.exec(stmt).all())

    def execution(self, execution_id: Any) -> RerunExecution | None:
        return self._s.get(RerunExecution, execution_id)

    def observations_up_to(self, investigation_id: int, last_id: int) -> list[Observation]:
        """The investigation's observations with an id at or below ``last_id``."""
        stmt = select(Observation).where(
            Observation.investigation_id == investigation_id, col(Observation.id) <= last_id
        )
        return list(self._s.exec(stmt).all())

    def latest_ids(self, written_at: str | None = None) -> dict[str, int]:
        """The highest id of each evidence table now (or, with ``written_at``, among the rows
        written no later than it)."""
        return _latest_ids(self._s, written_at)


def _latest_ids(s: "Session", written_at: str | None = None) -> dict[str, int]:
    out = {}
    for table, (model, stamp) in _STAMPED.items():
        query = select(func.max(model.id))
        if written_at is not None:
            query = query.where(stamp <= written_at)
        out[table] = int(s.exec(query).one() or 0)
    return out


@contextmanager
def reading_evidence(store: "Store") -> Iterator[EvidenceReader]:
    """An :class:`EvidenceReader` over one transaction of ``store``."""
    with store.session() as s:
        yield EvidenceReader(s)


def add_hypothesis(store: "Store", row: Hypothesis) -> tuple[Hypothesis, HypothesisStatus]:
    """Open a hypothesis (refused when its investigation is read-only): it records the
    evidence that exists now (``evidence_before``), and its first status is ``open``."""
    with store.session() as s:
        _writable(s, row.investigation_id)
        row.evidence_before = _latest_ids(s)
        s.add(row)
        s.flush()
        assert row.id is not None  # flushed: the database gave it one
        first = HypothesisStatus(hypothesis_id=row.id, status="open", decided_by=row.created_by)
        s.add(first)
        s.flush()
        return row, first
