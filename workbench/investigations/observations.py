"""Observations: facts with evidence, never edited (a retraction is a new record)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.bundle.canonical import bundle_value
from workbench.errors import NotFound, UsageError, WbError
from workbench.investigations.common import (
    current_user,
    investigation_errors,
    investigation_of,
    parse_id,
    required_text,
)
from workbench.investigations.comparisons import comparison_in
from workbench.investigations.evidence import parse_observation_evidence
from workbench.investigations.views import ComparisonView, ObservationView, observations_of

if TYPE_CHECKING:
    from store.api import Store


def parse_evidence(items: Iterable[str], store: "Store | None" = None) -> list[dict[str, object]]:
    """``KIND=VALUE`` items (run=12, metric=ttft_p95, window=steady, value=110ms ...); see
    ``workbench.investigations.evidence``. Runs resolve to ids when a store is given."""
    return parse_observation_evidence(items, store)


def new_observation(
    store: "Store",
    inv: str | int,
    text: str,
    evidence: Sequence[Mapping[str, Any]],
    *,
    source: str = "manual",
    by: str | None = None,
    retracts: int | None = None,
) -> ObservationView:
    """Pin an observation (or, with ``retracts``, the retraction of one)."""
    from store.investigations import Observation, add_observation  # SQLAlchemy: loaded with the store

    if not evidence and retracts is None:
        raise UsageError("an observation cites its evidence (--evidence run=ID, metric=..., window=..., value=...)")
    inv_id = parse_id(inv, "investigation")
    with investigation_errors():
        investigation_of(store, inv_id, writable=True)  # these refusals first, as the record's own below
        row = Observation(
            investigation_id=inv_id,
            text=required_text(text, "the observation text"),
            evidence=bundle_value(list(evidence)),
            source=source,
            retracts_id=retracts,
            pinned_by=by or current_user(),
        )
        return observations_of([add_observation(store, row)])[0]


def derived_observations(comparison: ComparisonView) -> list[Mapping[str, Any]]:
    """The observations the compare engine derived, as its stored document holds them (raw
    JSON: the workflow stores what any compare engine returned, a stand-in's too)."""
    found = comparison.result.get("observations") if comparison.result else None
    return [o for o in found or [] if isinstance(o, Mapping)]


def pin_derived(
    store: "Store", inv_id: int, comparison: ComparisonView, observation: Mapping[str, Any], *, by: str | None = None
) -> ObservationView:
    """Pin one observation the compare engine derived, citing the stored comparison."""
    ev = observation.get("evidence")
    evidence = [{"kind": "comparison", "id": comparison.id}, *(ev if isinstance(ev, list) else [ev] if ev else [])]
    return new_observation(
        store, inv_id, str(observation.get("text", "")), evidence, source=f"comparison:{comparison.id}", by=by
    )


def observations_from_comparison(
    store: "Store", inv: str | int, comparison: str | int, *, by: str | None = None
) -> list[dict[str, object]]:
    """Pin each observation the compare engine derived, citing the stored comparison."""
    from store.investigations import observation_ids_from  # SQLAlchemy: loaded with the store, not at import

    comp, owner = comparison_in(store, comparison)
    inv_id = parse_id(inv, "investigation")
    if owner != inv_id:
        raise UsageError(f"comparison {comp.id} belongs to investigation {owner}, not {inv_id}")
    already = observation_ids_from(store, inv_id, f"comparison:{comp.id}")
    if already:
        raise WbError(
            f"the observations of comparison {comp.id} are already pinned (observations {', '.join(map(str, already))})"
        )
    derived = derived_observations(comp)
    if not derived:
        why = "it was refused" if not comp.comparable else "the engine derived none"
        raise WbError(f"comparison {comp.id} has no observations to pin ({why})")
    return [pin_derived(store, inv_id, comp, obs, by=by).to_json() for obs in derived]


def new_retraction(store: "Store", observation: str | int, reason: str, *, by: str | None = None) -> ObservationView:
    """Pin a retraction of ``observation``; the original stays as it was."""
    from store.investigations import get_observation  # SQLAlchemy: loaded with the store, not at import

    oid = parse_id(observation, "observation")
    row = get_observation(store, oid)
    if row is None:
        raise NotFound(f"no observation {oid}")
    if row.retracts_id is not None:
        raise UsageError(f"observation {oid} is itself a retraction")
    inv_id = row.investigation_id
    return new_observation(
        store, inv_id, f"Retracted: {required_text(reason, 'the reason')}", [], source="retraction", by=by, retracts=oid
    )
