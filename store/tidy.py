"""Tidying runs: rename a run's label, remove a run nothing refers to.

A run that an investigation (its run sets, a stored comparison, an observation's
evidence) or a rerun execution refers to is kept: removing it would leave evidence
pointing at nothing, and a bundle exported from that investigation would name a run
the store no longer has. There is no override; remove the investigation's need for it
first. Removing a run removes its columns, sources and declaration history (foreign
keys cascade), and the captures no other run uses, so the file can be imported again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from sqlalchemy import delete, func
from sqlmodel import select

from store.errors import RunNotFound, StoreError, StoreRefusal
from store.tables import Capture, Run, RunSource

if TYPE_CHECKING:
    from sqlmodel import Session

    from store.api import Store


class RunInUse(StoreError):
    """A run that evidence refers to and that therefore cannot be removed."""


class LabelLooksAlike(StoreRefusal):
    """A new label that differs from another run's but would look the same on screen."""


def rename_run(store: "Store", run_id: int, label: str, *, look_alike_form: Callable[[str], str]) -> str:
    """Give the run a new label; returns the old one. A label that differs from another run's
    but has its ``look_alike_form`` (the application's: NFKC, invisibles removed) is refused
    naming both, in the same transaction as the write."""
    label = label.strip()
    if not label:
        raise StoreRefusal("a run's label cannot be empty")
    form = look_alike_form(label)
    with store.session() as s:
        row = s.get(Run, run_id)
        if row is None:
            raise RunNotFound(f"no run with id {run_id}")
        others = s.exec(select(Run.id, Run.label).where(Run.id != run_id).order_by(Run.id)).all()  # type: ignore[arg-type]
        for other_id, other in others:
            if other != label and look_alike_form(other) == form:
                raise LabelLooksAlike(
                    f"label {label!r} looks like the label {other!r} of run {other_id} (they differ only by "
                    f"invisible characters, spacing or compatibility forms); run {run_id} is not renamed"
                )
        old, row.label = row.label, label
        s.add(row)
    return old


def _refers(value: Any, run_id: int) -> bool:
    """Run ids in JSON run lists (ints; imported investigations keep bundle refs as strings)."""
    return any(isinstance(v, int) and not isinstance(v, bool) and v == run_id for v in (value or []))


def references(session: "Session", run_id: int) -> list[str]:
    """What refers to the run, in words ("investigation 2 (baseline runs)", ...)."""
    from store.investigations import Investigation, InvestigationComparison, Observation
    from store.rerun import RerunRun

    found: list[str] = []
    made_here = select(Investigation).where(Investigation.imported_bundle_id.is_(None))  # type: ignore[union-attr]
    local = {inv.id: inv for inv in session.exec(made_here).all()}
    for inv in local.values():
        sides = [
            name
            for name, runs in (("baseline", inv.baseline_runs), ("candidate", inv.candidate_runs))
            if _refers(runs, run_id)
        ]
        if sides:
            found.append(f"investigation {inv.id} ({' and '.join(sides)} runs)")
    for comp in session.exec(select(InvestigationComparison)).all():
        control = (comp.parameters or {}).get("control")  # A′ runs of an A/A control
        if comp.investigation_id in local and any(
            _refers(r, run_id) for r in (comp.baseline_runs, comp.candidate_runs, control)
        ):
            found.append(f"comparison {comp.id} of investigation {comp.investigation_id}")
    for obs in session.exec(select(Observation)).all():
        if obs.investigation_id in local and any(
            isinstance(e, dict) and e.get("kind") == "run" and e.get("id") == run_id for e in (obs.evidence or [])
        ):
            found.append(f"observation {obs.id} of investigation {obs.investigation_id}")
    n = session.exec(select(func.count()).select_from(RerunRun).where(RerunRun.run_id == run_id)).one()
    if n:
        found.append(f"{n} rerun record(s)")
    return found


class Removed(TypedDict):
    """What ``remove_runs`` removed (``wb remove --json``): the runs, and the captures no run is left from."""

    runs: list[int]
    captures: list[str]


def remove_runs(store: "Store", run_ids: Sequence[int]) -> Removed:
    """Remove the runs (all or nothing); refused with the reason when anything refers to one."""
    removed_captures: list[str] = []
    with store.session() as s:
        for run_id in run_ids:
            if s.get(Run, run_id) is None:
                raise RunNotFound(f"no run with id {run_id}")
            refs = references(s, run_id)
            if refs:
                shown = ", ".join(refs[:3]) + (f" and {len(refs) - 3} more" if len(refs) > 3 else "")
                raise RunInUse(
                    f"run {run_id} is evidence in {shown}; it is kept (an investigation and its bundles must keep "
                    f"their runs)"
                )
        capture_ids = set(s.exec(select(RunSource.capture_id).where(RunSource.run_id.in_(list(run_ids)))).all())  # type: ignore[attr-defined]
        s.exec(delete(Run).where(Run.id.in_(list(run_ids))))  # type: ignore[union-attr]
        s.flush()
        for capture_id in sorted(capture_ids):
            still = s.exec(select(func.count()).select_from(RunSource).where(RunSource.capture_id == capture_id)).one()
            if not still:
                cap = s.get(Capture, capture_id)
                if cap is not None:
                    removed_captures.append(cap.name)
                    s.delete(cap)
    return {"runs": list(run_ids), "captures": removed_captures}
