"""Observations: facts with evidence, never edited (a retraction is a new record)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.bundle.canonical import bundle_value
from workbench.errors import NotFound, UsageError, WbError
from workbench.investigations.common import OBSERVATION_LABEL, current_user, investigation_row, parse_id, required_text
from workbench.investigations.comparisons import get_comparison
from workbench.investigations.evidence import parse_observation_evidence
from workbench.investigations.views import observations_of

if TYPE_CHECKING:
    from store.api import Store

def observation_views(rows: Sequence[Any]) -> list[dict[str, Any]]:
    return [o.to_json() for o in observations_of(rows)]


def parse_evidence(items: Iterable[str], store: "Store | None" = None) -> list[dict[str, Any]]:
    """``KIND=VALUE`` items (run=12, metric=ttft_p95, window=steady, value=110ms ...); see
    ``workbench.investigations.evidence``. Runs resolve to ids when a store is given."""
    return parse_observation_evidence(items, store)


def pin_observation(
    store: "Store",
    inv: str | int,
    text: str,
    evidence: Sequence[Mapping[str, Any]],
    *,
    source: str = "manual",
    by: str | None = None,
    retracts: int | None = None,
) -> dict[str, Any]:
    from store.investigations import Observation  # SQLAlchemy: loaded with the store, not at import

    if not evidence and retracts is None:
        raise UsageError("an observation cites its evidence (--evidence run=ID, metric=..., window=..., value=...)")
    with store.session() as s:
        inv_row = investigation_row(s, inv, writable=True)
        row = Observation(
            investigation_id=inv_row.id,
            text=required_text(text, "the observation text"),
            evidence=bundle_value(list(evidence)),
            source=source,
            retracts_id=retracts,
            pinned_by=by or current_user(),
        )
        s.add(row)
        s.flush()
        return observation_views([row])[0]


def observations_from_comparison(store: "Store", inv: str | int, comparison: str | int, *, by: str | None = None) -> list[dict[str, Any]]:
    """Pin each observation the compare engine derived, citing the stored comparison."""
    comp = get_comparison(store, comparison)
    inv_id = parse_id(inv, "investigation")
    if comp["investigation_id"] != inv_id:
        raise UsageError(f"comparison {comp['id']} belongs to investigation {comp['investigation_id']}, not {inv_id}")
    from sqlmodel import select  # SQLAlchemy: loaded with the store, not at import

    from store.investigations import Observation  # SQLAlchemy: loaded with the store, not at import

    with store.session() as s:
        already = s.exec(
            select(Observation.id).where(Observation.investigation_id == inv_id, Observation.source == f"comparison:{comp['id']}")
        ).all()
    if already:
        raise WbError(f"the observations of comparison {comp['id']} are already pinned (observations {', '.join(map(str, already))})")
    derived = comp["result"].get("observations") or []
    if not derived:
        why = "it was refused" if not comp["comparable"] else "the engine derived none"
        raise WbError(f"comparison {comp['id']} has no observations to pin ({why})")
    pinned = []
    for obs in derived:
        ev = obs.get("evidence")
        evidence = [{"kind": "comparison", "id": comp["id"]}, *(ev if isinstance(ev, list) else [ev] if ev else [])]
        pinned.append(pin_observation(store, inv_id, obs.get("text", ""), evidence, source=f"comparison:{comp['id']}", by=by))
    return pinned


def retract_observation(store: "Store", observation: str | int, reason: str, *, by: str | None = None) -> dict[str, Any]:
    """Pin a retraction of ``observation``; the original stays as it was."""
    from store.investigations import Observation  # SQLAlchemy: loaded with the store, not at import

    oid = parse_id(observation, "observation")
    with store.session() as s:
        row = s.get(Observation, oid)
        if row is None:
            raise NotFound(f"no observation {oid}")
        if row.retracts_id is not None:
            raise UsageError(f"observation {oid} is itself a retraction")
        inv_id = row.investigation_id
    return pin_observation(store, inv_id, f"Retracted: {required_text(reason, 'the reason')}", [], source="retraction", by=by, retracts=oid)
