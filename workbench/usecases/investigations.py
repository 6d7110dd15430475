"""Investigations: frame one, list and show them, store comparisons in one, pin observations,
write and decide hypotheses (``wb investigate``, ``wb observe``, ``wb hypothesize``,
``wb hypothesis status``, and the TUI's stages). Each is the investigation door's function
(``investigations/workflow.py``) over the request's words, parsed here once."""

from __future__ import annotations

from typing import Any, Literal

from workbench.compare import parse_accepts
from workbench.errors import UsageError
from workbench.investigations import workflow as wf
from workbench.investigations.evidence import split_items
from workbench.investigations.views import (
    ComparisonView,
    HypothesisView,
    InvestigationSummary,
    InvestigationView,
    ObservationView,
)
from workbench.usecases.core import Answer, Context, Request, operation


def parse_changes(items: list[str], example: str = "engine_revision=v0.8.2:v0.8.3") -> dict[str, list[str]]:
    """``--change DIM=FROM:TO`` (repeatable) as the investigation records keep it."""
    out = {}
    for item in items:
        dim, sep, rest = item.partition("=")
        before, sep2, after = rest.partition(":")
        if not sep or not sep2 or not dim.strip():
            raise UsageError(f"--change {item!r}: expected DIM=FROM:TO (e.g. {example})")
        out[dim.strip()] = [before, after]
    return out


class NewInvestigation(Request[InvestigationView], frozen=True, kw_only=True, forbid_unknown_fields=True):
    lens: str
    question: str
    title: str = ""
    guardrails: list[str] = []
    change: list[str] = []  # DIM=FROM:TO
    baseline: list[str] = []
    candidate: list[str] = []
    by: str | None = None


@operation("investigations.new", "upload")
def new_investigation(ctx: Context, req: NewInvestigation) -> InvestigationView:
    """Frame an investigation: a lens, a decision question, guardrails, the intended change."""
    return wf.new_investigation(
        ctx.store,
        lens=req.lens,
        question=req.question,
        title=req.title,
        guardrails=req.guardrails,
        intended_change=parse_changes(req.change),
        baseline=req.baseline,
        candidate=req.candidate,
        by=ctx.by(req.by),
    )


class Investigations(Answer, frozen=True, kw_only=True):
    """``wb investigate list --json`` (``items``)."""

    items: list[InvestigationSummary]


class ListInvestigations(Request[Investigations], frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


@operation("investigations.list", "read")
def list_investigations(ctx: Context, req: ListInvestigations) -> Investigations:
    """The investigations with how many comparisons, observations and hypotheses each holds."""
    return Investigations(items=wf.investigation_summaries(ctx.store))


class ShowInvestigation(Request[InvestigationView], frozen=True, kw_only=True, forbid_unknown_fields=True):
    investigation: str


@operation("investigations.show", "read")
def show_investigation(ctx: Context, req: ShowInvestigation) -> InvestigationView:
    """An investigation: frame, comparisons, observations, hypotheses."""
    return wf.investigation_view(ctx.store, req.investigation)


class CompareInInvestigation(Request[ComparisonView], frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``wb investigate compare INVESTIGATION BASE... --vs CAND...``: compared and stored."""

    investigation: str
    baseline: list[str]
    candidate: list[str]
    control: list[str] = []
    lens: str | None = None
    change: list[str] | None = None  # None: the investigation's; [] with no_change: none
    changes: dict[str, list[str | int | float | bool | None]] | None = None  # typed: {DIM: [FROM, TO]} (the TUI)
    no_change: bool = False
    accept: list[str] = []
    why: list[str] = []
    accepts: dict[str, str] = {}  # the same, typed: {DIM: WHY} (the TUI's)
    by: str | None = None


@operation("investigations.compare", "upload")
def compare_in_investigation(ctx: Context, req: CompareInInvestigation) -> ComparisonView:
    """Compare run sets and store the result in the investigation."""
    if req.no_change and req.change:
        raise UsageError("--no-change and --change exclude each other")
    return wf.store_comparison(
        ctx.store,
        req.investigation,
        list(req.baseline),
        list(req.candidate),
        lens=req.lens,
        changes={} if req.no_change else parse_changes(req.change) if req.change else req.changes,
        accepts={**req.accepts, **parse_accepts(tuple(req.accept), tuple(req.why))},
        by=ctx.by(req.by),
        control=list(req.control),
    )


class Pinned(Answer, frozen=True, kw_only=True):
    """``wb observe --json``: the observations (or the retraction) pinned."""

    items: list[dict[str, Any]]


class Observe(Request[Pinned], frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``wb observe INVESTIGATION``: ``--from-compare N``, ``--text --evidence``, or ``--retract OBS --text``."""

    investigation: str
    from_compare: str | None = None
    text: str | None = None
    evidence: list[str] = []  # KIND=VALUE
    retract: str | None = None
    by: str | None = None


@operation("observations.pin", "upload")
def observe(ctx: Context, req: Observe) -> Pinned:
    """Pin an observation (a fact with its evidence, not a cause), or retract one."""
    modes = sum(x is not None for x in (req.from_compare, req.retract)) + (req.text is not None and req.retract is None)
    if modes != 1:
        raise UsageError("give one of --from-compare N, --text TEXT --evidence ..., or --retract OBS --text REASON")
    store, by = ctx.store, ctx.by(req.by)
    if req.from_compare is not None:
        return Pinned(items=list(wf.observations_from_comparison(store, req.investigation, req.from_compare, by=by)))
    if req.retract is not None:
        if not req.text:
            raise UsageError("--retract needs --text REASON")
        return Pinned(items=[wf.new_retraction(store, req.retract, req.text, by=by).to_json()])
    assert req.text is not None
    pinned = wf.new_observation(store, req.investigation, req.text, wf.parse_evidence(req.evidence, store), by=by)
    return Pinned(items=[pinned.to_json()])


class PinDerived(Request[ObservationView], frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One of the observations the compare engine derived for a stored comparison, by its index."""

    investigation: int
    comparison: int
    index: int
    by: str | None = None


@operation("observations.pin_derived", "upload")
def pin_derived(ctx: Context, req: PinDerived) -> ObservationView:
    """Pin one of a stored comparison's derived observations, citing the comparison."""
    view, inv_id = wf.comparison_in(ctx.store, req.comparison)
    if inv_id != req.investigation:
        raise UsageError(f"comparison {req.comparison} belongs to investigation {inv_id}, not {req.investigation}")
    derived = wf.derived_observations(view)
    if not 0 <= req.index < len(derived):
        raise UsageError(f"comparison {req.comparison} has {len(derived)} derived observation(s); no {req.index + 1}")
    return wf.pin_derived(ctx.store, req.investigation, view, derived[req.index], by=ctx.by(req.by))


class Hypothesize(Request[HypothesisView], frozen=True, kw_only=True, forbid_unknown_fields=True):
    investigation: str
    statement: str
    test: str
    test_kind: str = "rerun"  # the kind of evidence that can decide it (investigations.hypotheses.TEST_KINDS)
    by: str | None = None


@operation("hypotheses.new", "upload")
def hypothesize(ctx: Context, req: Hypothesize) -> HypothesisView:
    """A hypothesis (a claim to test) with the test that would decide it; it starts open."""
    return wf.new_hypothesis(
        ctx.store, req.investigation, req.statement, req.test, by=ctx.by(req.by), test_kind=req.test_kind
    )


class DecideHypothesis(Request[HypothesisView], frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``wb hypothesis status HYPOTHESIS STATUS --evidence KIND=VALUE... --note``; the TUI's dialog
    gives its evidence as one line (``plan=3, comparison=2``)."""

    hypothesis: str
    status: Literal["open", "supported", "refuted", "undetermined"]
    evidence: list[str] | str = []
    note: str = ""
    by: str | None = None


@operation("hypotheses.decide", "upload")
def decide_hypothesis(ctx: Context, req: DecideHypothesis) -> HypothesisView:
    """Set a hypothesis's status (supported and refuted need evidence); the history is kept."""
    items = split_items(req.evidence) if isinstance(req.evidence, str) else req.evidence
    return wf.decide_hypothesis(
        ctx.store,
        req.hypothesis,
        req.status,
        evidence=wf.parse_hypothesis_evidence(items),
        note=req.note,
        by=ctx.by(req.by),
    )
