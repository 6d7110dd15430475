"""The sentences both formats print about an effect and a rerun: the plan it was judged
under, its interval, the A/A control, the verdict and flags. Written once so the page and
the ticket say the same thing; plain text (the templates escape it)."""

from __future__ import annotations

import math

from msgspec import UNSET

from workbench.numbers import num
from workbench.compare.results import Effect, Interval
from workbench.rerun.comparison import RerunReport


def _given(value: object) -> bool:
    return value is not UNSET and value is not None


def ratio(value: float | None) -> str:
    """A ratio to three decimals: 1.001 is not 1."""
    return "unknown" if value is None or not math.isfinite(value) else f"{value:.3f}"


def _interval(ci: Interval | None, level: str) -> str:
    if ci is None or ci.low is None or ci.high is None:
        return ""
    return f"{level} {ratio(ci.low)} to {ratio(ci.high)} ({ci.method})"


def plan(effect: Effect | None, *, paired: bool = False) -> str:
    """How the effect was judged: runs per side, the design, α and the equivalence band."""
    if effect is None:
        return "no effect was computed"
    parts = []
    runs = effect.runs
    if runs:
        control = f", {runs.control} A′ control runs" if _given(runs.control) else ""
        parts.append(f"{runs.baseline} baseline and {runs.candidate} candidate runs{control}, one value per run")
    parts.append("paired by round" if paired or effect.paired is True else "unpaired")
    if _given(effect.alpha):
        parts.append(f"α = {num(effect.alpha)}")  # type: ignore[arg-type]
    if _given(effect.delta):
        parts.append(f"equivalence band ±{num(100 * effect.delta)} %")  # type: ignore[operator]
    return "; ".join(parts)


def interval(effect: Effect | None) -> str:
    """The ratio (candidate/baseline) and its primary intervals."""
    if effect is None or effect.verdict is None:
        return str(effect.note) if effect is not None and _given(effect.note) else "none"
    cis = [
        _interval(effect.interval(0.95, "primary"), "CI95"),
        _interval(effect.interval(0.90, "primary"), "CI90"),
    ]
    head = f"ratio {ratio(effect.ratio)}" if _given(effect.ratio) else "ratio unknown"  # type: ignore[arg-type]
    return "; ".join([head, *[c for c in cis if c]])


def control(effect: Effect | None) -> str:
    """The A/A control: A′ against A, its CI90, the noise floor and what it can resolve."""
    aa = effect.aa if effect is not None and _given(effect.aa) else None
    if not aa:
        note = effect.control_note if effect is not None and _given(effect.control_note) else ""
        return f"none: {note}" if note else "none (no A′ runs: the noise floor is the runs' own spread)"
    ci = _interval(aa.interval(0.90), "CI90")
    text = (
        f"A′/A {ratio(aa.ratio)}{'; ' + ci if ci else ''}; "
        f"noise floor {num(aa.noise_floor_sd_log)} (SD of log values); smallest detectable change {num(aa.mde_pct)} %"
    )
    if aa.underpowered:
        text += "; underpowered"
    if aa.unstable:
        text += "; unstable (A′ is not the baseline again)"
    return text


def verdict(effect: Effect | None) -> str:
    if effect is None:
        return "none"
    if effect.verdict is None:
        return f"none: {effect.note}" if _given(effect.note) else "none"
    return str(effect.verdict)


def flags(effect: Effect | None) -> str:
    found = effect.flags if effect is not None and _given(effect.flags) else ()
    return ", ".join(str(f) for f in found) or "none"  # type: ignore[union-attr]


def reason(effect: Effect | None) -> str:
    return str(effect.reason) if effect is not None and _given(effect.reason) else ""


def effect_rows(effect: Effect | None, *, paired: bool = False) -> list[tuple[str, str]]:
    """(what, the sentence) for the verification of one effect."""
    rows = [
        ("plan", plan(effect, paired=paired)),
        ("A/A control", control(effect)),
        ("interval", interval(effect)),
        ("verdict", verdict(effect)),
        ("flags", flags(effect)),
    ]
    why = reason(effect)
    return rows + ([("why", why)] if why else [])


def rerun_rows(r: RerunReport) -> list[tuple[str, str]]:
    """A rerun comparison's design, then its effect as :func:`effect_rows`, with its own verdict and flags."""
    p = r.plan
    design = (
        f"per-run {p.statistic} of {p.metric} ({'higher' if p.higher_is_better else 'lower'} is better); "
        f"{len(r.rounds.used)} of {p.rounds} planned rounds used; order {p.order}, seed {p.seed}; "
        f"execution {r.execution.id} ({r.execution.status}){', PARTIAL' if r.partial else ''}"
    )
    rows = [("design", design), *effect_rows(r.analysis, paired=True)]
    out = []
    for what, text in rows:
        if what == "verdict":
            text = str(r.verdict) if r.verdict is not None else f"none: {r.reason}" if r.reason else "none"
        elif what == "flags":
            text = ", ".join(str(f) for f in r.flags) or "none"
        elif what == "why" and r.reason:
            continue
        out.append((what, text))
    if r.reason:
        out.append(("why", r.reason))
    if r.sequential is not None:
        s = r.sequential
        out.append(("sequential", f"{s.decision} at round {s.stopped_at_round or 'none'}: {s.why}"))
    for g in r.guardrails:
        out.append((f"guardrail {g.name}", f"{g.rule} {num(g.limit)}: {g.status}" + (f" ({g.why})" if g.why else "")))
    if r.refusal is not None:
        out.append(("refused", r.refusal.reason))
    return out
