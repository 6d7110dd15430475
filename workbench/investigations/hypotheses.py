"""Hypotheses: claims with the test that would decide them, and a status history."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.bundle.canonical import bundle_value, nfc
from workbench.bundle.decisive import (
    TEST_KINDS,
    bisection_cannot_decide,
    comparison_cannot_decide,
    plan_cannot_decide,
    rerun_cannot_decide,
)
from workbench.errors import NotFound, UsageError
from workbench.investigations.common import (
    DECIDED,
    HYPOTHESIS_STATUSES,
    current_user,
    investigation_errors,
    investigation_of,
    parse_id,
    required_text,
)
from workbench.investigations.evidence import parse_decision_evidence
from workbench.investigations.origin import origin_of, origin_problem
from workbench.investigations.views import HypothesisView, hypothesis_of

if TYPE_CHECKING:
    from store.api import Store
    from store.evidence import EvidenceReader


def new_hypothesis(
    store: "Store",
    inv: str | int,
    statement: str,
    test: str,
    *,
    by: str | None = None,
    test_kind: str = "rerun",
) -> HypothesisView:
    """A claim with the test that would decide it, opened (status ``open``). ``test_kind``:
    the kind of evidence the test is (rerun, comparison, bisection, diagnosis), the only kind
    that can decide it; the evidence that exists now is recorded, and cannot decide it."""
    from store.evidence import add_hypothesis  # SQLAlchemy: loaded with the store, not at import
    from store.investigations import Hypothesis  # SQLAlchemy: loaded with the store, not at import

    if test_kind not in TEST_KINDS:
        raise UsageError(f"the test's kind must be one of {', '.join(TEST_KINDS)}, not {test_kind!r}")
    inv_id = int(investigation_of(store, inv, writable=True).id)  # type: ignore[arg-type]  # its refusals first
    row = Hypothesis(
        investigation_id=inv_id,
        statement=required_text(statement, "the hypothesis"),
        test=required_text(test, "the test that would decide it (--test)"),
        test_kind=test_kind,
        created_by=by or current_user(),
    )
    with investigation_errors():
        opened, first = add_hypothesis(store, row)
    return hypothesis_of(opened, [first])


def parse_hypothesis_evidence(items: Iterable[str]) -> list[dict[str, object]]:
    """``plan=3`` / ``plan=NAME`` (a rerun plan), ``comparison=5``, ``rerun_comparison=2``;
    see ``workbench.investigations.evidence``."""
    return parse_decision_evidence(items)


def check_links(
    store: "Store", evidence: Sequence[dict[str, object]], investigation_id: int, status: str | None = None
) -> None:
    """Every cited record must exist and belong to the hypothesis's investigation; when the
    status is supported or refuted, each must also be able to decide it
    (``workbench.bundle.decisive``: a comparable comparison with a verdict, a completed
    rerun execution with a verdict, a bisection with a result, a diagnosis). A plan named
    by its name gets its id filled in (the evidence is changed in place)."""
    from store.evidence import reading_evidence  # SQLAlchemy: loaded with the store, not at import

    deciding = status in DECIDED
    with reading_evidence(store) as read:
        for ev in evidence:
            reason = _evidence_problem(read, ev, investigation_id, deciding)
            if reason:
                shown = ev.get("id", ev.get("name"))
                raise UsageError(
                    f"evidence {ev['kind']}={shown} cannot {'decide' if deciding else 'be cited by'} this hypothesis: "
                    f"{reason}"
                )


def _evidence_problem(
    read: "EvidenceReader", ev: dict[str, object], investigation_id: int, deciding: bool
) -> str | None:
    """Why ``ev`` cannot be cited by (or decide) a hypothesis of the investigation; None when it can."""
    kind = ev["kind"]
    check = _EVIDENCE_CHECKS.get(str(kind))
    if check is None:
        return f"{kind!r} is not evidence that decides a hypothesis"
    return check(read, ev, investigation_id, deciding)


def _comparison_problem(
    read: "EvidenceReader", ev: dict[str, object], investigation_id: int, deciding: bool
) -> str | None:
    row = read.comparison(ev["id"])
    if row is None:
        raise NotFound(f"no stored comparison {ev['id']}")
    if row.investigation_id != investigation_id:
        return (
            f"comparison {ev['id']} belongs to investigation {row.investigation_id}, not to this hypothesis's "
            f"investigation {investigation_id}"
        )
    return comparison_cannot_decide(f"comparison {ev['id']}", row.comparable, row.verdict) if deciding else None


def _diagnosis_problem(
    read: "EvidenceReader", ev: dict[str, object], investigation_id: int, deciding: bool
) -> str | None:
    observation = read.observation(ev["id"])
    if observation is None:
        raise NotFound(f"no observation {ev['id']}")
    if observation.investigation_id != investigation_id:
        owner = observation.investigation_id
        return f"observation {ev['id']} belongs to investigation {owner}, not {investigation_id}"
    return (
        None
        if observation.source == "diagnose"
        else f"observation {ev['id']} is not a diagnosis (pin one with wb diagnose PATHS --pin {investigation_id})"
    )


def _bisection_problem(
    read: "EvidenceReader", ev: dict[str, object], investigation_id: int, deciding: bool
) -> str | None:
    from store.bisect import BisectionNotFound  # SQLAlchemy: loaded with the store, not at import

    try:
        ref = ev.get("id", ev.get("name"))
        bisection = read.bisection(None if ref is None else str(ref))  # it reads an id or a name as their text
    except BisectionNotFound as exc:
        raise NotFound(str(exc)) from None
    ev["id"] = int(bisection.id)  # type: ignore[arg-type]
    ev.pop("name", None)
    if bisection.investigation_id != investigation_id:
        return _owner(
            f"bisection {bisection.name!r}",
            bisection.investigation_id,
            investigation_id,
            "wb bisect start --investigation",
        )
    return (
        bisection_cannot_decide(f"bisection {bisection.name!r}", bool((bisection.state or {}).get("result")))
        if deciding
        else None
    )


def _rerun_plan_problem(
    read: "EvidenceReader", ev: dict[str, object], investigation_id: int, deciding: bool
) -> str | None:
    plan = read.plan(ev["id"]) if "id" in ev else read.plan_named(ev["name"])
    if plan is None:
        raise NotFound(
            f"no rerun plan {'named ' if 'name' in ev else ''}{ev.get('id', ev.get('name'))!r} (see 'wb rerun plan "
            f"--list')"
        )
    ev["id"] = int(plan.id)
    ev.pop("name", None)
    if plan.investigation_id != investigation_id:
        return _owner(f"plan {plan.name!r}", plan.investigation_id, investigation_id, "wb rerun plan --investigation")
    if not deciding:
        return None
    rows = read.plan_comparisons(plan.id)
    return plan_cannot_decide(
        f"plan {plan.name!r}",
        [
            rerun_cannot_decide(
                f"rerun comparison {r.id}",
                r.verdict,
                getattr(read.execution(r.execution_id), "status", None),
            )
            for r in rows
        ],
    )


def _rerun_comparison_problem(
    read: "EvidenceReader", ev: dict[str, object], investigation_id: int, deciding: bool
) -> str | None:
    rerun = read.rerun_comparison(ev["id"])
    if rerun is None:
        raise NotFound(f"no rerun comparison {ev['id']} (see 'wb rerun')")
    plan = read.plan(rerun.plan_id)
    owner = plan.investigation_id if plan is not None else None
    if owner != investigation_id:
        return _owner(
            f"rerun comparison {ev['id']} (plan {getattr(plan, 'name', '?')!r})",
            owner,
            investigation_id,
            "wb rerun plan --investigation",
        )
    if not deciding:
        return None
    execution = read.execution(rerun.execution_id)
    return rerun_cannot_decide(f"rerun comparison {ev['id']}", rerun.verdict, getattr(execution, "status", None))


_EVIDENCE_CHECKS: dict[str, Callable[["EvidenceReader", dict[str, object], int, bool], str | None]] = {
    "comparison": _comparison_problem,
    "diagnosis": _diagnosis_problem,
    "bisection": _bisection_problem,
    "rerun_plan": _rerun_plan_problem,
    "rerun_comparison": _rerun_comparison_problem,
}


def _owner(what: str, owner: int | None, investigation_id: int, how: str) -> str:
    if owner is None:
        return f"{what} belongs to no investigation (make it in this one: {how} {investigation_id})"
    return f"{what} belongs to investigation {owner}, not to this hypothesis's investigation {investigation_id}"


def _its_own_test(store: "Store", row: Any, evidence: Sequence[dict[str, object]]) -> None:
    """Refuse evidence that is not the hypothesis's own test (``investigations.origin``)."""
    from store.evidence import reading_evidence  # SQLAlchemy: loaded with the store, not at import

    with reading_evidence(store) as read:
        origin = origin_of(read, row)
        for ev in evidence:
            reason = origin_problem(read, ev, origin)
            if reason:
                raise UsageError(f"evidence {ev['kind']}={ev.get('id')} cannot decide hypothesis {row.id}: {reason}")


def decide_hypothesis(
    store: "Store",
    hypothesis: str | int,
    status: str,
    *,
    evidence: Sequence[Mapping[str, object]] = (),
    note: str = "",
    by: str | None = None,
) -> HypothesisView:
    """A new status for a hypothesis, with the evidence that decided it (its history kept)."""
    from store.investigations import HypothesisStatus, add_hypothesis_status, get_hypothesis  # SQLAlchemy: store

    if status not in HYPOTHESIS_STATUSES:
        raise UsageError(f"status must be one of {', '.join(HYPOTHESIS_STATUSES)}")
    if status in DECIDED and not evidence:
        raise UsageError(
            f"'{status}' needs the evidence that decided it (--evidence comparison=N, rerun_comparison=N, "
            f"plan=ID|NAME, "
            "bisection=ID|NAME or diagnosis=OBSERVATION)"
        )
    hid = parse_id(hypothesis, "hypothesis")
    row = get_hypothesis(store, hid)
    if row is None:
        raise NotFound(f"no hypothesis {hid}")
    investigation_of(store, row.investigation_id, writable=True)
    cited = [dict(ev) for ev in evidence]  # check_links fills in the ids of plans named by their name
    check_links(store, cited, row.investigation_id, status)
    if status in DECIDED:
        _its_own_test(store, row, cited)
    decision = HypothesisStatus(
        hypothesis_id=hid, status=status, evidence=bundle_value(cited), note=nfc(note), decided_by=by or current_user()
    )
    return hypothesis_of(row, add_hypothesis_status(store, decision))
