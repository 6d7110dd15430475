"""A bisection as plain lines for an 80-column terminal (untrusted text cleaned)."""

from __future__ import annotations

import textwrap
from msgspec import UNSET

from workbench.bisect.result import BisectionReport, Step
from workbench.textsafe import clean


def _ratio(step: Step) -> str:
    if step.ratio is None:
        return "no effect measured"
    ci = step.ci95
    return f"θ {step.ratio:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def render_bisection(doc: BisectionReport, width: int = 80) -> str:
    """The one renderer of a bisection (a printed or stored document: ``BisectionReport.from_json`` first)."""

    def wrap(text: str, indent: str = "  ") -> list[str]:
        return textwrap.wrap(clean(text), width, initial_indent=indent, subsequent_indent=indent + "  ")

    cs = doc.candidates
    lines = [clean(f"Bisection {doc.id} {doc.name} · {doc.status} · {len(cs)} candidates, {doc.steps_done} steps")]
    lo, hi = doc.lo, doc.hi
    if doc.endpoint is None and not doc.steps:
        lines += wrap(
            f"endpoints not checked yet: {cs[hi].rev[:12]} (bad) against {cs[lo].rev[:12]} (good) comes first"
        )
    else:
        lines += wrap(
            f"open range: {cs[lo].rev[:12]} (last good) .. {cs[hi].rev[:12]} (first bad), "
            f"{max(hi - lo - 1, 0)} candidates between"
        )
    for step in doc.steps:
        what = "endpoints" if step.endpoint else (step.klass or "")
        rounds = f"{step.rounds_used} rounds" if step.rounds_used is not UNSET else (step.reason or "")
        lines += wrap(
            f"step {step.step}: {step.rev[:12]} vs {step.against[:12]}: {step.verdict or 'no verdict'} "
            f"{_ratio(step)} → {what} ({rounds})"
        )
    if doc.stopped:
        lines += wrap(
            f"stopped: {doc.stopped}. 'wb bisect resume {doc.name}' tries again with the same commands; "
            "to change them, start a new bisection with another --name"
        )
    result = doc.result
    if result:
        lines.append("Result (an observation, not a cause):")
        lines += wrap(result.text)
        if result.skipped:
            lines += wrap("skipped (undecided or did not build): " + ", ".join(r[:12] for r in result.skipped))
    if doc.workspaces:
        lines += wrap("workspaces kept (--keep-workspaces): " + ", ".join(doc.workspaces))
    return "\n".join(lines)
