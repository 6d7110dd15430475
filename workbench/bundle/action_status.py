"""An action's status, derived from data: one rule for the store (``wb action show``) and
for a bundle's ``verify --recompute``.

The status is never stored. It follows from the action's decisions (append-only), the
latest verification tied to it, and what that verification points at:

- ``proposed``: no one has approved or rejected it yet; ``rejected``: the latest decision;
- ``pending``: approved, and no verification yet, or its plan has no completed execution
  with a comparison;
- ``verified`` / ``not verified`` (with ``reason``): a change action, from the plan's rerun
  comparison judged by the one contract (``workbench.compare.contract``: the comparison's
  refusal, its guardrails, ``expected_effect`` on the action's metric and direction); a
  retry, from whether at least one condition the diagnosis blamed has changed.

``reason`` is one of ``REASONS`` for ``not verified``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workbench.vocabulary import JSONDoc

PROPOSED, REJECTED, PENDING, VERIFIED, NOT_VERIFIED = "proposed", "rejected", "pending", "verified", "not verified"
STATUSES = (PROPOSED, REJECTED, PENDING, VERIFIED, NOT_VERIFIED)
REASONS = ("refused", "underpowered", "guardrail broken", "wrong direction", "not embodied", "conditions unchanged")
UNCHANGED = "the conditions that caused the failure have not changed"
# Conditions a retry changes by avoiding them (a node, a GPU by serial), not by matching a set.
AVOIDED = frozenset({"node", "gpu_serial"})


def latest_decision(decisions: Sequence[Mapping[str, Any]]) -> str | None:
    return str(decisions[-1]["decision"]) if decisions else None


def derive_status(
    action: Mapping[str, Any],
    decisions: Sequence[Mapping[str, Any]],
    verification: Mapping[str, Any] | None,
    plan: Mapping[str, Any] | None = None,
    report: Mapping[str, Any] | None = None,
) -> JSONDoc:
    """``{"status", "reason", "why"}`` (``reason``: ``None`` unless not verified).

    ``verification``: the latest verification (``{"plan": ..., "observed": {...}}``);
    ``plan``: its plan's body; ``report``: the plan's latest rerun comparison body."""
    decision = latest_decision(decisions)
    if decision is None:
        return _status(PROPOSED, None, "awaiting approval (wb action approve or reject)")
    if decision == "rejected":
        last = decisions[-1]
        return _status(REJECTED, None, f"rejected by {last.get('by')}: {last.get('why')}")
    if verification is None:
        return _status(PENDING, None, "approved; no verification yet (wb action verify N --plan PLAN)")
    if action.get("kind") == "retry":
        return _retry_status(action, verification)
    if plan is None:
        return _status(PENDING, None, "approved; the verifying plan is not here")
    problem = embodiment_problem(action, plan)
    if problem:
        return _status(NOT_VERIFIED, "not embodied", problem)
    if report is None:
        return _status(
            PENDING, None, f"plan {plan.get('name')!r} has no comparison yet (wb rerun run {plan.get('name')})"
        )
    return _change_status(action, plan, report)


def embodiment_problem(action: Mapping[str, Any], plan: Mapping[str, Any]) -> str | None:
    """Why the plan's candidate arm does not embody the action's change (``None``: it does):
    the plan declares every changed dimension, with the same FROM and TO (a setting inside an
    object dimension, ``engine_config.max_num_seqs``, by declaring the object changed), and
    measures the metric the action expects to move."""
    declared = {k: [str(x) for x in v] for k, v in (plan.get("change") or {}).items()}
    for dim, (old, new) in sorted((action.get("changes") or {}).items()):
        top, _, key = dim.partition(".")
        got = declared.get(top)
        if key and got is not None:
            continue
        if got != [str(old), str(new)]:
            shown = f"declares {top}={':'.join(got)}" if got else f"does not declare {top} changed"
            wanted = top if key else f"{top}={old}:{new}"
            return (
                f"plan {plan.get('name')!r} {shown}; the action changes {dim}={old}:{new} (wb rerun plan ... "
                f"--change {wanted})"
            )
    metric = (action.get("expect") or {}).get("metric")
    if metric and metric != plan.get("metric"):
        return f"plan {plan.get('name')!r} measures {plan.get('metric')}; the action expects an effect on {metric}"
    return None


def captured_change(action: Mapping[str, Any], report: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """What the arms' captures say of the action's change, from the rerun comparison's
    dimension rows: (a mismatch, or ``None``; the changed names no capture states)."""
    rows = {r.get("name"): r for r in report.get("dimensions") or []}
    unstated = []
    for dim, (old, new) in sorted((action.get("changes") or {}).items()):
        top, _, key = dim.partition(".")
        row = rows.get(top) or {}
        for side, want in (("baseline", old), ("candidate", new)):
            value = row.get(side)
            if key:
                value = value.get(key) if isinstance(value, Mapping) else None
            if value is None:
                unstated.append(f"{dim} ({side})")
            elif str(value) != str(want):
                return f"the {side} arm's captures say {dim}={value}, not {want}", unstated
    return None, unstated


def _change_status(action: Mapping[str, Any], plan: Mapping[str, Any], report: Mapping[str, Any]) -> JSONDoc:
    # the contract loads the compare engine (numpy): verify without --recompute does not
    from workbench.compare.contract import expected_effect

    status = (report.get("execution") or {}).get("status")
    if status != "complete":
        return _status(PENDING, None, f"plan {plan.get('name')!r}'s execution is {status}, not complete")
    refusal = report.get("refusal")
    if refusal:
        return _status(
            NOT_VERIFIED, "refused", f"the rerun comparison was refused: {(refusal or {}).get('reason') or refusal}"
        )
    mismatch, unstated = captured_change(action, report)
    if mismatch:
        return _status(NOT_VERIFIED, "not embodied", mismatch)
    broken = [g.get("name") for g in report.get("guardrails") or [] if g.get("status") == "broken"]
    if broken:
        return _status(
            NOT_VERIFIED, "guardrail broken", f"guardrail {', '.join(map(str, broken))} broken on the candidate arm"
        )
    expect = action.get("expect") or {}
    if not expect:
        return _status(
            NOT_VERIFIED,
            "underpowered",
            "the action states no expected effect (--expect METRIC DIRECTION): nothing to verify",
        )
    outcome, why = expected_effect(
        str(expect.get("direction")), report.get("verdict"), bool(plan.get("higher_is_better"))
    )
    if outcome == "met":
        caveat = (
            f" (no capture states {', '.join(unstated)}: the plan's declaration is all that says the change was made)"
            if unstated
            else ""
        )
        return _status(VERIFIED, None, f"{expect.get('metric')}: {why}{caveat}")
    return _status(NOT_VERIFIED, outcome, f"{expect.get('metric')}: {why}")


def _retry_status(action: Mapping[str, Any], verification: Mapping[str, Any]) -> JSONDoc:
    changed, unknown, same = conditions_changed(
        (action.get("retry") or {}).get("conditions") or {},
        (verification.get("observed") or {}).get("conditions") or {},
    )
    if changed:
        return _status(VERIFIED, None, "conditions changed: " + "; ".join(changed))
    why = UNCHANGED + (f" ({'; '.join(same)})" if same else "")
    if unknown:
        why += f"; not known for the retry: {', '.join(unknown)}"
    helps = (action.get("retry") or {}).get("what_would_change_it")
    if helps:
        why += f"; what would change them: {helps}"
    return _status(NOT_VERIFIED, "conditions unchanged", why)


def conditions_changed(
    blamed: Mapping[str, Any], observed: Mapping[str, Any]
) -> tuple[list[str], list[str], list[str]]:
    """(changed, unknown, unchanged) descriptions, per blamed condition. A condition the
    retry's data do not state is unknown, never changed."""
    changed, unknown, same = [], [], []
    for name, value in sorted(blamed.items()):
        now = observed.get(name)
        if now is None or now == [] or now == "":
            unknown.append(name)
        elif name in AVOIDED:
            # A bad node or GPU is avoided when the retry ran on none of the blamed ones (it may run on more).
            if set(_norm(now) if isinstance(now, list) else [now]) & set(
                _norm(value) if isinstance(value, list) else [value]
            ):
                same.append(f"{name} {_shown(value)}")
            else:
                changed.append(f"{name} {_shown(value)} -> {_shown(now)}")
        elif _norm(now) != _norm(value):
            changed.append(f"{name} {_shown(value)} -> {_shown(now)}")
        else:
            same.append(f"{name} {_shown(value)}")
    return changed, unknown, same


def _norm(value: Any) -> Any:
    return sorted(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def _shown(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def _status(status: str, reason: str | None, why: str) -> JSONDoc:
    return {"status": status, "reason": reason, "why": why}


# -- in a bundle -----------------------------------------------------------------------


def status_in_bundle(
    action: Mapping[str, Any], plans: Sequence[Mapping[str, Any]], comparisons: Sequence[Mapping[str, Any]]
) -> JSONDoc:
    """The status of a bundle's action (``recipe.actions[i]``) from the rerun plans and
    comparisons the bundle carries (``{"ref", "record"}`` each: at export, the stored records;
    under ``--recompute``, the ones rebuilt from their run logs)."""
    verifications = action.get("verifications") or []
    verification = verifications[-1] if verifications else None
    plan = report = None
    plan_ref = (verification or {}).get("plan")
    if plan_ref:
        entry = next((p for p in plans if p.get("ref") == plan_ref), None)
        record = (entry or {}).get("record") or {}
        plan = {**(record.get("body") or {}), "name": record.get("name")} if record.get("body") else None
        plan_id = record.get("id")
        own = [
            c
            for c in comparisons
            if (c.get("record") or {}).get("plan_id") == plan_id and (c.get("record") or {}).get("body")
        ]
        latest = max(own, key=lambda c: c["record"].get("id") or 0) if own else None
        if latest is not None:
            report = dict(latest["record"]["body"])
    return derive_status(action, action.get("decisions") or [], verification, plan, report)
