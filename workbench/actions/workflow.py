"""The door of actions: propose, approve or reject, verify, show, list, watch.

Every function takes an open ``Store``, reads and appends through ``store.actions.action_records``
(one transaction each: the checks below run between its reads and its write) and returns the typed
records of ``workbench.actions.records`` (the CLI and the TUI hold those, never a row).
Rules kept here so every face gets them:

- an action cites hypotheses of its own investigation (a retry, the diagnosis instead);
- decisions and verifications are appended, never changed (``store.actions``);
- only an action whose latest decision is an approval can be verified, by a plan of its
  own investigation whose candidate arm embodies the change (or, for a retry, the new
  job's files or a rerun execution's preflight);
- the status is derived (``workbench.bundle.action_status``), never stored;
- nothing here applies a change to a system.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from store.records import utcnow_iso
from workbench.actions.conditions import blamed_conditions, observed_conditions, preflight_conditions
from workbench.actions.records import KINDS, ActionKind, ActionView, Decision, Status, Verification
from workbench.bundle.action_status import captured_change, derive_status, embodiment_problem, latest_decision
from workbench.bundle.canonical import bundle_value, nfc
from workbench.bundle.decisions import DECISION_WORDS, Problem, history_problems
from workbench.errors import NotFound, UsageError, WbError
from workbench.investigations.common import checked_investigation, current_user, parse_id, required_text
from workbench.vocabulary import JSONDoc

if TYPE_CHECKING:
    from store.actions import ActionRecords
    from store.api import Store

DECISIONS = DECISION_WORDS
# How a problem's place reads to whoever typed it (the CLI's options, the TUI's fields).
_FIELD = {"by": "--by (who)", "why": "--why (the reason)", "decision": "the decision", "at": "the time"}


def propose_action(
    store: "Store",
    inv: str | int,
    *,
    scope: str,
    changes: Mapping[str, Sequence[Any]] | None = None,
    because: Sequence[str | int] = (),
    kind: str | None = None,
    expect: tuple[str, str] | None = None,
    evidence: Sequence[Mapping[str, Any]] = (),
    retry_of: Sequence[str | Path] = (),
    by: str | None = None,
) -> ActionView:
    """Record a proposed change (``kind`` configuration, version, restart, escalation), or
    with ``retry_of`` (the failed job's files) a retry with the conditions ``wb diagnose``
    blames for the failure. ``expect``: (metric, decrease | increase | recovery)."""
    from store.actions import Action, action_records  # SQLAlchemy: loaded with the store, not at import

    from workbench.compare.contract import (
        DIRECTIONS,
    )  # the contract loads the compare engine (numpy): not for 'wb action --help'

    kind = kind or ("retry" if retry_of else "configuration")
    if kind not in KINDS:
        raise UsageError(f"action kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if (kind == "retry") != bool(retry_of):
        raise UsageError("a retry names the failed job's files (--retry PATH...), and only a retry does")
    changes = {str(k).strip(): [nfc(str(v[0])), nfc(str(v[1]))] for k, v in (changes or {}).items()}
    if kind in ("configuration", "version") and not changes:
        raise UsageError(f"a {kind} action names its change (--change DIM=FROM:TO)")
    if kind != "retry" and not because:
        raise UsageError("an action cites the hypothesis that motivates it (--because HYPOTHESIS)")
    expected: dict[str, object] = {}
    if expect is not None:
        metric, direction = required_text(expect[0], "the expected metric"), str(expect[1]).strip().lower()
        if direction not in DIRECTIONS:
            raise UsageError(f"--expect {metric} {direction!r}: the direction is one of {', '.join(DIRECTIONS)}")
        expected = {"metric": metric, "direction": direction}
    retry = _retry_record(retry_of) if retry_of else {}
    hyp_ids = [parse_id(h, "hypothesis") for h in because]
    with action_records(store) as s:
        inv_row = _investigation(s, inv, writable=True)
        changes = {_dimension(inv_row.lens, k): v for k, v in changes.items()}
        for hid in hyp_ids:
            hyp = s.hypothesis(hid)
            if hyp is None:
                raise NotFound(f"no hypothesis {hid}")
            if hyp.investigation_id != inv_row.id:
                raise UsageError(f"hypothesis {hid} belongs to investigation {hyp.investigation_id}, not {inv_row.id}")
        for ev in evidence:
            if ev.get("kind") == "comparison":
                cmp = s.comparison(ev.get("id"))
                if cmp is None or cmp.investigation_id != inv_row.id:
                    raise UsageError(
                        f"evidence comparison={ev.get('id')}: no stored comparison of investigation {inv_row.id} by "
                        f"that id"
                    )
        row = Action(
            investigation_id=inv_row.id,
            kind=kind,
            changes=bundle_value(changes),
            scope=required_text(scope, "the scope (--scope)"),
            because=hyp_ids,
            evidence=bundle_value([dict(e) for e in evidence]),
            expect=expected,
            retry=bundle_value(retry),
            created_by=by or current_user(),
        )
        return _view(s, s.add(row))


# An object dimension whose keys are settings (``max_num_seqs`` is ``engine_config.max_num_seqs``).
SETTINGS_DIMENSION = "engine_config"


def _dimension(lens: str, name: str) -> str:
    """The lens dimension a change names: a dimension, ``OBJECT.KEY`` inside an object
    dimension, or a bare setting of the lens's ``engine_config``."""
    from lenses import get_lens  # the lens specs: loaded when an action is proposed

    known = {d.name for d in get_lens(lens).dimensions}
    top = name.partition(".")[0]
    if top in known:
        return name
    if SETTINGS_DIMENSION in known and "." not in name:
        return f"{SETTINGS_DIMENSION}.{name}"
    raise UsageError(f"--change {name}: no such dimension in the {lens} lens (known: {', '.join(sorted(known))})")


def _retry_record(paths: Sequence[str | Path]) -> dict[str, object]:
    from workbench.diagnostics import diagnose  # the log parsers: loaded for a retry only

    doc = diagnose([Path(p) for p in paths]).to_json()
    conditions = blamed_conditions(doc)
    fc = doc.get("failure_class") or {}
    if not conditions:
        raise UsageError(
            "the diagnosis of these files names no failure condition to retry from "
            f"(failure class {fc.get('class') or 'none'}; see wb diagnose)"
        )
    return {
        "conditions": conditions,
        "failure_class": fc.get("class"),
        "what_would_change_it": (fc.get("retry") or {}).get("what_would_change_it"),
        "inputs": [str(p) for p in paths],
    }


def decide_action(store: "Store", action: str | int, decision: str, *, why: str, by: str | None = None) -> ActionView:
    """Append an approval or a rejection (who, when, why); the latest one decides. The
    record is checked first (``workbench.bundle.decisions``: the word, a ``by`` and a ``why``
    that say something, the time after the proposal and the decisions before it)."""
    from store.actions import ActionDecision, action_records  # SQLAlchemy: loaded with the store, not at import

    if decision not in DECISIONS:
        raise UsageError(f"decision must be one of {', '.join(DECISIONS)}")
    with action_records(store) as s:
        row = _action_row(s, action, writable=True)
        who = nfc(str(current_user() if by is None else by))  # an empty --by is nobody, not the default
        reason, at = nfc(str(why)), utcnow_iso()
        new: JSONDoc = {"decision": decision, "by": who, "why": reason, "at": at}
        _refuse_impossible(row, [*_decision_docs(s, row.id), new], [], f"decisions[{len(s.decisions(row.id))}]")
        s.add(ActionDecision(action_id=row.id, decision=decision, by=who, why=reason, at=at))
        return _view(s, row)


def _decision_docs(s: Any, action_id: int) -> list[JSONDoc]:
    return [{"decision": d.decision, "by": d.by, "why": d.why, "at": d.at} for d in s.decisions(action_id)]


def _verification_docs(s: Any, action_id: int) -> list[JSONDoc]:
    return [{"by": v.by, "at": v.at} for v in s.verifications(action_id)]


def _refuse_impossible(row: Any, decisions: list[JSONDoc], verifications: list[JSONDoc], new: str) -> None:
    """Refuse the new record (at path ``new``) when it would make the history impossible."""
    problems = [p for p in history_problems(row.created_at, decisions, verifications) if p.where.startswith(new)]
    if problems:
        raise UsageError(f"action {row.id}: not recorded: " + "; ".join(_said(p, new) for p in problems))


def _said(problem: Problem, new: str) -> str:
    field = problem.where[len(new) :].lstrip(".")
    return f"{_FIELD.get(field, field or 'it')} {problem.why}" if field else problem.why


def verify_action(
    store: "Store",
    action: str | int,
    *,
    plan: str | int | None = None,
    job: Sequence[str | Path] = (),
    by: str | None = None,
) -> ActionView:
    """Tie a verification to an approved action: a rerun plan of its investigation whose
    candidate embodies the change, or for a retry the new job's files (``job``) or a rerun
    plan's preflight. The status that follows is derived from the data."""
    from store.actions import ActionVerification, action_records  # SQLAlchemy: loaded with the store

    if (plan is None) == (not job):
        raise UsageError(
            "verify with --plan PLAN (an executed rerun plan) or, for a retry, --job PATH... (the new job's files)"
        )
    with action_records(store) as s:
        row = _action_row(s, action, writable=True)
        decision = latest_decision([{"decision": d.decision} for d in s.decisions(row.id)])
        if decision != "approved":
            state = "was rejected" if decision == "rejected" else "has not been approved"
            raise WbError(
                f"action {row.id} {state}: only an approved action can be verified (wb action approve {row.id} --by "
                f"NAME --why TEXT)",
                exit_code=3,
            )
        plan_row, observed = (
            (_verifying_plan(s, row, plan), {}) if plan is not None else (None, _job_observation(row, job))
        )
        if plan_row is not None and row.kind == "retry":
            observed = _preflight_observation(s, plan_row)
        who, at = nfc(str(current_user() if by is None else by)), utcnow_iso()
        done = _verification_docs(s, row.id)
        _refuse_impossible(
            row, _decision_docs(s, row.id), [*done, {"by": who, "at": at}], f"verifications[{len(done)}]"
        )
        s.add(
            ActionVerification(
                action_id=row.id,
                plan_id=None if plan_row is None else plan_row.id,
                observed=bundle_value(observed),
                by=who,
                at=at,
            )
        )
        return _view(s, row)


def _verifying_plan(s: Any, row: Any, plan: str | int) -> Any:
    """The plan, once it can verify the action: of the action's investigation and, for a
    change, declaring it, measuring the expected metric, under the frame's guardrails, and
    (once run) with captures that do not contradict it."""
    from store.rerun import PlanNotFound  # SQLAlchemy: loaded with the store, not at import

    try:
        plan_row = s.find_plan(plan)
    except PlanNotFound as exc:
        raise NotFound(str(exc)) from None
    if plan_row.investigation_id != row.investigation_id:
        owner = plan_row.investigation_id
        raise UsageError(
            f"plan {plan_row.name!r} belongs to {'no investigation' if owner is None else f'investigation {owner}'}, "
            f"not to action {row.id}'s investigation {row.investigation_id} (wb rerun plan ... --investigation "
            f"{row.investigation_id})"
        )
    if row.kind == "retry":
        return plan_row
    action = row.model_dump()
    problem = embodiment_problem(action, plan_row.body) or _frame_guardrails_missing(s, row.investigation_id, plan_row)
    report = plan_evidence(s, int(plan_row.id))[1]
    if problem is None and report is not None:
        problem = captured_change(action, report)[0]
    if problem:
        raise UsageError(f"plan {plan_row.name!r} cannot verify action {row.id}: {problem}")
    return plan_row


def _preflight_observation(s: Any, plan_row: Any) -> dict[str, object]:
    """What a retry ran on, from the plan's latest preflight."""
    executions = [e for e in s.executions(int(plan_row.id)) if e.preflights]
    if not executions:
        raise UsageError(f"plan {plan_row.name!r} has not run: no preflight says what the retry ran on")
    return {"conditions": preflight_conditions(executions[-1].preflights[-1]), "inputs": [f"rerun-plan/{plan_row.id}"]}


def _job_observation(row: Any, job: Sequence[str | Path]) -> dict[str, object]:
    """What a retry ran on, from the new job's files (diagnosed as wb diagnose would)."""
    if row.kind != "retry":
        raise UsageError(
            f"action {row.id} is a {row.kind} change: verify it with --plan PLAN (a rerun whose candidate embodies it)"
        )
    from workbench.diagnostics import diagnose  # the log parsers: loaded for a retry only

    return {
        "conditions": observed_conditions(diagnose([Path(p) for p in job]).to_json()),
        "inputs": [str(p) for p in job],
    }


def _frame_guardrails_missing(s: Any, investigation_id: int, plan_row: Any) -> str | None:
    """Why the plan is not judged under the investigation's frame guardrails (a plan made
    with ``--investigation`` carries them, source ``frame:ID``), or ``None``."""
    frame = list(_investigation(s, investigation_id).guardrails or [])
    carried = [
        g for g in (plan_row.body or {}).get("guardrails") or [] if g.get("source") == f"frame:{investigation_id}"
    ]
    if len(carried) < len(frame):
        return (
            f"plan {plan_row.name!r} does not carry investigation {investigation_id}'s guardrails "
            f"({'; '.join(map(str, frame))}): "
            f"make it with wb rerun plan ... --investigation {investigation_id}"
        )
    return None


def action_view(store: "Store", action: str | int) -> ActionView:
    from store.actions import action_records  # SQLAlchemy: loaded with the store, not at import

    with action_records(store) as s:
        return _view(s, _action_row(s, action))


def list_actions(store: "Store", inv: str | int | None = None, *, hypothesis: int | None = None) -> list[ActionView]:
    """Every action (of ``inv``; citing ``hypothesis``), oldest first."""
    from store.actions import action_records  # SQLAlchemy: loaded with the store, not at import

    with action_records(store) as s:
        inv_id = None if inv is None else int(_investigation(s, inv).id)  # type: ignore[arg-type]
        views = [_view(s, r) for r in s.actions(inv_id)]
    return [v for v in views if hypothesis is None or hypothesis in v.because]


def verified_candidate(store: "Store", action: str | int) -> tuple[ActionView, dict[str, object], list[int]]:
    """A verified change action, its plan's body and the candidate (B) runs of the plan's
    latest completed execution (what ``watch`` compares later runs with)."""
    from store.actions import action_records  # SQLAlchemy: loaded with the store, not at import
    from store.rerun import RUN_OK

    view = action_view(store, action)
    if view.status.status != "verified" or view.kind == "retry":
        raise UsageError(
            f"action {view.id} is {view.status.status}: only a verified change has a candidate to watch "
            f"({view.status.why})"
        )
    plan_id = view.verifications[-1].plan_id
    with action_records(store) as s:
        plan_row = s.plan(plan_id)  # type: ignore[arg-type]
        done = [e for e in s.executions(int(plan_id)) if e.status == "complete"]  # type: ignore[arg-type]
        runs = [
            int(r.run_id)
            for r in s.runs(int(done[-1].id))  # type: ignore[arg-type]
            if r.arm == "B" and r.status == RUN_OK and r.run_id is not None and r.round > 0
        ]
        return view, dict(plan_row.body), runs  # type: ignore[union-attr]


# -- rows to records ---------------------------------------------------------------------


def _action_row(s: Any, action: str | int, *, writable: bool = False) -> Any:
    aid = parse_id(action, "action")
    row = s.action(aid)
    if row is None:
        raise NotFound(f"no action {aid} (see 'wb action list')")
    if writable:
        _investigation(s, row.investigation_id, writable=True)
    return row


def _investigation(s: "ActionRecords", inv: str | int, *, writable: bool = False) -> Any:
    inv_id = parse_id(inv, "investigation")
    return checked_investigation(s.investigation(inv_id), inv_id, writable)


def plan_evidence(s: Any, plan_id: int) -> tuple[dict[str, object] | None, dict[str, object] | None]:
    """A plan's body and its latest rerun comparison's body, the execution status as it is
    now (a comparison is taken while its execution may still be running)."""
    plan_row = s.plan(plan_id)
    if plan_row is None:
        return None, None
    latest = s.latest_comparison(plan_id)
    if latest is None:
        return dict(plan_row.body), None
    report = dict(latest.body)
    execution = s.execution(latest.execution_id)
    report["execution"] = {**(report.get("execution") or {}), "status": getattr(execution, "status", None)}
    return {**dict(plan_row.body), "id": plan_row.id}, report


def _view(s: Any, row: Any) -> ActionView:
    # Decoded, not constructed: the stored words are checked against the records' Literals.
    decisions = [
        Decision.from_json({"decision": d.decision, "by": d.by, "why": d.why, "at": d.at})
        for d in s.decisions(int(row.id))
    ]
    verifications = []
    for v in s.verifications(int(row.id)):
        plan_row = s.plan(v.plan_id) if v.plan_id is not None else None
        verifications.append(
            Verification(
                plan_id=v.plan_id,
                plan=getattr(plan_row, "name", None),
                observed=dict(v.observed or {}),
                by=v.by,
                at=v.at,
            )
        )
    latest = verifications[-1] if verifications else None
    plan, report = (
        plan_evidence(s, int(latest.plan_id)) if latest is not None and latest.plan_id is not None else (None, None)
    )
    action = {"kind": row.kind, "changes": row.changes, "expect": row.expect, "retry": row.retry}
    status = derive_status(action, [d.to_json() for d in decisions], latest.to_json() if latest else None, plan, report)
    return ActionView(
        id=int(row.id),
        ref=f"action/{row.id}",
        investigation_id=int(row.investigation_id),
        kind=msgspec.convert(row.kind, ActionKind),
        changes={k: list(v) for k, v in (row.changes or {}).items()},
        scope=row.scope,
        because=[int(h) for h in row.because or []],
        evidence=list(row.evidence or []),
        expect=dict(row.expect or {}),
        retry=dict(row.retry or {}),
        created_by=row.created_by,
        created_at=row.created_at,
        decisions=decisions,
        verifications=verifications,
        status=Status.from_json(status),
    )
