"""Comparison: an execution's runs turned into the paired B/A effect with its A/A control.

The unit is the run: each run is reduced to one value (the plan's statistic of its
metric, after warm-up); rounds in which A, B and A′ were all measured are analysed
paired by round (``workbench.stats.analyze``). Failed runs are counted and shown, never
dropped silently; a round with a failed arm is left out of the paired analysis and the
report says which. Works on a partial execution (live, or interrupted): the result is
then labelled partial. Guardrails are judged on arm means of per-run values (the lens
rule), beside the same rule applied to A′ against A as a noise reference.

Before any verdict, the contract of ``wb compare`` (``workbench.compare.contract``) is
kept on the captures of the runs: a must-match difference between A and B other than
the plan's declared change refuses the verdict (REFUSED, with compare's way out); runs of
one arm that disagree refuse it; A′ that is not the baseline again makes the session
UNSTABLE; where the valid work per item differs, the verdict is on throughput (work per
second), never the time alone; a stated guardrail that cannot be judged withholds
IMPROVEMENT.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

import numpy as np
import msgspec
from msgspec import UNSET, UnsetType

from lenses import builtin_lens
from lenses.base import GuardrailSpec, Lens
from store.records import SAMPLES, RunRecord
from workbench.numbers import fixed, signed_percent, significant
from workbench.compare import contract
from workbench.compare.results import Effect, Refusal, Work
from workbench.rerun.comparison import (
    Arm,
    RunStatus,
    FORMAT,
    ArmFailures,
    Basis,
    DesignInfo,
    DimensionCheck,
    ExecutionInfo,
    GuardrailResult,
    PlanInfo,
    RerunReport,
    Rounds,
    RunRow,
    SequentialResult,
)
from workbench.bundle.schema import RerunSource
from workbench.rerun.plan import ARM_NAMES, ARMS, DEFAULT_METRIC, Plan, schedule, warmup_slots
from workbench.stats import MIN_ROUNDS, Analysis, analyze, control, reduce_run, rounds_needed
from workbench.stats.sequential import CONTINUE, SequentialDesign, look
from workbench.stats.verdicts import DECIDED, Flag, Verdict
from workbench.textsafe import clean
from workbench.vocabulary import JSONDoc

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
    """What the analysis reads of a run: a stored row, an executor outcome or a report row (read only:
    a report row's arm and status are narrower words than a stored row's text)."""

    @property
    def round(self) -> int: ...
    @property
    def arm(self) -> str: ...
    @property
    def slot(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def statistic(self) -> float | None: ...
    @property
    def run_id(self) -> int | None: ...


ByRound = dict[int, dict[str, MeasuredRun]]
LoadRun = Callable[[int], RunRecord]  # a run by its id: the store's, or a bundle's rebuilt run


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
    """Rounds where every arm's last finished run (in the order run) is ``ok`` with a value.

    A round an interruption split is run again whole after the resume (``execute.split_round``):
    its later runs replace the earlier ones, and a later run that failed leaves the round
    out rather than falling back on a run from before the interruption."""
    last: dict[int, dict[str, MeasuredRun]] = {}
    for r in runs:
        if r.round >= 1 and r.status in ("ok", "failed"):
            last.setdefault(r.round, {})[r.arm] = r
    by_round: ByRound = {
        k: {arm: r for arm, r in arms.items() if r.status == "ok" and r.statistic is not None}
        for k, arms in last.items()
    }
    complete = sorted(k for k, arms in by_round.items() if all(a in arms for a in ARMS))
    return complete, by_round


def rerun_rounds(runs: Sequence[MeasuredRun]) -> dict[int, int]:
    """Rounds with runs that were run again (a round split by an interruption), and how many
    finished runs of each were superseded."""
    seen: dict[tuple[int, str], int] = {}
    for r in runs:
        if r.round >= 1 and r.status in ("ok", "failed"):
            seen[(r.round, r.arm)] = seen.get((r.round, r.arm), 0) + 1
    out: dict[int, int] = {}
    for (k, _), n in seen.items():
        if n > 1:
            out[k] = out.get(k, 0) + n - 1
    return dict(sorted(out.items()))


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
    return look_over(
        runs, rounds=plan.rounds, delta=plan.delta, higher_is_better=plan.higher_is_better, spending=plan.spending
    )


def look_over(
    runs: Sequence[MeasuredRun], *, rounds: int, delta: float, higher_is_better: bool, spending: str
) -> SequentialLook:
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
    slots: dict[str, Sequence[float]] = {arm: [by_round[k][arm].slot for k in rounds] for arm in ARMS}
    return analyze(
        a, b, ap, paired=True, delta=plan.delta, lower_is_better=not plan.higher_is_better, seed=plan.seed, slots=slots
    )


def reanalyze(source: "Mapping[str, object] | RerunSource") -> dict[str, object]:
    """What ``wb evidence verify --recompute`` derives again of a carried rerun comparison.

    A :class:`~workbench.bundle.schema.RerunSource` (a bundle of format 1.1: the plan, the run
    log and the arms' runs): the whole stored comparison, rebuilt (:func:`rebuild`). A stored
    body (older callers): its verdict-bearing parts from its per-run values (analysis,
    verdict, flags, sequential); it is decoded first (a bad shape raises, naming the place)."""
    if isinstance(source, RerunSource):
        return rebuild(source)
    report = RerunReport.from_json(source)
    if report.refusal is not None:  # refused by the contract: no analysis, no verdict
        return {"analysis": None, "verdict": None, "flags": []}
    p = _judged_plan(report.plan, report.basis)
    runs = _judged_runs(report.runs, report.basis)
    rounds, by_round = paired_rounds(runs)
    analysis = _analysis(p, rounds, by_round)
    verdict, flags = _words(analysis)
    sequential: JSONDoc | None = None
    if p.stopping == "sequential" and len(rounds) >= 2:
        assert p.spending is not None
        seq = look_over(runs, rounds=p.rounds, delta=p.delta, higher_is_better=p.higher_is_better, spending=p.spending)
        section = _sequential_section(p, seq, report.execution.status)
        sequential = section.to_json()
        verdict = section.verdict
    verdict, flags, _ = _kept(verdict, flags, "", report.control_mismatch, report.guardrails)
    out: dict[str, object] = {
        "analysis": analysis.to_json() if analysis else None,
        "verdict": verdict,
        "flags": list(flags),
    }
    if sequential is not None:
        out["sequential"] = sequential
    return out


CUT_SHORT = "cut short"  # a "complete" execution whose log ends before its schedule does


def rebuild(source: RerunSource) -> dict[str, object]:
    """A carried rerun comparison rebuilt whole from what made it: the plan, the execution and
    its run log as they were, each run's statistic from the arm's run, then the same
    :func:`assemble` that stored it. An execution stated ``complete`` whose log has not run
    its schedule (nor reached a sequential decision) is rebuilt as :data:`CUT_SHORT`.
    ``KeyError`` names a logged run the bundle does not carry."""
    plan = Plan.from_json(source.plan.body)
    by_id: dict[int, RunRecord] = {}
    rows = []
    for entry in source.inputs.runs:
        record = None
        if entry.run is not None:
            record = source.records[entry.run]  # KeyError: the run is not in the bundle
            if record.id is None:
                raise KeyError(f"{entry.run} has no id")
            by_id[record.id] = record
        statistic = run_statistic(record, plan)[0] if record is not None and entry.status == "ok" else None
        rows.append(
            RunRow(
                round=entry.round,
                arm=entry.arm,
                slot=entry.slot,
                status=entry.status,
                reason=entry.reason,
                started_at=entry.started_at,
                wall_s=entry.wall_s,
                exit_status=entry.exit_status,
                run_id=None if record is None else record.id,
                statistic=statistic,
                stderr_tail=entry.stderr_tail[-STDERR_SHOWN:]
                if entry.status == "failed" and entry.stderr_tail
                else None,
            )
        )
    e = source.inputs.execution
    if e is None:
        raise KeyError(f"{source.inputs.ref}'s execution")
    status = e.status if e.status != "complete" or _ran_to_the_end(plan, rows) else CUT_SHORT
    execution = ExecutionInfo(
        id=e.id, status=status, host=e.host, started_at=e.started_at, ended_at=e.ended_at, workdir=e.workdir
    )
    report = assemble(source.plan.id, source.plan.digest, plan, execution, tuple(rows), by_id.__getitem__)
    return report.stored().to_json()


def _ran_to_the_end(plan: Plan, rows: Sequence[RunRow]) -> bool:
    """Whether the log can be a complete execution's: every slot of the schedule (warm-up
    first) finished, or the sequential look decided on the runs it has."""
    finished = {r.slot for r in rows if r.status in ("ok", "failed")}
    if all(i in finished for i in range(len(warmup_slots(plan)) + len(schedule(plan)))):
        return True
    look = sequential_look(plan, rows)
    return look is not None and look.decided


# -- the contract of wb compare, on the arms' captures --------------------------------


def _judged_plan(plan: PlanInfo, basis: Basis | None) -> PlanInfo:
    """The plan as the analysis reads it: on throughput, higher is better."""
    return plan if basis is None else msgspec.structs.replace(plan, higher_is_better=True)


def _judged_runs(runs: Sequence[RunRow], basis: Basis | None) -> tuple[RunRow, ...]:
    """The runs as the analysis reads them: on throughput, each run's work per second."""
    if basis is None:
        return tuple(runs)
    return tuple(msgspec.structs.replace(r, statistic=r.throughput) for r in runs)


def _words(analysis: Analysis | None) -> tuple[Verdict | None, tuple[Flag, ...]]:
    """The analysis's verdict and flags (its fields say str: they hold these words), none without one."""
    if analysis is None:
        return None, ()
    return Verdict(analysis.verdict), tuple(Flag(f) for f in analysis.flags)


def _kept(
    verdict: Verdict | None,
    flags: tuple[Flag, ...],
    reason: str,
    control_mismatch: str | None,
    guardrails: Sequence[GuardrailResult],
) -> tuple[Verdict | None, tuple[Flag, ...], str]:
    """The verdict under the contract: UNSTABLE when A′ is not the baseline again; a
    positive verdict withheld while a stated (plan or frame) guardrail is unknown."""
    if control_mismatch is not None and verdict is not None:
        verdict = Verdict.INCONCLUSIVE
        flags = flags if Flag.UNSTABLE in flags else (*flags, Flag.UNSTABLE)
        reason = f"UNSTABLE: A′ is not the baseline again ({control_mismatch}): no verdict from this session"
    unknown = [g.name for g in guardrails if g.status == "unknown" and not g.source.startswith("lens:")]
    withheld, why = contract.withhold(verdict, unknown)
    if why:
        verdict, reason = Verdict(withheld), f"{reason}; {why}" if reason else why
    return verdict, flags, reason


class _Contract(msgspec.Struct, frozen=True, kw_only=True):
    dimensions: tuple[DimensionCheck, ...] = ()
    refusal: Refusal | None = None
    control_mismatch: str | None = None
    work: Work | None = None
    basis: Basis | None = None
    throughput: dict[int, float | None] = {}  # run id -> work per second (when judged on throughput)


def _plan_refusal(refusal: Refusal) -> Refusal:
    """Compare's refusal with its way out in the plan's words (``wb rerun plan``'s options)."""
    reason = refusal.reason.replace("; to compare anyway: ", "; to compare anyway, in a new plan: ")
    return msgspec.structs.replace(refusal, reason=reason)


def _per_second(lens: Lens, plan: Plan, record: RunRecord, statistic: float | None) -> float | None:
    """A run's work per second: work per item over the statistic's time per item where the
    metric is the lens's time per item of fixed work (step time), else the run's own."""
    if plan.higher_is_better:
        return statistic  # the metric is already a rate
    item = lens.work_per_item(record)
    if lens.throughput_from_primary and plan.metric == DEFAULT_METRIC.get(plan.lens) and item and statistic:
        return item.value / (statistic / 1000.0)
    rate = lens.throughput(record)
    return rate[0] if rate is not None and math.isfinite(rate[0]) and rate[0] > 0 else None


def _check_contract(load: LoadRun, plan: Plan, rounds: list[int], by_round: ByRound) -> _Contract:
    """Compare's rules on the runs of the rounds used: dimensions, work, throughput."""
    if not rounds:
        return _Contract()
    try:
        lens = builtin_lens(plan.lens)
    except KeyError:
        return _Contract()
    runs = {arm: [by_round[k][arm] for k in rounds] for arm in ARMS}
    if any(r.run_id is None for arm in ARMS for r in runs[arm]):
        return _Contract()
    records = {arm: [load(r.run_id) for r in runs[arm]] for arm in ARMS}  # type: ignore[arg-type]
    check, accepts = contract.session_pair(lens, records["A"], records["B"], plan.changes, plan.accept)
    dims = tuple(
        DimensionCheck(
            name=r.name,
            state=r.state,
            must_match=r.must_match,
            baseline=r.baseline.value,
            candidate=r.candidate.value,
            note=r.note or None,
            declared_change=r.declared_change,
            accepted=r.accepted_why,
        )
        for r in check.rows
    )
    mismatch = contract.control_mismatch(lens, records["A"], records["A'"], accepts)
    work = contract.work(lens, records["A"], records["B"])
    refusal = check.refusal or _control_refusal(lens, mismatch)
    if refusal is not None:
        return _Contract(dimensions=dims, refusal=_plan_refusal(refusal), work=work)
    why_control = mismatch[1] if mismatch else None
    if work.same is not False:
        return _Contract(dimensions=dims, control_mismatch=why_control, work=work)
    rates = {
        int(r.run_id): _per_second(lens, plan, rec, r.statistic)  # type: ignore[arg-type]
        for arm in ARMS
        for r, rec in zip(runs[arm], records[arm])
    }
    basis = _throughput_basis(lens, work, records["A"] + records["B"])
    return _Contract(dimensions=dims, control_mismatch=why_control, work=work, basis=basis, throughput=rates)


def _control_refusal(lens: Lens, mismatch: tuple[str, str] | None) -> Refusal | None:
    """Runs of the A′ arm that disagree with each other on a must-match dimension: the arm is not one arm."""
    if mismatch is None or not mismatch[1].startswith(f"{mismatch[0]}: runs disagree"):
        return None
    dimension = lens.dimension(mismatch[0])
    if dimension is None or not dimension.must_match:
        return None
    return Refusal(dimension=mismatch[0], reason=f"the A′ arm disagrees with itself on {mismatch[1]}")


def _throughput_basis(lens: Lens, work: Work, records: list[RunRecord]) -> Basis:
    """The verdict on throughput (work per second) when the valid work per item differs."""
    units = {rate[1] for rec in records if (rate := lens.throughput(rec)) is not None}
    unit = units.pop() if len(units) == 1 else f"{work.unit or lens.work_unit}/s"
    name = work.per_item.name if work.per_item is not UNSET else "work per item"
    return Basis(
        metric="throughput",
        unit=unit,
        why=f"the valid work per item differs ({name}): the verdict is on throughput (work per second), never the time "
        f"alone",
    )


def _sequential_section(plan: PlanInfo, seq: SequentialLook, status: str) -> SequentialResult:
    lk = seq.look
    delta, rounds = plan.delta, plan.rounds
    band = f"[{1 / (1 + delta):.4f}, {1 + delta:.4f}]"
    interval = f"[{lk.low95:.4f}, {lk.high95:.4f}]"
    if lk.round < seq.design.first_look:
        why = (
            f"no look yet after {lk.round} of {rounds} rounds: the first look is after round {seq.design.first_look} "
            f"({status})"
        )
    elif lk.decision == CONTINUE:
        why = (
            f"no decision after {lk.round} of {rounds} rounds: the repeated 95 % interval {interval} "
            f"still overlaps the band {band} ({status})"
        )
    elif lk.aa_unstable and lk.decision not in DECIDED:
        why = f"ran all {rounds} rounds: the A/A control stayed unstable, so no verdict is given"
    elif lk.round < rounds:
        why = (
            f"stopped after round {lk.round} of {rounds}: the repeated 95 % interval {interval} decides "
            f"{lk.decision} against the band {band}"
        )
    else:
        why = f"ran all {rounds} rounds: repeated 95 % interval {interval} against the band {band}"
    if lk.widened is not None:
        why += f"; {control.explain(seq.design.alpha / control.STRICTER, lk.widened)}"
    design_rounds = rounds_needed(seq.sd_log, delta, paired=True) if math.isfinite(seq.sd_log) else None
    d = seq.design
    return SequentialResult(
        design=DesignInfo(
            stopping="sequential", max_rounds=d.max_rounds, alpha=d.alpha, spending=d.spending, first_look=d.first_look
        ),
        stopped_at_round=lk.round if lk.decision != CONTINUE else None,
        decision=lk.decision,
        why=why,
        # Before the first look, or with an unbounded interval, the bounds are unknown (null), never NaN.
        ratio=_finite(lk.ratio),
        repeated_ci95=(_finite(lk.low95), _finite(lk.high95)),
        aa_unstable=lk.aa_unstable,
        fixed_design_rounds=design_rounds,
        method="group-sequential, Lan–DeMets spending; repeated confidence intervals on the mean per-round log ratio "
        "(docs/methods.md)",
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


def _guardrail_values(load: LoadRun, plan: Plan, run_ids: dict[str, list[int]]) -> dict[str, dict[str, list[float]]]:
    """metric -> arm -> per-run values (NaN where the run does not say)."""
    lens = builtin_lens(plan.lens)
    values: dict[str, dict[str, list[float]]] = {g.metric: {arm: [] for arm in ARMS} for g in plan.guardrails}
    for arm, ids in run_ids.items():
        for run_id in ids:
            record = load(run_id)
            for metric in values:
                v = lens.guardrail_value(record, metric)
                col = (record.tables.get(SAMPLES) or {}).get(metric)
                if not math.isfinite(v) and col is not None and np.isfinite(col).any():
                    v = float(np.nanmean(col))  # a sample column: its per-run mean
                values[metric][arm].append(v)
    return values


def _judge_guardrails(load: LoadRun, plan: Plan, rounds: list[int], by_round: ByRound) -> tuple[GuardrailResult, ...]:
    if not plan.guardrails:
        return ()
    run_ids = {arm: [rid for k in rounds if (rid := by_round[k][arm].run_id) is not None] for arm in ARMS}
    values = _guardrail_values(load, plan, run_ids)
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
        out.append(
            GuardrailResult(
                name=g.name or g.metric,
                metric=g.metric,
                rule=g.rule,
                limit=g.limit,
                source=g.source,
                status=status,
                means={arm: (m if math.isfinite(m) else None) for arm, m in means.items()},
                runs_with_value={arm: sum(math.isfinite(x) for x in v) for arm, v in per_arm.items()},
                control_status=control,
                why=why,
            )
        )
    return tuple(out)


def _finite_mean(values: list[float]) -> float:
    kept = [v for v in values if math.isfinite(v)]
    return sum(kept) / len(kept) if kept else math.nan


def _run_row(r: "RerunRun") -> RunRow:
    return RunRow(
        # The store's columns are plain text; a stored report is checked against these words when decoded.
        round=r.round,
        arm=cast(Arm, r.arm),
        slot=r.slot,
        status=cast(RunStatus, r.status),
        reason=r.reason,
        started_at=r.started_at,
        wall_s=r.wall_s,
        exit_status=r.exit_status,
        run_id=r.run_id,
        statistic=r.statistic,
        # What a failed run said last (untrusted text: cleaned before display).
        stderr_tail=r.stderr_tail[-STDERR_SHOWN:] if r.status == "failed" and r.stderr_tail else None,
    )


def build_comparison(
    store: "Store", plan_row: "RerunPlan", execution_row: "RerunExecution", runs: Sequence["RerunRun"]
) -> RerunReport:
    """The comparison of one execution (see ``docs/verify.md``)."""
    execution = ExecutionInfo(
        id=int(execution_row.id),  # type: ignore[arg-type]
        status=execution_row.status,
        host=execution_row.host,
        started_at=execution_row.started_at,
        ended_at=execution_row.ended_at,
        workdir=execution_row.workdir,
    )
    plan = Plan.from_json(plan_row.body)
    plan_id = int(plan_row.id)  # type: ignore[arg-type]
    return assemble(plan_id, plan_row.digest, plan, execution, tuple(_run_row(r) for r in runs), store.load_run)


def assemble(
    plan_id: int, plan_digest: str, plan: Plan, execution: ExecutionInfo, rows: tuple[RunRow, ...], load: LoadRun
) -> RerunReport:
    """The comparison of an execution's logged runs, the arms' runs read with ``load`` (the
    store's, or the runs a bundle carries for ``wb evidence verify --recompute``)."""
    rounds, by_round = paired_rounds(rows)
    failures = _failures(rows)
    finished_rounds = {r.round for r in rows if r.round >= 1 and r.status in ("ok", "failed")}
    incomplete = sorted(finished_rounds - set(rounds))  # a set: 10,000 rounds are not 10^8 list scans
    sequential = plan.stopping != "fixed"
    info = PlanInfo(
        id=plan_id,
        name=plan.name,
        digest=plan_digest,
        lens=plan.lens,
        metric=plan.metric,
        statistic=plan.statistic,
        higher_is_better=plan.higher_is_better,
        rounds=plan.rounds,
        order=plan.order,
        seed=plan.seed,
        delta=plan.delta,
        warmup=plan.warmup,
        stopping=plan.stopping if sequential else None,
        spending=plan.spending if sequential else None,
    )
    notes = []
    for arm in ARMS:
        f = failures[arm]
        if f.failed:
            why = "; ".join(f"{n}× {reason}" for reason, n in f.reasons.items())
            notes.append(f"{arm} ({ARM_NAMES[arm]}): {f.failed} of {f.finished} runs failed: {why}")
    if incomplete:
        notes.append(
            f"rounds {', '.join(map(str, incomplete))} left out of the paired analysis: an arm failed or has no value"
        )
    split = rerun_rounds(rows)
    if split:
        notes.append(
            f"round(s) {', '.join(map(str, split))} split by an interruption: run again whole after the resume "
            f"({sum(split.values())} earlier run(s) kept in the record, not analysed)"
        )

    kept = _check_contract(load, plan, rounds, by_round)
    if kept.basis is not None:
        rows = tuple(
            msgspec.structs.replace(r, throughput=kept.throughput.get(r.run_id)) if r.run_id is not None else r
            for r in rows
        )
    judged = _judged_runs(rows, kept.basis)
    judged_rounds, judged_by_round = paired_rounds(judged)
    analysis = (
        _analysis(_judged_plan(info, kept.basis), judged_rounds, judged_by_round) if kept.refusal is None else None
    )
    verdict, flags = _words(analysis)
    if kept.refusal is not None:
        reason = f"REFUSED: {kept.refusal.reason}"
    elif analysis is not None:
        reason = analysis.reason
    else:
        reason = (
            f"no comparison: {len(judged_rounds)} round(s) with A, B and A′ all measured (a verdict needs at "
            f"least {MIN_ROUNDS})"
        )
    section = None
    seq = sequential_look(plan, judged) if kept.refusal is None else None
    if seq is not None and kept.basis is not None:
        seq = look_over(judged, rounds=plan.rounds, delta=plan.delta, higher_is_better=True, spending=plan.spending)
    if seq is not None and len(judged_rounds) >= 2:
        # The fixed analysis keeps its intervals for reading, but its nominal levels
        # do not hold after repeated looks: the verdict is the sequential design's.
        section = _sequential_section(_judged_plan(info, kept.basis), seq, execution.status)
        verdict, reason = section.verdict, section.why
    guardrails = _judge_guardrails(load, plan, rounds, by_round)
    verdict, flags, reason = _kept(verdict, flags, reason, kept.control_mismatch, guardrails)
    if kept.basis is not None and kept.refusal is None:
        reason = f"{kept.basis.why}; {reason}"
    return RerunReport(
        format=FORMAT,
        plan=info,
        execution=execution,
        partial=execution.status != "complete",
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
        guardrails=guardrails,
        dimensions=kept.dimensions,
        refusal=kept.refusal,
        control_mismatch=kept.control_mismatch,
        work=kept.work,
        basis=kept.basis,
    )


def digest_of(report: RerunReport) -> str:
    """SHA-256 of the stored comparison document: an identical analysis is stored once."""
    return hashlib.sha256(json.dumps(report.stored().to_json(), sort_keys=True, default=str).encode()).hexdigest()


def save_comparison(store: "Store", plan_id: int, execution_id: int, report: RerunReport) -> int:
    """Store the comparison (once per distinct result) and return its id."""
    from store.rerun import add_comparison  # SQLModel tables: heavy, loaded when a comparison is stored

    return add_comparison(
        store,
        plan_id=plan_id,
        execution_id=execution_id,
        rounds_used=len(report.rounds.used),
        verdict=report.verdict,
        digest=digest_of(report),
        body=report.stored().to_json(),
    )


# -- text ---------------------------------------------------------------------------


def _known(x: float | None | UnsetType) -> float | None:
    return None if x is UNSET else x


def _wrap(text: str, width: int, indent: str = "  ") -> list[str]:
    return textwrap.wrap(clean(text), width, initial_indent=indent, subsequent_indent=indent + "  ")


def render_rerun_report(r: RerunReport, width: int = 80) -> str:
    """The comparison as plain lines for an 80-column terminal (untrusted text cleaned):
    the one renderer of a rerun comparison, fresh or stored (a stored body: ``RerunReport.from_json`` first)."""
    p, e = r.plan, r.execution
    lines = [f"Plan {p.id} {clean(p.name)} · execution {e.id} ({e.status}) · {p.lens} lens"]
    lines += _wrap(
        f"metric: per-run {p.statistic} of {p.metric} ({'higher' if p.higher_is_better else 'lower'} is better); "
        f"rounds used {len(r.rounds.used)} of {p.rounds} planned; order {p.order}, seed {p.seed}",
        width,
    )
    if r.partial:
        lines += _wrap("PARTIAL: the execution is not complete; this is the result so far.", width)
    lines += _analysis_lines(r, width)
    lines += _sequential_lines(r, width)
    lines += _work_lines(r, width)
    lines += _dimension_lines(r, width)
    lines += _verdict_lines(r, width)
    lines += _failed_stderr_lines(r, width)
    lines += _wrap(r.scope, width)
    return "\n".join(lines)


def _analysis_lines(r: RerunReport, width: int) -> list[str]:
    a = r.analysis
    if a is None:
        return []
    lines = _effect_lines(r, a)
    for iv in a.intervals or ():
        lo, hi = iv.low, iv.high
        rng = f"[{lo:.4f}, {hi:.4f}]" if lo is not None and hi is not None else "unbounded"
        lines.append(f"    {int(round(iv.level * 100))} % {clean(iv.method)}: {rng}"[:width])
    aa = a.aa
    if aa:
        lines.append(f"  A/A control A′/A {aa.ratio:.4f}; noise floor (SD of log ratios) {aa.noise_floor_sd_log:.4f}")
        lines.append(f"    resolution ±{aa.resolution_pct:.2f} %, MDE {aa.mde_pct:.2f} %")
    return lines + _analysis_notes(r, a, width)


def _analysis_notes(r: RerunReport, a: Effect, width: int) -> list[str]:
    """Rounds that would resolve δ, drift and outliers: what the reader should weigh beside the effect."""
    lines: list[str] = []
    plan_info = a.planning or None
    if plan_info and plan_info.rounds_needed:
        lines += _wrap(
            f"rounds that would resolve δ = {r.plan.delta * 100:g} %: {plan_info.rounds_needed} "
            f"(equivalence: {plan_info.rounds_needed_equivalence})",
            width,
        )
    for arm, d in (a.drift or {}).items():
        if d and d.p is not None and d.p < 0.05:
            lines += _wrap(f"drift in {arm}: {d.pct_per_slot or 0:+.3f} % per slot (p {d.p:.3g})", width)
    for arm, idx in (a.outliers or {}).items():
        lines += _wrap(
            f"outlier runs in {arm} (modified z > 3.5, kept): rounds {', '.join(str(r.rounds.used[i]) for i in idx)}",
            width,
        )
    return lines


def _effect_lines(r: RerunReport, a: Effect) -> list[str]:
    m = a.means or {}
    time_pct = signed_percent(_known(a.time_change_pct), 2)
    throughput_pct = signed_percent(_known(a.throughput_change_pct), 2)
    a_prime = m["A'"]
    if r.basis is None:
        return [
            f"  means per run: A {m['A']:.4g}  B {m['B']:.4g}  A′ {a_prime:.4g}",
            f"  B/A effect θ {a.ratio:.4f}: time {time_pct}, throughput {throughput_pct}",
        ]
    # judged on throughput: θ is the time per unit of work
    return [
        f"  throughput per run ({clean(r.basis.unit)}): A {m['A']:.4g}  B {m['B']:.4g}  A′ {a_prime:.4g}",
        f"  B/A effect θ {a.ratio:.4f}: throughput {throughput_pct}, time per unit of work {time_pct}",
    ]


def _sequential_lines(r: RerunReport, width: int) -> list[str]:
    seq = r.sequential
    if seq is None:
        return []
    design_rounds = seq.fixed_design_rounds
    lo95, hi95 = seq.repeated_ci95
    return _wrap(
        f"sequential stopping ({seq.design.spending} spending, α {seq.design.alpha:g} over every look): "
        f"θ {fixed(seq.ratio, 4)}, repeated 95 % interval [{fixed(lo95, 4)}, {fixed(hi95, 4)}]"
        + (f"; a fixed design would need about {design_rounds} rounds at this noise" if design_rounds else ""),
        width,
    )


def _work_lines(r: RerunReport, width: int) -> list[str]:
    lines: list[str] = []
    w, p = r.work, r.plan
    if w is not None and w.per_item is not UNSET and w.per_item is not None:
        item = w.per_item
        lines += _wrap(
            f"work: {clean(item.name)}: {significant(item.baseline)} vs {significant(item.candidate)} "
            f"({'same' if w.same else 'DIFFERENT'}); time per run: A {_mean_stat(r, 'A')}  B {_mean_stat(r, 'B')} "
            f"({p.statistic} of {p.metric})",
            width,
        )
    if r.basis is not None:
        tb, tc = _mean_throughput(r, "A"), _mean_throughput(r, "B")
        lines += _wrap(
            f"judged on {r.basis.metric} ({clean(r.basis.unit)}): A {significant(tb)}  B {significant(tc)}", width
        )
    return lines


def _shown_dimension(d: DimensionCheck) -> bool:
    """What the verdict rests on: the change, and what is not the same (in-session facts are not shown)."""
    if d.accepted == contract.IN_SESSION:
        return False
    return bool(d.declared_change or (d.state != "same" and (d.must_match or d.state in ("different", "mixed"))))


def _dimension_lines(r: RerunReport, width: int) -> list[str]:
    lines: list[str] = []
    for d in filter(_shown_dimension, r.dimensions):
        lines += _wrap(
            f"{'*' if d.must_match else ' '} {clean(d.name)}: {d.state} ({clean(str(d.baseline))} → "
            f"{clean(str(d.candidate))})" + (f"; {clean(d.note)}" if d.note else ""),
            width,
        )
    return lines


def _verdict_lines(r: RerunReport, width: int) -> list[str]:
    verdict = "REFUSED" if r.refusal is not None else r.verdict or "NO VERDICT"
    flags = f"  [{', '.join(r.flags)}]" if r.flags else ""
    lines = [f"Verdict: {verdict}{flags}", *_wrap(r.reason, width)]
    for g in r.guardrails:
        lines += _wrap(
            f"guardrail {g.name} ({g.rule} {g.limit:g}, {g.source}): {g.status}" + (f" — {g.why}" if g.why else ""),
            width,
        )
    for note in r.notes:
        lines += _wrap(note, width)
    return lines


def _failed_stderr_lines(r: RerunReport, width: int) -> list[str]:
    """The last stderr line of the first failed run of each arm."""
    lines: list[str] = []
    shown: set[str] = set()
    for run in r.runs:
        if run.status == "failed" and run.stderr_tail and run.arm not in shown:
            shown.add(run.arm)
            last = [x for x in run.stderr_tail.splitlines() if x.strip()][-1:] or [""]
            lines += _wrap(f"{run.arm} round {run.round} stderr: {last[0]}", width, "    ")
    return lines


def _mean_stat(r: RerunReport, arm: str) -> str:
    used = set(r.rounds.used)
    values = [x.statistic for x in r.runs if x.arm == arm and x.round in used and x.statistic is not None]
    return significant(sum(values) / len(values)) if values else "unknown"


def _mean_throughput(r: RerunReport, arm: str) -> float | None:
    used = set(r.rounds.used)
    values = [x.throughput for x in r.runs if x.arm == arm and x.round in used and x.throughput is not None]
    return sum(values) / len(values) if values else None
