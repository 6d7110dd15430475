"""Watch a verified action for regressions: later runs against the verified candidate.

The candidate (B) runs of the verifying plan's latest completed execution are the
baseline; the later runs (imported or pushed) the candidate; the compare engine judges
them under the investigation's frame guardrails (the one contract: a pair it refuses is
reported as refused, not as drift). Drift is a REGRESSION verdict: beyond the
equivalence band, with the uncertainty of both run sets; an unresolved slowdown is
reported as possible drift, not as drift.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.actions.records import WatchResult, WatchRun
from workbench.actions.workflow import verified_candidate
from workbench.compare import compare
from workbench.errors import UsageError
from workbench.investigations.common import investigation_of, resolve_runs
from workbench.investigations.frame import frame_guardrails
from workbench.investigations.views import frame_of

if TYPE_CHECKING:
    from store.api import Store


def watch_action(store: "Store", action: str | int, against: Sequence[str | int]) -> WatchResult:
    if not against:
        raise UsageError("name the later runs to watch (--against RUN...)")
    view, plan, candidate = verified_candidate(store, action)
    if not candidate:
        raise UsageError(f"plan {plan.get('name')!r} kept no candidate runs in the store to compare with")
    later = resolve_runs(store, list(against))
    frame = frame_of(investigation_of(store, view.investigation_id))
    plan_lens = plan.get("lens")  # a stored plan's lens: its body's word
    result = compare(
        store.load_runs(candidate),
        store.load_runs(later),
        lens=plan_lens if isinstance(plan_lens, str) and plan_lens else frame.lens,
        guardrails=frame_guardrails(frame.lens, frame.guardrails, f"investigation {frame.id}'s guardrail"),
    )
    comparable = result.comparable
    metric = result.primary.metric if result.primary is not None else None
    verdict = result.verdict if comparable else None
    effect = result.effect
    flags = [str(f) for f in effect.flags] if effect is not None and isinstance(effect.flags, tuple) else []
    if not comparable:
        why = f"not comparable with the verified candidate: {result.refusal.reason if result.refusal else None}"
    elif verdict == "REGRESSION":
        why = f"drift: {metric} regressed against the verified candidate beyond the band"
    elif verdict == "SLOWER_UNRESOLVED":
        why = f"possible drift: {metric} slower, not resolved beyond the band"
    else:
        why = f"no drift: {metric} {verdict} against the verified candidate"
    labels = {r.id: r.label for r in store.list_runs()}
    return WatchResult(
        action_id=view.id,
        plan=str(plan.get("name")),
        candidate_runs=candidate,
        against=[WatchRun(run_id=r, label=labels.get(r, "")) for r in later],
        comparable=comparable,
        verdict=verdict,
        drift=verdict == "REGRESSION",
        flags=flags,
        why=why,
    )
