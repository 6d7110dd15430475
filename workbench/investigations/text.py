"""Human-readable output shared by the investigation commands (untrusted text cleaned)."""

from __future__ import annotations

import click

from workbench.investigations.evidence_text import evidence_text
from workbench.investigations.views import InvestigationView
from workbench.textsafe import clean


def print_investigation(inv: InvestigationView) -> None:
    echo = click.echo
    imported = " (imported, read-only)" if inv.imported else ""
    echo(f"investigation {inv.id}{imported}: {clean(inv.title or '')}")
    echo(f"  lens:      {clean(inv.lens)}")
    echo(f"  question:  {clean(inv.question)}")
    for g in inv.guardrails:
        echo(f"  guardrail: {clean(g)}")
    for dim, change in inv.intended_change.items():
        echo(
            f"  change:    {clean(dim)}: {clean(change[0] if change else '?')} -> "
            f"{clean(change[1] if len(change) > 1 else '?')}"
        )
    echo(f"  baseline:  {clean(', '.join(map(str, inv.baseline_runs)) or '-')}")
    echo(f"  candidate: {clean(', '.join(map(str, inv.candidate_runs)) or '-')}")
    echo(f"  framed by {clean(inv.created_by)} at {clean(inv.created_at)}")
    if inv.comparisons:
        echo("comparisons:")
    for c in inv.comparisons:
        state = (c.verdict or "compared") if c.comparable else "REFUSED"
        control = c.parameters.control
        aa = f" (A/A control {clean(list(control))})" if control else ""
        echo(f"  {c.id:>4}  {clean(c.baseline_runs)} vs {clean(c.candidate_runs)}{aa}  {clean(state)}")
    if inv.observations:
        echo("observations (observation, not cause):")
    for o in inv.observations:
        mark = " [retracted]" if o.retracted_by else ""
        what = f"retracts {clean(o.retracts)}: " if o.retracts else ""
        echo(f"  {o.id:>4}  {what}{clean(o.text)}{mark}")
        echo(
            f"        evidence: {clean(evidence_text(o.evidence))}; pinned by {clean(o.pinned_by)} at "
            f"{clean(o.pinned_at)}"
        )
    if inv.hypotheses:
        echo("hypotheses (claims to test, not findings):")
    for h in inv.hypotheses:
        echo(f"  {h.id:>4}  [{clean(h.status)}] {clean(h.statement)}")
        echo(f"        test: {clean(h.test)}")
        links = ", ".join(f"{k}: {v}" for k, v in h.links.items() if v)
        if links:
            echo(f"        decided by {clean(links)}")
