"""An action as text lines, for ``wb action show`` and the TUI (untrusted strings cleaned)."""

from __future__ import annotations

from collections.abc import Mapping

from workbench.actions.records import ActionView
from workbench.investigations.evidence_text import evidence_text
from workbench.textsafe import clean


def change_text(a: ActionView) -> str:
    if a.kind == "retry":
        return f"retry after {a.retry.get('failure_class') or 'the failure'}"
    return ", ".join(f"{k} {v[0]} -> {v[1]}" for k, v in a.changes.items()) or f"({a.kind})"


def headline(a: ActionView) -> str:
    st = a.status
    return clean(f"action {a.id} [{st.status}{' — ' + st.reason if st.reason else ''}] {a.kind}: {change_text(a)}")


def action_lines(a: ActionView) -> list[str]:
    out = [headline(a), f"  scope: {clean(a.scope)}"]
    if a.because:
        out.append("  because: " + ", ".join(f"hypothesis {h}" for h in a.because))
    if a.evidence:
        out.append(f"  evidence: {clean(evidence_text(a.evidence, limit=400))}")
    if a.expect:
        out.append(f"  expects: {clean(str(a.expect.get('metric')))} {a.expect.get('direction')}")
    if a.retry:
        out.append(
            f"  retry of a {clean(str(a.retry.get('failure_class')))} failure; blamed conditions: "
            f"{clean(_conditions(a.retry))}"
        )
    for d in a.decisions:
        out.append(f"  {d.decision} by {clean(d.by)} at {d.at}: {clean(d.why)}")
    for v in a.verifications:
        inputs = v.observed.get("inputs")
        what = (
            f"plan {clean(str(v.plan))}"
            if v.plan_id is not None
            else "job " + clean(", ".join(map(str, inputs)) if isinstance(inputs, list) else "")
        )
        out.append(f"  verified with {what} by {clean(v.by)} at {v.at}")
    out.append(f"  status: {clean(a.status.why)}")
    return out


def _conditions(retry: Mapping[str, object]) -> str:
    conditions = retry.get("conditions")  # condition -> value or values (actions.conditions.Conditions)
    if not isinstance(conditions, Mapping):
        return ""
    return "; ".join(f"{k} {','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in conditions.items())
