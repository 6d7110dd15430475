"""``verify --recompute``, the claims: what a bundle states about its records is derived again
from the inputs and the rebuilt results, never read as an input.

- An action's status (``results.actions``): from its decisions and verifications, each history
  checked first (``workbench.bundle.decisions``: an impossible one derives no status), and the
  rebuilt rerun comparison of its verifying plan (``workbench.bundle.action_status``).
- A hypothesis's ``status`` and ``links``: the status is its last decision that holds, where a
  supported/refuted decision holds only when every record it cites is carried, rebuilt and
  can decide (``workbench.bundle.decisive``, the rule ``wb hypothesis status`` applies: of its
  investigation, of the kind its test names, recorded after it, not what the observations it
  was derived from rest on); ``links`` are what its history cites.
- A bisection step that ran a rerun: its verdict, effect, interval, rounds and why, from the
  rebuilt rerun comparison it cites; the candidate it tested carries the same.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from workbench.bundle.action_status import status_in_bundle
from workbench.bundle.decisions import history_problems
from workbench.bundle.decisive import (
    TABLES,
    Origin,
    bisection_cannot_decide,
    comparison_cannot_decide,
    figures_of,
    not_its_test,
    plan_cannot_decide,
    recorded_before,
    rerun_cannot_decide,
    same_as_origin,
)
from workbench.bundle.format import Check
from workbench.bundle.schema import Bundle, HypothesisDoc
from workbench.bundle.whole import Unrebuilt
from workbench.compare.model import verdict_of

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


def _id(ref: object) -> int | None:
    """``"comparison/3"`` -> 3."""
    text = str(ref).rpartition("/")[2]
    return int(text) if text.isdigit() else None


class Evidence:
    """Everything a bundle's claims are derived from: the typed inputs and the rebuilt results."""

    def __init__(self, typed: Bundle, results: Mapping[str, Any], reruns: Mapping[str, Any]) -> None:
        self.typed = typed
        self.own = typed.investigation.ref
        self.comparisons = {str(c["ref"]): c["result"] for c in results.get("comparisons") or [] if isinstance(c, dict)}
        self.specs = {c.ref: c for c in typed.recipe.comparisons}
        self.reruns = dict(reruns)  # ref -> rebuilt record
        self.inputs = {r.ref: r for r in typed.recipe.rerun_comparisons or []}
        self.plans = {p.ref: p.plan() for p in typed.recipe.rerun_plans}
        self.bisections = {b.ref: b for b in typed.recipe.bisections}
        self.observations = {o.ref: o for o in typed.observations}

    def plan_of(self, rerun_ref: str) -> str | None:
        inputs = self.inputs.get(rerun_ref)
        return inputs.plan if inputs is not None else None

    def owned(self, plan_ref: str | None) -> str | None:
        """Why the plan does not belong to this investigation (``None``: it does)."""
        plan = self.plans.get(plan_ref or "")
        if plan is None:
            return f"{plan_ref} is not carried"
        if f"investigation/{plan.investigation_id}" != self.own:
            owner = "no investigation" if plan.investigation_id is None else f"investigation/{plan.investigation_id}"
            return f"{plan_ref} belongs to {owner}, not {self.own}"
        return None


# -- actions ---------------------------------------------------------------------------------


def action_statuses(evidence: Evidence) -> list[object]:
    """``results.actions`` derived again: one per recipe action, in order."""
    plans = [{"ref": p.ref, "record": p.record} for p in evidence.typed.recipe.rerun_plans]
    rebuilt = [{"ref": ref, "record": record} for ref, record in evidence.reruns.items()]
    out: list[object] = []
    for action in evidence.typed.recipe.actions:
        doc = msgspec.to_builtins(action)
        problems = history_problems(action.created_at, doc["decisions"], doc["verifications"])
        if problems:
            out.append(Unrebuilt(f"{action.ref}'s history is impossible: {'; '.join(map(str, problems[:3]))}"))
            continue
        missing = _verifying_rerun_missing(evidence, action.verifications[-1].plan if action.verifications else None)
        if missing:
            out.append(Unrebuilt(missing))
            continue
        out.append({"action": action.ref, **status_in_bundle(doc, plans, rebuilt)})
    return out


def _verifying_rerun_missing(evidence: Evidence, plan_ref: str | None) -> str | None:
    """Why the status cannot be derived: the latest rerun comparison of the verifying plan is
    carried but could not be rebuilt (its verdict is not evidence)."""
    own = [ref for ref, inputs in evidence.inputs.items() if plan_ref is not None and inputs.plan == plan_ref]
    latest = max(own, key=lambda ref: _id(ref) or 0) if own else None
    if latest is not None and latest not in evidence.reruns:
        return f"{latest}, which its verifying plan's status rests on, could not be rebuilt"
    return None


# -- hypotheses ------------------------------------------------------------------------------


def hypotheses(evidence: Evidence, stated: Sequence[Any]) -> tuple[list[object], list[Check]]:
    """Each hypothesis as stated, with its ``status`` and ``links`` derived again; a check per
    decision that does not hold."""
    out: list[object] = []
    checks: list[Check] = []
    for i, (hyp, raw) in enumerate(zip(evidence.typed.hypotheses, stated)):
        origin = _origin(evidence, hyp)
        status = "open"
        for n, step in enumerate(hyp.history):
            why = _step_problem(evidence, origin, step.status, step.evidence)
            if why:
                checks.append(Check(f"hypotheses[{i}].history[{n}]", False, f"{hyp.ref}'s {step.status}: {why}"))
            else:
                status = step.status
        out.append({**raw, "status": status, "links": _links(hyp)})
    return out, checks


def _links(hyp: HypothesisDoc) -> dict[str, list[object]]:
    links: dict[str, list[object]] = {key: [] for key in LINK_KEYS.values()}
    for step in hyp.history:
        for ev in step.evidence:
            kind = ev.get("kind")
            key = LINK_KEYS.get(kind) if isinstance(kind, str) else None
            if key and ev.get("id") not in links[key]:
                links[key].append(ev.get("id"))
    return links


def _origin(evidence: Evidence, hyp: HypothesisDoc) -> Origin:
    """What the hypothesis came from, as the bundle carries it (``investigations.origin`` in the store)."""
    before = hyp.evidence_before
    comparisons: set[int] = set()
    reruns: set[int] = set()
    figures: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    for ref, obs in evidence.observations.items():
        number = _id(ref)
        if before is None or number is None or number > int(before.get("observation", 0)):
            continue
        kind, sep, cited = (obs.source or "").partition(":")
        if sep and kind == "comparison" and cited.isdigit():
            comparisons.add(int(cited))
        for item in obs.evidence:
            if not isinstance(item, dict):
                continue
            if item.get("kind") in ("comparison", "rerun_comparison") and isinstance(item.get("id"), int):
                (comparisons if item["kind"] == "comparison" else reruns).add(item["id"])
            runs = item.get("runs")
            if (
                isinstance(runs, dict)
                and isinstance(runs.get("baseline"), list)
                and isinstance(runs.get("candidate"), list)
            ):
                figures.add(figures_of(runs["baseline"], runs["candidate"]))
    for cid in comparisons:
        spec = evidence.specs.get(f"comparison/{cid}")
        if spec is not None:
            figures.add(figures_of(spec.baseline, spec.candidate))
    executions = {
        inputs.execution.id
        for rid in reruns
        if (inputs := evidence.inputs.get(f"rerun-comparison/{rid}")) is not None and inputs.execution is not None
    }
    return Origin(
        test_kind=hyp.test_kind,
        before=None if before is None else {t: int(before.get(t, 0)) for t in TABLES},
        comparisons=frozenset(comparisons),
        figures=frozenset(figures),
        reruns=frozenset(reruns),
        executions=frozenset(executions),
    )


def _step_problem(evidence: Evidence, origin: Origin, status: str, cited: Sequence[Mapping[str, Any]]) -> str | None:
    if status not in DECIDED:
        return None
    if not cited:
        return "cites no evidence"
    reasons = [_cannot_decide(evidence, origin, ev) for ev in cited]
    return "; ".join(r for r in reasons if r) or None


def _cannot_decide(evidence: Evidence, origin: Origin, ev: Mapping[str, Any]) -> str | None:
    kind = ev.get("kind")
    if kind not in REF_PREFIX or not isinstance(ev.get("id"), int):
        return f"evidence {ev!r} is not a record that can decide a hypothesis"
    rid = int(ev["id"])
    ref = f"{REF_PREFIX[kind]}/{rid}"
    return _decisive(evidence, origin, str(kind), ref, rid) or _its_test(evidence, origin, str(kind), ref, rid)


def _decisive(evidence: Evidence, origin: Origin, kind: str, ref: str, rid: int) -> str | None:
    """Why the carried, rebuilt record cannot decide anything (the store's rule)."""
    if kind == "comparison":
        result = evidence.comparisons.get(ref)
        if not isinstance(result, dict):
            return f"{ref} is not carried or could not be rebuilt"
        return comparison_cannot_decide(ref, bool(result.get("comparable")), verdict_of(result))
    if kind == "rerun_comparison":
        return evidence.owned(evidence.plan_of(ref)) or _rerun_cannot_decide(evidence, ref)
    if kind == "rerun_plan":
        owned = evidence.owned(ref)
        if owned:
            return owned
        mine = sorted((r for r in evidence.inputs if evidence.plan_of(r) == ref), key=lambda r: _id(r) or 0)
        reasons = [
            _rerun_cannot_decide(evidence, r) or _its_test(evidence, origin, "rerun_comparison", r, _id(r) or 0)
            for r in mine
        ]
        return plan_cannot_decide(ref, reasons)
    if kind == "bisection":
        found = evidence.bisections.get(ref)
        return bisection_cannot_decide(ref, bool(found is not None and found.state.get("result")))
    observation = evidence.observations.get(ref)
    return (
        None
        if observation is not None and observation.source == "diagnose"
        else f"{ref} is not a diagnosis carried in the bundle"
    )


def _rerun_cannot_decide(evidence: Evidence, ref: str) -> str | None:
    record = evidence.reruns.get(ref)
    if record is None:
        return f"{ref} is not carried or could not be rebuilt"
    body = record.get("body") or {}
    return rerun_cannot_decide(ref, record.get("verdict"), (body.get("execution") or {}).get("status"))


def _its_test(evidence: Evidence, origin: Origin, kind: str, ref: str, rid: int) -> str | None:
    """Why the record is not the hypothesis's own test: its kind, its time, its origin."""
    wrong = not_its_test(origin.test_kind, kind)
    if wrong:
        return wrong
    if kind == "rerun_plan":
        return None  # through its rerun comparisons (above)
    if kind == "comparison":
        spec = evidence.specs.get(ref)
        figures = figures_of(spec.baseline, spec.candidate) if spec is not None else None
        return recorded_before(origin, kind, ref, rid) or same_as_origin(origin, kind, ref, rid, figures=figures)
    if kind == "rerun_comparison":
        inputs = evidence.inputs.get(ref)
        execution = inputs.execution.id if inputs is not None and inputs.execution is not None else None
        return recorded_before(origin, kind, ref, rid) or same_as_origin(origin, kind, ref, rid, execution=execution)
    if kind == "bisection":
        found = evidence.bisections.get(ref)
        steps = (
            {s.get("comparison_id") for s in (found.state.get("steps") or []) if isinstance(s, dict)}
            if found
            else set()
        )
        if steps & origin.reruns:
            return f"{ref}'s steps are what the observation it was derived from rests on, not its test"
    return recorded_before(origin, kind, ref, rid)


# -- bisections ------------------------------------------------------------------------------


def bisections(evidence: Evidence, stated: Sequence[Any]) -> list[object]:
    """Each bisection as stated, every step that ran a rerun (and the candidate it tested)
    carrying what its rebuilt rerun comparison says."""
    out: list[object] = []
    for raw in stated:
        if not isinstance(raw, dict) or not isinstance(raw.get("state"), dict):
            out.append(raw)
            continue
        state = dict(raw["state"])
        steps = [dict(s) if isinstance(s, dict) else s for s in state.get("steps") or []]
        candidates = [dict(c) if isinstance(c, dict) else c for c in state.get("candidates") or []]
        for n, step in enumerate(steps):
            if not isinstance(step, dict) or step.get("comparison_id") is None:
                continue
            figures = _step_figures(evidence, step.get("comparison_id"))
            steps[n] = figures if isinstance(figures, Unrebuilt) else {**step, **figures}
            index = step.get("candidate")
            if not isinstance(figures, Unrebuilt) and isinstance(index, int) and 0 <= index < len(candidates):
                mirrored = {k: figures[k] for k in ("ratio", "ci95", "verdict", "plan", "comparison_id")}
                candidates[index] = (
                    {**candidates[index], **mirrored} if isinstance(candidates[index], dict) else candidates[index]
                )
        if "steps" in state:
            state["steps"] = steps
        if "candidates" in state:
            state["candidates"] = candidates
        out.append({**raw, "state": state})
    return out


def _step_figures(evidence: Evidence, cited: object) -> dict[str, object] | Unrebuilt:
    """A bisection step's figures from the rerun comparison it cites (``bisect.bisection._step``)."""
    ref = f"rerun-comparison/{cited}"
    record = evidence.reruns.get(ref)
    if record is None:
        return Unrebuilt(f"it cites {ref}, which is not carried or could not be rebuilt")
    body = record["body"]
    seq = body.get("sequential") or {}
    low, high = (seq.get("repeated_ci95") or [None, None]) if seq else (None, None)
    ci95 = [low, high] if _finite(low) and _finite(high) else None
    return {
        "verdict": body.get("verdict"),
        "ratio": seq.get("ratio") if seq and _finite(seq.get("ratio")) else None,
        "ci95": ci95,
        "plan": (body.get("plan") or {}).get("name"),
        "comparison_id": cited,
        "rounds_used": len((body.get("rounds") or {}).get("used") or []),
        "stopped_at_round": seq.get("stopped_at_round") if seq else None,
        "why": body.get("reason"),
    }


def _finite(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
