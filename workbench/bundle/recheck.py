"""``verify --recompute``, second half: every verdict, flag, status and link a bundle states
about its records is an output, checked against what was re-derived from the per-run
values (``workbench.bundle.recompute``), never read as an input.

- ``results.verdicts``: one entry per recipe comparison, in order, each the recomputed
  comparison's ``comparable`` and primary verdict.
- Hypotheses: ``status`` is the last decision of the history, ``links`` are the records
  its history cites, and every supported/refuted decision cites records carried in the
  bundle that re-derive and can decide it (``workbench.bundle.decisive``: the same rule
  as ``wb hypothesis status``).
- Bisections: every step's verdict and rounds are those of the carried rerun comparison
  it cites, re-derived.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from workbench.bundle.action_status import status_in_bundle
from workbench.bundle.decisive import (
    bisection_cannot_decide,
    comparison_cannot_decide,
    plan_cannot_decide,
    rerun_cannot_decide,
)
from workbench.bundle.format import Check
from workbench.bundle.reader import array, content, obj
from workbench.vocabulary import JSONDoc

DECIDED = ("supported", "refuted")
# evidence kind -> the hypothesis's ``links`` key (as ``investigations.views`` derives them)
LINK_KEYS = {"rerun_plan": "rerun_plans", "comparison": "comparisons", "rerun_comparison": "rerun_comparisons"}
# evidence kind -> the prefix of the carried record's ref
REF_PREFIX = {
    "comparison": "comparison",
    "rerun_comparison": "rerun-comparison",
    "rerun_plan": "rerun-plan",
    "bisection": "bisection",
    "diagnosis": "observation",
}


@dataclass
class Rederived:
    """What recompute derived again for one record (a comparison or a rerun comparison)."""

    comparable: bool
    verdict: str | None
    rounds: int | None = None
    status: str | None = None  # a rerun comparison's execution status
    result: JSONDoc = field(default_factory=dict)


def primary_verdict(result: Mapping[str, object]) -> str | None:
    from workbench.compare.model import verdict_of  # numpy: only --recompute loads the compare engine

    return verdict_of(result)


def recheck_outputs(
    bundle: JSONDoc, comparisons: Mapping[str, Rederived], reruns: Mapping[str, Rederived]
) -> list[Check]:
    try:
        out = _verdicts(bundle, comparisons)
        out += _bisections(bundle, reruns)
        out += _hypotheses(bundle, comparisons, reruns)
        out += _actions(bundle, reruns)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        return [Check("recheck", False, f"the bundle's records have an unexpected shape ({type(exc).__name__}: {exc})")]
    return out


def _verdicts(bundle: JSONDoc, comparisons: Mapping[str, Rederived]) -> list[Check]:
    stated = array(content(bundle, "results").get("verdicts"))
    specs = array(content(bundle, "recipe").get("comparisons"))
    out = []
    if len(stated) != len(specs):
        out.append(
            Check(
                "results.verdicts", False, f"{len(stated)} verdicts stated for {len(specs)} comparisons in the recipe"
            )
        )
    for i, item in enumerate(stated):
        entry = item if isinstance(item, dict) else {}
        ref = entry.get("comparison")
        part = f"results.verdicts[{i}] {ref}"
        expected = obj(specs[i]).get("ref") if i < len(specs) else None
        fresh = comparisons.get(str(ref))
        if ref != expected:
            out.append(Check(part, False, f"stated for {ref}, but the recipe's comparison {i} is {expected}"))
        elif fresh is None:
            out.append(Check(part, False, f"{ref} was not re-derived, so its verdict cannot be checked"))
        elif entry.get("comparable") is not fresh.comparable or entry.get("verdict") != fresh.verdict:
            out.append(
                Check(
                    part,
                    False,
                    f"stated comparable {entry.get('comparable')}, verdict {entry.get('verdict')}; "
                    f"recomputed comparable {fresh.comparable}, verdict {fresh.verdict}",
                )
            )
        else:
            out.append(Check(part, True, f"comparable {fresh.comparable}, verdict {fresh.verdict}, as recomputed"))
    return out


def _bisections(bundle: JSONDoc, reruns: Mapping[str, Rederived]) -> list[Check]:
    out = []
    for i, item in enumerate(array(content(bundle, "recipe").get("bisections"))):
        bisection = obj(item)
        part = f"recipe.bisections[{i}] {bisection.get('ref')}"
        state = obj(bisection.get("state") or {})
        steps = [obj(step) for step in array(state.get("steps"))]
        wrong = []
        for step in steps:
            cited = step.get("comparison_id")
            if cited is None:
                continue
            fresh = reruns.get(f"rerun-comparison/{cited}")
            if fresh is None:
                wrong.append(f"step {step.get('step')} cites rerun-comparison/{cited}, which was not re-derived")
                continue
            if step.get("verdict") != fresh.verdict:
                wrong.append(
                    f"step {step.get('step')} states verdict {step.get('verdict')}, recomputed {fresh.verdict}"
                )
            if "rounds_used" in step and step.get("rounds_used") != fresh.rounds:
                wrong.append(
                    f"step {step.get('step')} states {step.get('rounds_used')} rounds, recomputed {fresh.rounds}"
                )
        if state.get("result") and not any(s.get("comparison_id") is not None for s in steps):
            wrong.append("it states a result but no step cites a rerun comparison to re-derive it from")
        if wrong:
            out.append(Check(part, False, "; ".join(wrong)))
        else:
            out.append(Check(part, True, f"{len(steps)} steps' verdicts re-derived from their rerun comparisons"))
    return out


def _hypotheses(bundle: JSONDoc, comparisons: Mapping[str, Rederived], reruns: Mapping[str, Rederived]) -> list[Check]:
    carried = _carried_refs(bundle)
    plans_reruns: dict[str, list[str]] = {}
    for item in array(content(bundle, "results").get("rerun_comparisons")):
        entry = obj(item)
        plan_id = obj(entry.get("record") or {}).get("plan_id")
        plans_reruns.setdefault(f"rerun-plan/{plan_id}", []).append(str(entry.get("ref")))
    # A plan decides only in the investigation it belongs to (the record carries the link).
    own = str(obj(bundle.get("investigation") or {}).get("ref"))
    for item in array(content(bundle, "recipe").get("rerun_plans")):
        plan = obj(item)
        owner = obj(plan.get("record") or {}).get("investigation_id")
        if f"investigation/{owner}" != own:
            foreign = (
                f"{plan.get('ref')} belongs to "
                f"{'no investigation' if owner is None else f'investigation/{owner}'}, not {own}"
            )
            reruns = {
                ref: value for ref, value in reruns.items() if ref not in plans_reruns.get(str(plan.get("ref")), [])
            }
            plans_reruns[str(plan.get("ref"))] = [foreign]
    out = []
    for i, item in enumerate(array(bundle.get("hypotheses"))):
        hyp = obj(item)
        part = f"hypotheses[{i}] {hyp.get('ref')}"
        history = [obj(step) for step in array(hyp.get("history"))]
        wrong = []
        last = history[-1].get("status") if history else "open"
        if hyp.get("status") != last:
            wrong.append(f"states status {hyp.get('status')}, but its last decision is {last}")
        links: dict[str, list[object]] = {key: [] for key in LINK_KEYS.values()}
        for step in history:
            for ev in map(obj, array(step.get("evidence"))):
                kind = ev.get("kind")
                key = LINK_KEYS.get(kind) if isinstance(kind, str) else None
                if key and ev.get("id") not in links[key]:
                    links[key].append(ev.get("id"))
        stated_links = obj(hyp.get("links") or {})
        if any(_listed(stated_links.get(k) or []) != v for k, v in links.items()) or set(stated_links) - set(links):
            wrong.append(f"states links {stated_links}, but its history cites {links}")
        for n, step in enumerate(history):
            if step.get("status") not in DECIDED:
                continue
            evidence = array(step.get("evidence"))
            if not evidence:
                wrong.append(f"decision {n} ({step.get('status')}) cites no evidence")
            reasons = [_cannot_decide(ev, carried, comparisons, reruns, plans_reruns) for ev in evidence]
            wrong += [f"decision {n} ({step.get('status')}): {r}" for r in reasons if r]
        if wrong:
            out.append(Check(part, False, "; ".join(wrong)))
        else:
            out.append(Check(part, True, f"status {last}; every decision cites records that re-derive and decide it"))
    return out


def _actions(bundle: JSONDoc, reruns: Mapping[str, Rederived]) -> list[Check]:
    """Each action's stated status against the one derived again from the carried records,
    with the rerun comparisons' recomputed verdicts (``workbench.bundle.action_status``)."""
    recipe, results = content(bundle, "recipe"), content(bundle, "results")
    actions = array(recipe.get("actions"))
    stated = {str(a.get("action")): a for a in map(obj, array(results.get("actions")))}
    # Read only when there is an action to derive a status for (as before they were typed).
    plans = [obj(plan) for plan in array(recipe.get("rerun_plans"))] if actions else []
    carried = [obj(entry) for entry in array(results.get("rerun_comparisons"))] if actions else []
    out = []
    for i, item in enumerate(actions):
        action = obj(item)
        ref = str(action.get("ref"))
        part = f"recipe.actions[{i}] {ref}"
        fresh = status_in_bundle(action, plans, carried, reruns)
        said = {k: obj(stated.get(ref) or {}).get(k) for k in ("status", "reason", "why")}
        if ref not in stated:
            out.append(Check(part, False, "the results state no status for it"))
        elif said != fresh:
            out.append(
                Check(
                    part,
                    False,
                    f"states {said['status']!r} ({said['reason']}), but its records give {fresh['status']!r} "
                    f"({fresh['reason']}): {fresh['why']}",
                )
            )
        else:
            out.append(Check(part, True, f"status {fresh['status']} derived again from the carried records"))
    if len(stated) > len(actions):
        out.append(Check("results.actions", False, f"states {len(stated)} action statuses for {len(actions)} actions"))
    return out


def _listed(value: object) -> list[object]:
    """``list(value)``: stated links are listed as they are, whatever iterable they are."""
    if isinstance(value, Iterable):
        return list(value)
    raise TypeError(f"{type(value).__name__!r} object is not iterable")


def _carried_refs(bundle: JSONDoc) -> set[str]:
    refs = {
        str(b.get("ref"))
        for b in map(obj, array(content(bundle, "recipe").get("bisections")))
        if obj(b.get("state") or {}).get("result")
    }
    refs |= {str(o.get("ref")) for o in map(obj, array(bundle.get("observations"))) if o.get("source") == "diagnose"}
    return refs


def _cannot_decide(
    ev: object,
    carried: set[str],
    comparisons: Mapping[str, Rederived],
    reruns: Mapping[str, Rederived],
    plans_reruns: Mapping[str, list[str]],
) -> str | None:
    evidence = ev if isinstance(ev, dict) else {}
    kind = evidence.get("kind")
    if kind not in REF_PREFIX:
        return f"evidence {ev!r} is not of a kind that can decide a hypothesis"
    ref = f"{REF_PREFIX[kind]}/{evidence.get('id')}"
    if kind == "comparison":
        fresh = comparisons.get(ref)
        return (
            f"{ref} is not carried or did not re-derive"
            if fresh is None
            else comparison_cannot_decide(ref, fresh.comparable, fresh.verdict)
        )
    if kind == "rerun_comparison":
        fresh = reruns.get(ref)
        return (
            f"{ref} is not carried, did not re-derive, or its plan belongs to another investigation"
            if fresh is None
            else rerun_cannot_decide(ref, fresh.verdict, fresh.status)
        )
    if kind == "rerun_plan":
        return plan_cannot_decide(
            ref,
            [
                f"{r} did not re-derive or belongs to another investigation"
                if r not in reruns
                else rerun_cannot_decide(r, reruns[r].verdict, reruns[r].status)
                for r in plans_reruns.get(ref, [])
            ],
        )
    if kind == "bisection":
        return bisection_cannot_decide(ref, ref in carried)
    return None if ref in carried else f"{ref} is not a diagnosis carried in the bundle"
