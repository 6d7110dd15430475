"""Comparisons made inside an investigation: the compare engine's result, stored with its parameters."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from workbench import __version__
from workbench.bundle.canonical import bundle_value
from workbench.compare import compare
from workbench.compare.model import verdict_of
from workbench.compare.parameters import ComparisonParameters
from workbench.compare.run_sets import check_run_sets
from workbench.errors import NotFound, UsageError
from workbench.investigations.common import (
    current_user,
    investigation_errors,
    investigation_of,
    parse_id,
    required_text,
    resolve_runs,
)
from workbench.investigations.frame import frame_guardrails
from workbench.investigations.views import ComparisonView, comparison_of, frame_of

if TYPE_CHECKING:
    from store.api import Store


class CompareResult(Protocol):
    """What a compare engine returns: ``workbench.compare.model.Comparison`` (or a stand-in)."""

    def to_json(self) -> Mapping[str, Any]: ...


CompareEngine = Callable[..., CompareResult]


def engine_identity() -> dict[str, str]:
    return {"name": "workbench.compare", "version": __version__}


def default_compare_engine() -> CompareEngine:
    return compare


def store_comparison(
    store: "Store",
    inv: str | int,
    baseline: Sequence[str | int],
    candidate: Sequence[str | int],
    *,
    lens: str | None = None,
    changes: Mapping[str, Sequence[Any]] | None = None,
    accepts: Mapping[str, str] | None = None,
    engine: CompareEngine | None = None,
    by: str | None = None,
    control: Sequence[str | int] = (),
) -> ComparisonView:
    """Compare run sets with the compare engine and store its JSON with the parameters;
    the stored view is returned (``view.comparison()`` types its result).

    ``changes`` defaults to the investigation's intended change. A refused comparison
    is stored too: a refusal is a result. ``control``: baseline-again (A′) runs, the
    A/A noise floor; their ids are stored in the parameters (``control``).
    """
    from store.investigations import InvestigationComparison, add_comparison  # SQLAlchemy: with the store

    frame = frame_of(investigation_of(store, inv, writable=True))
    if not baseline or not candidate:
        raise UsageError("name at least one baseline and one candidate run")
    sides = check_run_sets(
        resolve_runs(store, baseline), resolve_runs(store, candidate), resolve_runs(store, control) if control else ()
    )
    base_ids, cand_ids = list(sides.baseline), list(sides.candidate)
    params = ComparisonParameters(
        lens=lens or frame.lens,
        changes={k: tuple(v) for k, v in (changes if changes is not None else frame.intended_change).items()},
        accepts={k: required_text(v, f"the reason for accepting {k}") for k, v in (accepts or {}).items()},
        control=sides.control,
        # The frame's guardrails apply at Compare (and again at --recompute): judged by the one contract.
        guardrails=tuple(
            f"{g.metric} {g.rule} {g.limit:g}"
            for g in frame_guardrails(lens or frame.lens, frame.guardrails, f"investigation {frame.id}'s guardrail")
        ),
    )
    engine = engine or default_compare_engine()
    result = engine(
        store.load_runs(base_ids),
        store.load_runs(cand_ids),
        **params.engine_arguments(),
        **({"control": store.load_runs(list(params.control))} if params.control else {}),
    )
    doc = bundle_value(result.to_json())
    row = InvestigationComparison(
        investigation_id=frame.id,
        baseline_runs=base_ids,
        candidate_runs=cand_ids,
        parameters=bundle_value(params.to_json()),
        engine=engine_identity(),
        result=doc,
        comparable=bool(doc.get("comparable")),
        verdict=verdict_of(doc),
        created_by=by or current_user(),
    )
    with investigation_errors():
        return comparison_of(add_comparison(store, row))  # the first names the run sets the frame left open


def get_comparison(store: "Store", comparison: str | int) -> dict[str, object]:
    """``wb investigate comparison --json``: the stored view and its investigation's id."""
    view, investigation_id = comparison_in(store, comparison)
    return {**view.to_json(), "investigation_id": investigation_id}


def comparison_in(store: "Store", comparison: str | int) -> tuple[ComparisonView, int]:
    """A stored comparison and the id of the investigation it belongs to."""
    from store.investigations import get_comparison  # SQLAlchemy: loaded with the store, not at import

    cid = parse_id(comparison, "comparison")
    row = get_comparison(store, cid)
    if row is None:
        raise NotFound(f"no stored comparison {cid}")
    return comparison_of(row), int(row.investigation_id)
