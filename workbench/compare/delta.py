"""The delta of a comparable pair: the primary metric, the phases (or the fleet window
metrics), the guardrails, the work, and a team's extra metrics.

Every figure of a side is the mean over its runs of a per-run statistic (runs weigh
equally); effects come from the statistics engine on those per-run values.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from msgspec import UNSET, UnsetType

from lenses.base import Lens
from store.records import RunRecord
from workbench.compare.effects import run_effect
from workbench.numbers import bucketed_change, censored_change, change
from workbench.compare.results import (
    MISSING_NOTE,
    Bucketed,
    Censored,
    CensoredSides,
    Effect,
    Guardrail,
    Metric,
    PerItem,
    PerRun,
    Phase,
    Primary,
    Throughput,
    Work,
    no_effect,
)
from workbench.stats.verdicts import MOVED
from workbench.vocabulary import GuardrailState

NAN = float("nan")


def side_mean(values: Sequence[float]) -> float:
    known = [v for v in values if v is not None and math.isfinite(v)]
    return float(np.mean(known)) if known else NAN


def _delta(baseline: float, candidate: float) -> tuple[float, float]:
    """The change and the change in % of the baseline (nan: unknown)."""
    delta = candidate - baseline if math.isfinite(baseline) and math.isfinite(candidate) else NAN
    pct = 100.0 * delta / abs(baseline) if math.isfinite(delta) and baseline != 0 else NAN
    return delta, pct


def _control(values: list[float], control: Sequence[RunRecord] | None) -> list[float] | None:
    """The A/A control's values for ``run_effect`` (``None`` when there is no control)."""
    return values if control else None


def primary(
    lens: Lens,
    base: Sequence[RunRecord],
    cand: Sequence[RunRecord],
    *,
    timing_effect: bool,
    control: Sequence[RunRecord] | None = None,
) -> Primary:
    spec = lens.primary
    per_b = [lens.primary_value(r) for r in base]
    per_c = [lens.primary_value(r) for r in cand]
    per_a = [lens.primary_value(r) for r in control or ()]
    b, c = side_mean(per_b), side_mean(per_c)
    effect: Effect
    if timing_effect:
        effect = run_effect(per_b, per_c, lower_is_better=spec.lower_is_better, control=_control(per_a, control))
    else:
        effect = no_effect("the valid work differs: work and time are reported separately, no timing-only effect")
    delta, pct = _delta(b, c)
    per_run = PerRun(baseline=tuple(per_b), candidate=tuple(per_c), **({"control": tuple(per_a)} if control else {}))
    censored = (
        CensoredSides(baseline=_censored(lens, base, b), candidate=_censored(lens, cand, c))
        if lens.primary_censored
        else UNSET
    )
    bucketed = _bucketed(lens, base, cand, per_b, per_c)
    text = change(b, c, spec.unit)
    if censored is not UNSET and any(s.mean_at_least_s is not UNSET for s in (censored.baseline, censored.candidate)):
        text = censored_change(b, c, spec.unit, censored)
    if bucketed is not UNSET:
        text = bucketed_change(b, c, spec.unit, bucketed)
        if bucketed.within_resolution and effect.verdict in MOVED:  # the interpolation moved, the buckets do not say so
            effect = no_effect(
                f"{effect.verdict} withheld: the change is within the histogram's resolution "
                "(the sides' bucket intervals overlap)",
                effect.runs,
            )
    return Primary(
        metric=spec.name,
        title=spec.title,
        unit=spec.unit,
        baseline=b,
        candidate=c,
        delta=delta,
        delta_pct=pct,
        text=text,
        per_run=per_run,
        effect=effect,
        censored=censored,
        bucketed=bucketed,
    )


def _bucketed(lens: Lens, base: Sequence[RunRecord], cand: Sequence[RunRecord], per_b: list[float], per_c: list[float]):
    """The primary's bucket bounds when any run gives it from a histogram (UNSET otherwise)."""
    bounds_b, bounds_c = [lens.primary_bounds(r) for r in base], [lens.primary_bounds(r) for r in cand]
    if not any(x is not None for x in (*bounds_b, *bounds_c)):
        return UNSET

    def side(bounds: list, values: list[float]) -> tuple[float, float]:
        # the mean of figures each in [lo_i, hi_i] lies in [mean lo, mean hi]; an exact figure is [v, v]
        pairs = [bd if bd is not None else (v, v) for bd, v in zip(bounds, values)]
        if not pairs or not all(math.isfinite(lo) for lo, _ in pairs):
            return NAN, NAN
        return float(np.mean([lo for lo, _ in pairs])), float(np.mean([hi for _, hi in pairs]))

    (b_lo, b_hi), (c_lo, c_hi) = side(bounds_b, per_b), side(bounds_c, per_c)
    finite_or_none = lambda x: x if math.isfinite(x) else None  # noqa: E731
    return Bucketed(
        baseline_low=finite_or_none(b_lo),
        baseline_high=finite_or_none(b_hi),
        candidate_low=finite_or_none(c_lo),
        candidate_high=finite_or_none(c_hi),
        delta_low=finite_or_none(c_lo - b_hi),
        delta_high=finite_or_none(c_hi - b_lo),
        within_resolution=bool(b_lo <= c_hi and c_lo <= b_hi),
    )


def _censored(lens: Lens, runs: Sequence[RunRecord], mean: float) -> Censored:
    """Fleet: jobs still waiting at their window's end, not in the mean of started waits;
    their elapsed waits are lower bounds (right-censored). A side whose mean is unknown because
    no job started has the mean of those waits so far as the lower bound of its mean."""
    elapsed = np.concatenate([lens.censored_values(r) for r in runs]) if runs else np.array([])
    at_least: float | None | UnsetType = UNSET
    if not math.isfinite(mean) and elapsed.size:
        at_least = side_mean([float(v.mean()) for v in (lens.censored_values(r) for r in runs) if v.size])
    return Censored(
        jobs=int(elapsed.size),
        min_elapsed_s=float(elapsed.min()) if elapsed.size else None,
        max_elapsed_s=float(elapsed.max()) if elapsed.size else None,
        **({} if at_least is UNSET else {"mean_at_least_s": at_least}),
    )


def phases(
    lens: Lens, base: Sequence[RunRecord], cand: Sequence[RunRecord], control: Sequence[RunRecord] | None = None
) -> list[Phase]:
    if lens.runs_are_windows:
        return window_metrics(lens, base, cand, control)
    sums_b = [lens.phase_summary(r) for r in base]
    sums_c = [lens.phase_summary(r) for r in cand]
    sums_a = [lens.phase_summary(r) for r in control or ()]
    out = []
    for phase in lens.phases:

        def per_run(sums: list[dict[str, dict[str, float]]], stat: str) -> list[float]:
            return [s.get(phase.name, {}).get(stat, NAN) for s in sums]  # noqa: B023 - called in this iteration

        if not any(phase.name in s for s in sums_b + sums_c):
            continue  # no run records this phase: say nothing rather than zero
        stat = lens.phase_statistic
        mean_b, mean_c = per_run(sums_b, "mean"), per_run(sums_c, "mean")
        out.append(
            Phase(
                name=phase.name,
                title=phase.title,
                unit=phase.unit,
                in_primary=phase.in_primary,
                additive=lens.phases_additive,
                stage=phase.stage,
                baseline_mean=side_mean(mean_b),
                candidate_mean=side_mean(mean_c),
                baseline_p50=side_mean(per_run(sums_b, "p50")),
                candidate_p50=side_mean(per_run(sums_c, "p50")),
                baseline_p95=side_mean(per_run(sums_b, "p95")),
                candidate_p95=side_mean(per_run(sums_c, "p95")),
                statistic=stat,
                effect=run_effect(
                    per_run(sums_b, stat), per_run(sums_c, stat), control=_control(per_run(sums_a, stat), control)
                ),
            )
        )
    return out


def window_metrics(
    lens: Lens, base: Sequence[RunRecord], cand: Sequence[RunRecord], control: Sequence[RunRecord] | None = None
) -> list[Phase]:
    """Fleet: the window metrics in the place of phases (no p95: one value per window)."""
    per_b = [lens.window_metrics(r) for r in base]
    per_c = [lens.window_metrics(r) for r in cand]
    per_a = [lens.window_metrics(r) for r in control or ()]
    out = []
    for name, title, unit, higher_better in (
        (m.name, m.title, m.unit, not m.lower_is_better) for m in lens.window_metric_specs
    ):
        vb = [m.get(name, NAN) for m in per_b]
        vc = [m.get(name, NAN) for m in per_c]
        va = [m.get(name, NAN) for m in per_a]
        out.append(
            Phase(
                name=name,
                title=title,
                unit=unit,
                in_primary=False,
                additive=False,
                baseline_mean=side_mean(vb),
                candidate_mean=side_mean(vc),
                baseline_p95=None,
                candidate_p95=None,
                statistic="mean",
                effect=run_effect(vb, vc, lower_is_better=not higher_better, control=_control(va, control)),
            )
        )
    return out


def guardrails(
    lens: Lens, base: Sequence[RunRecord], cand: Sequence[RunRecord], control: Sequence[RunRecord] | None = None
) -> list[Guardrail]:
    out = []
    for g in lens.guardrails:
        b = side_mean([lens.guardrail_value(r, g.metric) for r in base])
        c = side_mean([lens.guardrail_value(r, g.metric) for r in cand])
        state = g.judge(b, c)
        a: float | UnsetType = UNSET
        control_state: GuardrailState | UnsetType = UNSET
        control_note: str | UnsetType = UNSET
        if control:
            # The same rule on the A/A control, as reruns do: a guardrail the baseline
            # breaks against itself is within the noise of these runs.
            a = side_mean([lens.guardrail_value(r, g.metric) for r in control])
            control_state = g.judge(b, a)
            if control_state == "broken":
                control_note = "the A/A control breaks it too: the guardrail is within these runs' noise"
        note = MISSING_NOTE if state == "unknown" else UNSET
        out.append(
            Guardrail(
                name=g.name,
                title=g.title,
                state=state,
                metric=g.metric,
                rule=g.rule,
                limit=g.limit,
                unit=g.unit,
                baseline=b,
                candidate=c,
                note=note,
                control=a,
                control_state=control_state,
                control_note=control_note,
            )
        )
    return out


def extra_metrics(
    lens: Lens, base: Sequence[RunRecord], cand: Sequence[RunRecord], control: Sequence[RunRecord] | None = None
) -> list[Metric]:
    out = []
    for m in lens.metrics:
        per_b = [m.value(r) for r in base]
        per_c = [m.value(r) for r in cand]
        per_a = [m.value(r) for r in control or ()]
        b, c = side_mean(per_b), side_mean(per_c)
        delta, pct = _delta(b, c)
        effect = run_effect(per_b, per_c, lower_is_better=m.lower_is_better, control=_control(per_a, control))
        out.append(
            Metric(
                name=m.name,
                title=m.title,
                unit=m.unit,
                baseline=b,
                candidate=c,
                delta=delta,
                delta_pct=pct,
                effect=effect,
            )
        )
    return out


# Work per item agreeing within this share is "the same valid work".
WORK_TOLERANCE = 0.02


def work(lens: Lens, base: Sequence[RunRecord], cand: Sequence[RunRecord], primary: Primary | None) -> Work:
    """Work of each side, whether the valid work per item is the same, and the throughput
    conversion (throughput change = 1/θ − 1 for a time ratio θ) where it holds."""
    units = {r.work.unit for r in [*base, *cand] if r.work is not None}
    unit = units.pop() if len(units) == 1 else lens.work_unit
    items_b = [lens.work_per_item(r) for r in base]
    items_c = [lens.work_per_item(r) for r in cand]
    if lens.runs_are_windows:
        return Work(
            unit=lens.work_unit,
            baseline=side_mean([lens.window_work(r) for r in base]),
            candidate=side_mean([lens.window_work(r) for r in cand]),
            same=None,
            note=lens.work_note,
        )
    sides = {"unit": unit, "baseline": _work_amount(base), "candidate": _work_amount(cand)}
    if any(i is None for i in items_b + items_c):
        return Work(
            **sides, same=None, note="the data do not say the work per item on every run: work equivalence is unknown"
        )
    name = items_b[0].name
    b, c = side_mean([i.value for i in items_b]), side_mean([i.value for i in items_c])
    same = math.isclose(b, c, rel_tol=WORK_TOLERANCE)
    per_item = PerItem(name=name, baseline=b, candidate=c)
    if not same:
        return Work(
            **sides,
            per_item=per_item,
            same=same,
            note=f"the valid work differs ({name}: {b:g} vs {c:g}): work and time are reported separately, never a "
            f"timing-only effect",
        )
    throughput = _throughput(lens, base, cand, primary)
    if throughput is None:
        return Work(
            **sides,
            per_item=per_item,
            same=same,
            throughput=None,
            note="no completed duration recorded for every run: no throughput conversion",
        )
    return Work(**sides, per_item=per_item, same=same, throughput=throughput)


def _work_amount(runs: Sequence[RunRecord]) -> float:
    """A side's work: the sum over its runs, unknown when a run does not say its own."""
    values = [r.work.amount for r in runs if r.work is not None and r.work.amount is not None]
    return float(np.sum(values)) if len(values) == len(runs) and values else NAN


def _throughput(
    lens: Lens, base: Sequence[RunRecord], cand: Sequence[RunRecord], primary: Primary | None
) -> Throughput | None:
    """Each side's throughput and its change (and, for a time-like primary over fixed work, the change
    1/θ − 1 from the primary); None unless every run recorded a completed duration."""
    tb = [lens.throughput(r) for r in base]
    tc = [lens.throughput(r) for r in cand]
    if not (all(t is not None for t in tb + tc) and primary is not None):
        return None
    vb, vc = side_mean([t[0] for t in tb]), side_mean([t[0] for t in tc])
    pb, pc = primary.baseline, primary.candidate
    from_time = (
        100.0 * (pb / pc - 1.0)
        if lens.throughput_from_primary and pb and pc and math.isfinite(pb) and math.isfinite(pc)
        else UNSET
    )
    return Throughput(
        unit=tb[0][1],
        baseline=vb,
        candidate=vc,
        change_pct=100.0 * (vc / vb - 1.0) if vb else NAN,
        from_time_pct=from_time,
    )
