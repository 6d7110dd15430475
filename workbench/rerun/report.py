"""Comparison: an execution's runs turned into the paired B/A effect with its A/A control.

The unit is the run: each run is reduced to one value (the plan's statistic of its
metric, after warm-up); rounds in which A, B and A′ were all measured are analysed
paired by round (``workbench.stats.analyze``). Failed runs are counted and shown, never
dropped silently; a round with a failed arm is left out of the paired analysis and the
report says which. Works on a partial execution (live, or interrupted): the result is
then labelled partial. Guardrails are judged on arm means of per-run values (the lens
rule), beside the same rule applied to A′ against A as a noise reference.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from msgspec import UNSET, UnsetType

from lenses import builtin_lens
from lenses.base import GuardrailSpec
from store.records import SAMPLES, RunRecord
from workbench.compare.results import Effect
from workbench.rerun.comparison import (
    FORMAT,
    ArmFailures,
    DesignInfo,
    ExecutionInfo,
    GuardrailResult,
    PlanInfo,
    RerunReport,
    Rounds,
    RunRow,
    SequentialResult,
)
from workbench.rerun.plan import ARM_NAMES, ARMS, Plan
from workbench.stats import MIN_ROUNDS, Analysis, analyze, reduce_run, rounds_needed
from workbench.stats.sequential import CONTINUE, SequentialDesign, look
from workbench.stats.verdicts import DECIDED
from workbench.textsafe import clean

if TYPE_CHECKING:
    from store.api import Store
    from store.rerun import RerunExecution, RerunPlan, RerunRun
    from workbench.stats.sequential import Look

STDERR_SHOWN = 400  # characters of a failed run's stderr kept in the comparison
SCOPE = (
    "Scoped to this machine and session: the effect of B against A under these conditions. "
    "The A/A control (A′ against A) shows how much two runs of the same baseline differ."
)


class MeasuredRun(Protocol):
    """What the analysis reads of a run: a stored row, an executor outcome or a report row."""

    round: int
    arm: str
    slot: int
    status: str
    statistic: float | None
    run_id: int | None


ByRound = dict[int, dict[str, MeasuredRun]]


def run_statistic(record: RunRecord, plan: Plan) -> tuple[float | None, str]:
    """The plan's per-run value for one run, or (None, why not)."""
    values = (record.tables.get(SAMPLES) or {}).get(plan.metric)
    if values is None:
        return None, f"the capture has no {plan.metric!r} samples"
    values = np.asarray(values, dtype=np.float64)
    try:
        summary = reduce_run(values, warmup=plan.warmup.steps_to_drop(len(values)))
    except ValueError as exc:
        return None, f"{plan.metric}: {exc}"
    value = getattr(summary, plan.statistic)
    if value is None:
        return None, f"{plan.metric}: no {plan.statistic} ({summary.n} samples; p95 needs at least 72)"
    if not math.isfinite(value) or value <= 0:
        return None, f"{plan.metric}: {plan.statistic} is {value}, not a positive number"
    return float(value), ""


def paired_rounds(runs: Sequence[MeasuredRun]) -> tuple[list[int], ByRound]:
    """Rounds where every arm has an ``ok`` run with a value (the last such run counts)."""
    by_round: ByRound = {}
    for r in runs:
        if r.round >= 1 and r.status == "ok" and r.statistic is not None:
            by_round.setdefault(r.round, {})[r.arm] = r
    complete = sorted(k for k, arms in by_round.items() if all(a in arms for a in ARMS))
    return complete, by_round


def _value(by_round: ByRound, k: int, arm: str) -> float:
    value = by_round[k][arm].statistic
    assert value is not None  # paired_rounds keeps only runs with a value
    return value


def live_effect(runs: Sequence[MeasuredRun]) -> dict[str, float]:
    """Ratio of means over the rounds complete so far (for the progress display only):
    ``rounds``, and from one complete round ``b_over_a`` and ``aprime_over_a``."""
    complete, by_round = paired_rounds(runs)
    if not complete:
        return {"rounds": 0}
    mean = lambda arm: sum(_value(by_round, k, arm) for k in complete) / len(complete)  # noqa: E731
    return {"rounds": len(complete), "b_over_a": mean("B") / mean("A"), "aprime_over_a": mean("A'") / mean("A")}


@dataclass(frozen=True)
class SequentialLook:
    """The look after the rounds complete so far, for a plan with ``stopping = "sequential"``."""

    design: SequentialDesign
    look: "Look"
    rounds: list[int]
    sd_log: float

    @property
    def decided(self) -> bool:
        return self.look.decision != CONTINUE


def sequential_look(plan: Plan, runs: Sequence[MeasuredRun]) -> SequentialLook | None:
    """None for a fixed plan; else the current look over the paired rounds."""
    if plan.stopping != "sequential":
        return None
    return look_over(runs, rounds=plan.rounds, delta=plan.delta, higher_is_better=plan.higher_is_better, spending=plan.spending)


def look_over(runs: Sequence[MeasuredRun], *, rounds: int, delta: float, higher_is_better: bool, spending: str) -> SequentialLook:
    """The sequential look over the paired rounds of ``runs`` (time-like log ratios: for a
    higher-is-better metric the ratio is inverted, so > 1 is always worse)."""
    complete, by_round = paired_rounds(runs)
    sign = -1.0 if higher_is_better else 1.0
    log_ratio = lambda k, arm: sign * math.log(_value(by_round, k, arm) / _value(by_round, k, "A"))  # noqa: E731
    design = SequentialDesign(rounds, spending=spending)
    b = [log_ratio(k, "B") for k in complete]
    aa = [log_ratio(k, "A'") for k in complete]
    sd = statistics.stdev(b) if len(b) >= 2 else math.nan
    return SequentialLook(design, look(design, b, delta, aa), complete, sd)


def _analysis(plan: PlanInfo, rounds: list[int], by_round: ByRound) -> Analysis | None:
    """The fixed paired analysis of the rounds where A, B and A′ were all measured."""
    if len(rounds) < 2:
        return None
    a = [_value(by_round, k, "A") for k in rounds]
    b = [_value(by_round, k, "B") for k in rounds]
    ap = [_value(by_round, k, "A'") for k in rounds]
    slots = {arm: [by_round[k][arm].slot for k in rounds] for arm in ARMS}
    return analyze(a, b, ap, paired=True, delta=plan.delta, lower_is_better=not plan.higher_is_better, seed=plan.seed, slots=slots)


def reanalyze(body: Mapping[str, Any]) -> dict[str, Any]:
    """A stored comparison's verdict-bearing parts derived again from its per-run values
    (what ``wb evidence verify --recompute`` checks): analysis, verdict, flags, sequential.
    ``body`` is a bundle's JSON: it is decoded first (a bad shape raises, naming the place)."""
    report = RerunReport.from_json(body)
    p = report.plan
    rounds, by_round = paired_rounds(report.runs)
    analysis = _analysis(p, rounds, by_round)
    out: dict[str, Any] = {"analysis": analysis.to_json() if analysis else None,
                           "verdict": analysis.verdict if analysis else None,
                           "flags": list(analysis.flags) if analysis else []}
    if p.stopping == "sequential" and len(rounds) >= 2:
        assert p.spending is not None
        seq = look_over(report.runs, rounds=p.rounds, delta=p.delta, higher_is_better=p.higher_is_better, spending=p.spending)
        section = _sequential_section(p, seq, report.execution.status)
        out["sequential"] = section.to_json()
        out["verdict"] = section.verdict
    return out


def _sequential_section(plan: PlanInfo, seq: SequentialLook, status: str) -> SequentialResult:
    lk = seq.look
    delta, rounds = plan.delta, plan.rounds
    band = f"[{1 / (1 + delta):.4f}, {1 + delta:.4f}]"
    interval = f"[{lk.low95:.4f}, {lk.high95:.4f}]"
    if lk.round < seq.design.first_look:
        why = f"no look yet after {lk.round} of {rounds} rounds: the first look is after round {seq.design.first_look} ({status})"
    elif lk.decision == CONTINUE:
        why = (f"no decision after {lk.round} of {rounds} rounds: the repeated 95 % interval {interval} "
               f"still overlaps the band {band} ({status})")
    elif lk.aa_unstable and lk.decision not in DECIDED:
        why = f"ran all {rounds} rounds: the A/A control stayed unstable, so no verdict is given"
    elif lk.round < rounds:
        why = f"stopped after round {lk.round} of {rounds}: the repeated 95 % interval {interval} decides {lk.decision} against the band {band}"
    else:
        why = f"ran all {rounds} rounds: repeated 95 % interval {interval} against the band {band}"
    fixed = rounds_needed(seq.sd_log, delta, paired=True) if math.isfinite(seq.sd_log) else None
    d = seq.design
    return SequentialResult(
        design=DesignInfo(stopping="sequential", max_rounds=d.max_rounds, alpha=d.alpha, spending=d.spending, first_look=d.first_look),
        stopped_at_round=lk.round if lk.decision != CONTINUE else None,
        decision=lk.decision,
        why=why,
        # Before the first look, or with an unbounded interval, the bounds are unknown (null), never NaN.
        ratio=_finite(lk.ratio),
        repeated_ci95=(_finite(lk.low95), _finite(lk.high95)),
        aa_unstable=lk.aa_unstable,
        fixed_design_rounds=fixed,
        method="group-sequential, Lan–DeMets spending; repeated confidence intervals on the mean per-round log ratio (docs/methods.md)",
    )


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _failures(runs: Sequence[RunRow]) -> dict[str, ArmFailures]:
    out: dict[str, ArmFailures] = {}
    for arm in ARMS:
        mine = [r for r in runs if r.arm == arm and r.round >= 1 and r.status in ("ok", "failed")]
        failed = [r for r in mine if r.status == "failed"]
        reasons: dict[str, int] = {}
        for r in failed:
            reasons[r.reason] = reasons.get(r.reason, 0) + 1
        out[arm] = ArmFailures(finished=len(mine), failed=len(failed), reasons=reasons)
    return out


def _guardrail_values(store: "Store", plan: Plan, run_ids: dict[str, list[int]]) -> dict[str, dict[str, list[float]]]:
    """metric -> arm -> per-run values (NaN where the run does not say)."""
    lens = builtin_lens(plan.lens)
    values: dict[str, dict[str, list[float]]] = {g.metric: {arm: [] for arm in ARMS} for g in plan.guardrails}
    for arm, ids in run_ids.items():
        for run_id in ids:
            record = store.load_run(run_id)
            for metric in values:
                v = lens.guardrail_value(record, metric)
                col = (record.tables.get(SAMPLES) or {}).get(metric)
                if not math.isfinite(v) and col is not None and np.isfinite(col).any():
                    v = float(np.nanmean(col))  # a sample column: its per-run mean
                values[metric][arm].append(v)
    return values


def _judge_guardrails(store: "Store", plan: Plan, rounds: list[int], by_round: ByRound) -> tuple[GuardrailResult, ...]:
    if not plan.guardrails:
        return ()
    run_ids = {arm: [rid for k in rounds if (rid := by_round[k][arm].run_id) is not None] for arm in ARMS}
    values = _guardrail_values(store, plan, run_ids)
    out = []
    for g in plan.guardrails:
        spec = GuardrailSpec(g.name or g.metric, g.name or g.metric, g.metric, g.rule, g.limit)
        per_arm = values[g.metric]
        means = {arm: _finite_mean(v) for arm, v in per_arm.items()}
        status = spec.judge(means["A"], means["B"]) if rounds else "unknown"
        control = spec.judge(means["A"], means["A'"]) if rounds else "unknown"
        why = None
        if status == "unknown":
            why = f"no run reported {g.metric!r}" if rounds else "no complete rounds"
        elif control == "broken":
            why = "A′ against A breaks it too: the guardrail is within this session's noise"
        out.append(GuardrailResult(
            name=g.name or g.metric, metric=g.metric, rule=g.rule, limit=g.limit, source=g.source, status=status,
            means={arm: (m if math.isfinite(m) else None) for arm, m in means.items()},
            runs_with_value={arm: sum(math.isfinite(x) for x in v) for arm, v in per_arm.items()},
            control_status=control, why=why,
        ))
    return tuple(out)


def _finite_mean(values: list[float]) -> float:
    kept = [v for v in values if math.isfinite(v)]
    return sum(kept) / len(kept) if kept else math.nan


def _run_row(r: "RerunRun") -> RunRow:
    return RunRow(
        round=r.round, arm=r.arm, slot=r.slot, status=r.status, reason=r.reason, started_at=r.started_at,
        wall_s=r.wall_s, exit_status=r.exit_status, run_id=r.run_id, statistic=r.statistic,
        # What a failed run said last (untrusted text: cleaned before display).
        stderr_tail=r.stderr_tail[-STDERR_SHOWN:] if r.status == "failed" and r.stderr_tail else None,
    )


def build_comparison(store: "Store", plan_row: "RerunPlan", execution_row: "RerunExecution", runs: Sequence["RerunRun"]) -> RerunReport:
    """The comparison of one execution (see ``docs/verify.md``)."""
    plan = Plan.from_json(plan_row.body)
    rows = tuple(_run_row(r) for r in runs)
    rounds, by_round = paired_rounds(rows)
    failures = _failures(rows)
    finished_rounds = {r.round for r in rows if r.round >= 1 and r.status in ("ok", "failed")}
    incomplete = sorted(k for k in finished_rounds if k not in rounds)
    sequential = plan.stopping != "fixed"
    info = PlanInfo(
        id=int(plan_row.id), name=plan.name, digest=plan_row.digest, lens=plan.lens,  # type: ignore[arg-type]
        metric=plan.metric, statistic=plan.statistic, higher_is_better=plan.higher_is_better,
        rounds=plan.rounds, order=plan.order, seed=plan.seed, delta=plan.delta, warmup=plan.warmup,
        stopping=plan.stopping if sequential else None, spending=plan.spending if sequential else None,
    )
    notes = []
    for arm in ARMS:
        f = failures[arm]
        if f.failed:
            why = "; ".join(f"{n}× {reason}" for reason, n in f.reasons.items())
            notes.append(f"{arm} ({ARM_NAMES[arm]}): {f.failed} of {f.finished} runs failed: {why}")
    if incomplete:
        notes.append(f"rounds {', '.join(map(str, incomplete))} left out of the paired analysis: an arm failed or has no value")

    analysis = _analysis(info, rounds, by_round)
    if analysis is not None:
        verdict, flags, reason = analysis.verdict, tuple(analysis.flags), analysis.reason
    else:
        verdict, flags = None, ()
        reason = f"no comparison: {len(rounds)} round(s) with A, B and A′ all measured (a verdict needs at least {MIN_ROUNDS})"
    section = None
    seq = sequential_look(plan, rows)
    if seq is not None and len(rounds) >= 2:
        # The fixed analysis keeps its intervals for reading, but its nominal levels
        # do not hold after repeated looks: the verdict is the sequential design's.
        section = _sequential_section(info, seq, execution_row.status)
        verdict, reason = section.verdict, section.why
    return RerunReport(
        format=FORMAT,
        plan=info,
        execution=ExecutionInfo(
            id=int(execution_row.id), status=execution_row.status, host=execution_row.host,  # type: ignore[arg-type]
            started_at=execution_row.started_at, ended_at=execution_row.ended_at, workdir=execution_row.workdir,
        ),
        partial=execution_row.status != "complete",
        rounds=Rounds(planned=plan.rounds, used=tuple(rounds), left_out=tuple(incomplete)),
        runs=rows,
        failures=failures,
        scope=SCOPE,
        notes=tuple(notes),
        analysis=Effect.from_json(analysis.to_json()) if analysis else None,
        verdict=verdict,
        flags=flags,
        reason=reason,
        sequential=section,
        guardrails=_judge_guardrails(store, plan, rounds, by_round),
    )


def digest_of(report: RerunReport) -> str:
    """SHA-256 of the stored comparison document: an identical analysis is stored once."""
    return hashlib.sha256(json.dumps(report.stored().to_json(), sort_keys=True, default=str).encode()).hexdigest()


def save_comparison(store: "Store", plan_id: int, execution_id: int, report: RerunReport) -> int:
    """Store the comparison (once per distinct result) and return its id."""
    from sqlmodel import select  # SQLModel/SQLAlchemy: heavy, loaded when a comparison is stored

    from store.rerun import RerunComparison  # SQLModel tables: heavy, loaded when a comparison is stored

    body = report.stored().to_json()
    digest = digest_of(report)
    with store.session() as s:
        existing = s.exec(select(RerunComparison).where(RerunComparison.execution_id == execution_id, RerunComparison.digest == digest)).first()
        if existing is not None:
            return int(existing.id)  # type: ignore[arg-type]
        row = RerunComparison(
            plan_id=plan_id, execution_id=execution_id, rounds_used=len(report.rounds.used),
            verdict=report.verdict, digest=digest, body=body,
        )
        s.add(row)
        s.flush()
        return int(row.id)  # type: ignore[arg-type]


# -- text ---------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "unknown" if x is None else f"{x:+.2f} %"


def _known(x: float | None | UnsetType) -> float | None:
    return None if x is UNSET else x  # type: ignore[return-value]


def format_comparison(report: RerunReport | Mapping[str, Any], width: int = 80) -> list[str]:
    """The comparison as plain lines for an 80-column terminal (untrusted text cleaned):
    the one renderer of a rerun comparison, fresh or stored (a stored body is decoded)."""
    r = report if isinstance(report, RerunReport) else RerunReport.from_json(report)
    wrap = lambda text, indent="  ": textwrap.wrap(clean(text), width, initial_indent=indent, subsequent_indent=indent + "  ")  # noqa: E731
    p, e = r.plan, r.execution
    lines = [f"Plan {p.id} {clean(p.name)} · execution {e.id} ({e.status}) · {p.lens} lens"]
    lines += wrap(f"metric: per-run {p.statistic} of {p.metric} ({'higher' if p.higher_is_better else 'lower'} is better); "
                  f"rounds used {len(r.rounds.used)} of {p.rounds} planned; order {p.order}, seed {p.seed}")
    if r.partial:
        lines += wrap("PARTIAL: the execution is not complete; this is the result so far.")
    a = r.analysis
    if a is not None:
        m = a.means or {}
        a_prime = m["A'"]
        lines.append(f"  means per run: A {m['A']:.4g}  B {m['B']:.4g}  A′ {a_prime:.4g}")
        lines.append(f"  B/A effect θ {a.ratio:.4f}: time {_pct(_known(a.time_change_pct))}, "
                     f"throughput {_pct(_known(a.throughput_change_pct))}")
        for iv in a.intervals or ():
            lo, hi = iv.low, iv.high
            rng = f"[{lo:.4f}, {hi:.4f}]" if lo is not None and hi is not None else "unbounded"
            lines.append(f"    {int(round(iv.level * 100))} % {clean(iv.method)}: {rng}"[:width])
        aa = a.aa
        if aa:
            lines.append(f"  A/A control A′/A {aa.ratio:.4f}; noise floor (SD of log ratios) {aa.noise_floor_sd_log:.4f}")
            lines.append(f"    resolution ±{aa.resolution_pct:.2f} %, MDE {aa.mde_pct:.2f} %")
        plan_info = a.planning or None
        if plan_info and plan_info.rounds_needed:
            lines += wrap(f"rounds that would resolve δ = {p.delta * 100:g} %: {plan_info.rounds_needed} "
                          f"(equivalence: {plan_info.rounds_needed_equivalence})")
        for arm, d in (a.drift or {}).items():
            if d and d.p is not None and d.p < 0.05:
                lines += wrap(f"drift in {arm}: {d.pct_per_slot or 0:+.3f} % per slot (p {d.p:.3g})")
        for arm, idx in (a.outliers or {}).items():
            lines += wrap(f"outlier runs in {arm} (modified z > 3.5, kept): rounds {', '.join(str(r.rounds.used[i]) for i in idx)}")
    seq = r.sequential
    if seq is not None:
        fixed = seq.fixed_design_rounds
        lo95, hi95 = seq.repeated_ci95
        lines += wrap(f"sequential stopping ({seq.design.spending} spending, α {seq.design.alpha:g} over every look): "
                      f"θ {_num(seq.ratio)}, repeated 95 % interval [{_num(lo95)}, {_num(hi95)}]"
                      + (f"; a fixed design would need about {fixed} rounds at this noise" if fixed else ""))
    verdict = r.verdict or "NO VERDICT"
    flags = f"  [{', '.join(r.flags)}]" if r.flags else ""
    lines.append(f"Verdict: {verdict}{flags}")
    lines += wrap(r.reason)
    for g in r.guardrails:
        lines += wrap(f"guardrail {g.name} ({g.rule} {g.limit:g}, {g.source}): {g.status}" + (f" — {g.why}" if g.why else ""))
    for note in r.notes:
        lines += wrap(note)
    shown: set[str] = set()
    for run in r.runs:  # the last stderr line of the first failed run of each arm
        if run.status == "failed" and run.stderr_tail and run.arm not in shown:
            shown.add(run.arm)
            last = [x for x in run.stderr_tail.splitlines() if x.strip()][-1:] or [""]
            lines += wrap(f"{run.arm} round {run.round} stderr: {last[0]}", "    ")
    lines += wrap(r.scope)
    return lines


def _num(x: float | None) -> str:
    return "unknown" if x is None or not math.isfinite(x) else f"{x:.4f}"
