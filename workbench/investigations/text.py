"""Human-readable output shared by the investigation commands (untrusted text cleaned)."""

from __future__ import annotations

from typing import Any

import click

from workbench.compare.parameters import ComparisonParameters
from workbench.textsafe import clean


def print_investigation(inv: dict[str, Any]) -> None:
    echo = click.echo
    imported = " (imported, read-only)" if inv.get("imported") else ""
    echo(f"investigation {inv['id']}{imported}: {clean(inv.get('title') or '')}")
    echo(f"  lens:      {clean(inv['lens'])}")
    echo(f"  question:  {clean(inv['question'])}")
    for g in inv.get("guardrails") or []:
        echo(f"  guardrail: {clean(g)}")
    for dim, change in (inv.get("intended_change") or {}).items():
        echo(f"  change:    {clean(dim)}: {clean(change[0] if change else '?')} -> {clean(change[1] if len(change) > 1 else '?')}")
    echo(f"  baseline:  {clean(', '.join(map(str, inv.get('baseline_runs') or [])) or '-')}")
    echo(f"  candidate: {clean(', '.join(map(str, inv.get('candidate_runs') or [])) or '-')}")
    echo(f"  framed by {clean(inv.get('created_by'))} at {clean(inv.get('created_at'))}")
    comps = inv.get("comparisons") or []
    if comps:
        echo("comparisons:")
    for c in comps:
        state = (c.get("verdict") or "compared") if c.get("comparable") else "REFUSED"
        control = ComparisonParameters.from_json(c.get("parameters")).control
        aa = f" (A/A control {clean(list(control))})" if control else ""
        echo(f"  {c['id']:>4}  {clean(c['baseline_runs'])} vs {clean(c['candidate_runs'])}{aa}  {clean(state)}")
    obs = inv.get("observations") or []
    if obs:
        echo("observations (observation, not cause):")
    for o in obs:
        mark = " [retracted]" if o.get("retracted_by") else ""
        what = f"retracts {clean(o['retracts'])}: " if o.get("retracts") else ""
        echo(f"  {o['id']:>4}  {what}{clean(o['text'])}{mark}")
        echo(f"        evidence: {clean(_evidence(o.get('evidence')))}; pinned by {clean(o.get('pinned_by'))} at {clean(o.get('pinned_at'))}")
    hyps = inv.get("hypotheses") or []
    if hyps:
        echo("hypotheses (claims to test, not findings):")
    for h in hyps:
        echo(f"  {h['id']:>4}  [{clean(h['status'])}] {clean(h['statement'])}")
        echo(f"        test: {clean(h['test'])}")
        links = ", ".join(f"{k}: {v}" for k, v in (h.get("links") or {}).items() if v)
        if links:
            echo(f"        decided by {clean(links)}")


def _evidence(evidence: Any) -> str:
    if not evidence:
        return "-"
    parts = [_brief(e) for e in (evidence if isinstance(evidence, list) else [evidence])]
    text = "; ".join(parts)
    return text if len(text) <= 200 else text[:199] + "…"


def _brief(value: Any) -> str:
    """Evidence in one short line: floats to 4 significant digits, dicts as key=value."""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return " ".join(f"{k}={_brief(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(_brief(v) for v in value) + "]"
    return str(value)
