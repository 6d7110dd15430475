"""Framing an investigation, and reading investigations back whole."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from lenses import get_lens
from workbench.bundle.canonical import bundle_value, nfc
from workbench.errors import UsageError
from workbench.vocabulary import JSONDoc
from workbench.investigations.common import (
    LENSES,
    current_user,
    investigation_errors,
    parse_id,
    required_text,
    resolve_runs,
)
from workbench.investigations.views import (
    InvestigationSummary,
    InvestigationView,
    comparison_of,
    frame_of,
    hypothesis_of,
    observations_of,
)

if TYPE_CHECKING:
    from lenses.base import GuardrailSpec
    from store.api import Store


def frame_guardrails(lens: str, texts: Sequence[str], what: str = "--guardrail") -> tuple["GuardrailSpec", ...]:
    """An investigation's guardrails as the compare contract judges them (``METRIC RULE
    LIMIT`` each, ``lenses.extensions.GUARDRAIL_GRAMMAR``): at Compare (``compare(...,
    guardrails=)``), at Verify (a plan's guardrails, ``rerun.plan.frame_guardrail``) and by
    ``--recompute``. ``UsageError`` names a line that is not a guardrail."""
    from lenses.extensions import parse_guardrail  # lenses.base: numpy, loaded when guardrails are read

    the_lens = get_lens(lens)
    out = []
    for text in texts:
        try:
            out.append(parse_guardrail(text, the_lens))
        except ValueError as exc:
            raise UsageError(f"{what}: {str(exc).removeprefix('guardrail ')}") from None
    return tuple(out)


def new_investigation(
    store: "Store",
    *,
    lens: str,
    question: str,
    guardrails: Sequence[str] = (),
    intended_change: Mapping[str, Sequence[Any]] | None = None,
    baseline: Sequence[str | int] = (),
    candidate: Sequence[str | int] = (),
    title: str = "",
    by: str | None = None,
) -> InvestigationView:
    """Frame a new investigation: lens, decision question, guardrails, intended change."""
    from store.investigations import Investigation, add_investigation  # SQLAlchemy: loaded with the store

    if lens not in LENSES:
        raise UsageError(f"unknown lens {lens!r} (choose {', '.join(LENSES)})")
    # Stored in one normal form, so that Compare, Verify and --recompute read the same rule.
    guardrails = [f"{g.metric} {g.rule} {g.limit:g}" for g in frame_guardrails(lens, [nfc(g) for g in guardrails])]
    row = Investigation(
        title=nfc(title).strip(),
        lens=lens,
        question=required_text(question, "the decision question"),
        guardrails=guardrails,
        intended_change=bundle_value({k: list(v) for k, v in (intended_change or {}).items()}),
        baseline_runs=resolve_runs(store, baseline),
        candidate_runs=resolve_runs(store, candidate),
        created_by=by or current_user(),
    )
    return investigation_view(store, add_investigation(store, row))


def list_investigations(store: "Store") -> list[JSONDoc]:
    """``wb investigate list --json``: :func:`investigation_summaries` as JSON."""
    return [i.to_json() for i in investigation_summaries(store)]


def investigation_summaries(store: "Store") -> list[InvestigationSummary]:
    from store.investigations import investigations_with_counts  # SQLAlchemy: loaded with the store

    return [
        InvestigationSummary(**msgspec.structs.asdict(frame_of(row)), **counts)
        for row, counts in investigations_with_counts(store)
    ]


def investigation_view(store: "Store", inv: str | int) -> InvestigationView:
    """The frame with its comparisons, observations (retractions kept) and hypotheses."""
    from store.investigations import investigation_records  # SQLAlchemy: loaded with the store, not at import

    with investigation_errors():
        found = investigation_records(store, parse_id(inv, "investigation"))
    return InvestigationView(
        **msgspec.structs.asdict(frame_of(found.investigation)),
        comparisons=[comparison_of(c) for c in found.comparisons],
        observations=observations_of(found.observations),
        hypotheses=[hypothesis_of(h, found.decisions[int(h.id)]) for h in found.hypotheses],  # type: ignore[arg-type]
    )
