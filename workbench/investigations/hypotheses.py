"""Hypotheses: claims with the test that would decide them, and a status history."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.bundle.canonical import bundle_value, nfc
from workbench.errors import NotFound, UsageError
from workbench.investigations.common import DECIDED, HYPOTHESIS_STATUSES, current_user, investigation_row, parse_id, required_text
from workbench.investigations.evidence import parse_decision_evidence
from workbench.investigations.views import HypothesisView, hypothesis_of

if TYPE_CHECKING:
    from store.api import Store

def new_hypothesis(store: "Store", inv: str | int, statement: str, test: str, *, by: str | None = None) -> HypothesisView:
    """A claim with the test that would decide it, opened (status ``open``)."""
    from store.investigations import Hypothesis, HypothesisStatus  # SQLAlchemy: loaded with the store, not at import

    with store.session() as s:
        inv_row = investigation_row(s, inv, writable=True)
        row = Hypothesis(
            investigation_id=inv_row.id,
            statement=required_text(statement, "the hypothesis"),
            test=required_text(test, "the test that would decide it (--test)"),
            created_by=by or current_user(),
        )
        s.add(row)
        s.flush()
        first = HypothesisStatus(hypothesis_id=row.id, status="open", decided_by=row.created_by)
        s.add(first)
        s.flush()
        return hypothesis_of(row, [first])


def parse_hypothesis_evidence(items: Iterable[str]) -> list[dict[str, Any]]:
    """``plan=3`` / ``plan=NAME`` (a rerun plan), ``comparison=5``, ``rerun_comparison=2``;
    see ``workbench.investigations.evidence``."""
    return parse_decision_evidence(items)


def check_links(store: "Store", evidence: Sequence[Mapping[str, Any]], investigation_id: int) -> None:
    """A linked comparison must exist in the same investigation; rerun plans are checked
    when their tables exist."""
    from store.investigations import InvestigationComparison  # SQLAlchemy: loaded with the store, not at import

    with store.session() as s:
        for ev in evidence:
            if ev["kind"] == "comparison":
                row = s.get(InvestigationComparison, ev["id"])
                if row is None:
                    raise NotFound(f"no stored comparison {ev['id']}")
                if row.investigation_id != investigation_id:
                    raise UsageError(
                        f"comparison {ev['id']} belongs to investigation {row.investigation_id}, "
                        f"not to this hypothesis's investigation {investigation_id}"
                    )
            if ev["kind"] in ("rerun_plan", "rerun_comparison"):
                table = rerun_table(ev["kind"])
                if "id" not in ev:  # a plan named by its name
                    from sqlmodel import select  # SQLAlchemy: loaded with the store, not at import

                    row = s.exec(select(table).where(table.name == ev["name"])).first()
                    if row is None:
                        raise NotFound(f"no rerun plan named {ev['name']!r} (see 'wb rerun')")
                    ev["id"] = int(row.id)
                    continue
                if s.get(table, ev["id"]) is None:
                    raise NotFound(f"no {ev['kind'].replace('_', ' ')} {ev['id']} (see 'wb rerun')")


def rerun_table(kind: str) -> Any:
    """The rerun harness's table for ``rerun_plan`` or ``rerun_comparison`` evidence."""
    from store.rerun import RerunComparison, RerunPlan  # SQLAlchemy: loaded with the store, not at import

    return {"rerun_plan": RerunPlan, "rerun_comparison": RerunComparison}[kind]


def decide_hypothesis(
    store: "Store",
    hypothesis: str | int,
    status: str,
    *,
    evidence: Sequence[Mapping[str, Any]] = (),
    note: str = "",
    by: str | None = None,
) -> HypothesisView:
    """A new status for a hypothesis, with the evidence that decided it (its history kept)."""
    from sqlmodel import select  # SQLAlchemy: loaded with the store, not at import

    from store.investigations import Hypothesis, HypothesisStatus  # SQLAlchemy: loaded with the store, not at import

    if status not in HYPOTHESIS_STATUSES:
        raise UsageError(f"status must be one of {', '.join(HYPOTHESIS_STATUSES)}")
    if status in DECIDED and not evidence:
        raise UsageError(f"'{status}' needs the evidence that decided it (--evidence plan=ID or comparison=ID)")
    hid = parse_id(hypothesis, "hypothesis")
    with store.session() as s:
        row = s.get(Hypothesis, hid)
        if row is None:
            raise NotFound(f"no hypothesis {hid}")
        investigation_row(s, row.investigation_id, writable=True)
    evidence = [dict(ev) for ev in evidence]
    check_links(store, evidence, row.investigation_id)
    with store.session() as s:
        s.add(HypothesisStatus(hypothesis_id=hid, status=status, evidence=bundle_value(list(evidence)), note=nfc(note), decided_by=by or current_user()))
        s.flush()
        history = s.exec(select(HypothesisStatus).where(HypothesisStatus.hypothesis_id == hid).order_by(HypothesisStatus.id)).all()
        return hypothesis_of(row, history)
