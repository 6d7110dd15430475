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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from store.records import SAMPLES, RunRecord
from workbench.rerun.plan import ARM_NAMES, ARMS, Plan
from workbench.stats.verdicts import DECIDED

if TYPE_CHECKING:
    from store.api import Store

FORMAT = "wb.rerun.comparison/1"
STDERR_SHOWN = 400  # characters of a failed run's stderr kept in the comparison
SCOPE = (
    "Scoped to this machine and session: the effect of B against A under these conditions. "
    "The A/A control (A′ against A) shows how much two runs of the same baseline differ."
)


def run_statistic(record: RunRecord, plan: Plan) -> tuple[float | None, str]:
    """The plan's per-run value for one run, or (None, why not)."""
    from workbench.stats import reduce_run

    values = (record.tables.get(SAMPLES) or {}).get(plan.metric)
    if values is None:
        return None, f"the capture has no {plan.metric!r} samples"
    import numpy as np

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


def paired_rounds(runs: list[dict[str, Any]]) -> tuple[list[int], dict[int, dict[str, dict[str, Any]]]]:
    """Rounds where every arm has an ``ok`` run with a value (the last such run counts)."""
    by_round: dict[int, dict[str, dict[str, Any]]] = {}
    for r in runs:
        if r["round"] >= 1 and r["status"] == "ok" and r["statistic"] is not None:
            by_round.setdefault(r["round"], {})[r["arm"]] = r
    complete = sorted(k for k, arms in by_round.items() if all(a in arms for a in ARMS))
    return complete, by_round


def live_effect(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Ratio of means over the rounds complete so far (for the progress display only)."""
    complete, by_round = paired_rounds(runs)
    if not complete:
        return {"rounds": 0}
    mean = lambda arm: sum(by_round[k][arm]["statistic"] for k in complete) / len(complete)  # noqa: E731
    return {"rounds": len(complete), "b_over_a": mean("B") / mean("A"), "aprime_over_a": mean("A'") / mean("A")}


@dataclass(frozen=True)
class SequentialLook:
    """The look after the rounds complete so far, for a plan with ``stopping = "sequential"``."""

    design: Any  # stats.sequential.SequentialDesign
    look: Any  # stats.sequential.Look
    rounds: list[int]
    sd_log: float

    @property
    def decided(self) -> bool:
        from workbench.stats.sequential import CONTINUE

        return self.look.decision != CONTINUE


def sequential_look(plan: Plan, runs: list[dict[str, Any]]) -> SequentialLook | None:
    """None for a fixed plan; else the current look over the paired rounds."""
    if plan.stopping != "sequential":
        return None
    return look_over(runs, rounds=plan.rounds, delta=plan.delta, higher_is_better=plan.higher_is_better, spending=plan.spending)


def look_over(runs: list[dict[str, Any]], *, rounds: int, delta: float, higher_is_better: bool, spending: str) -> SequentialLook:
    """The sequential look over the paired rounds of ``runs`` (time-like log ratios: for a
    higher-is-better metric the ratio is inverted, so > 1 is always worse)."""
    from workbench.stats.sequential import SequentialDesign, look

    complete, by_round = paired_rounds(runs)
    sign = -1.0 if higher_is_better else 1.0
    log_ratio = lambda k, arm: sign * math.log(by_round[k][arm]["statistic"] / by_round[k]["A"]["statistic"])  # noqa: E731
    design = SequentialDesign(rounds, spending=spending)
    b = [log_ratio(k, "B") for k in complete]
    aa = [log_ratio(k, "A'") for k in complete]
    sd = statistics.stdev(b) if len(b) >= 2 else math.nan
    return SequentialLook(design, look(design, b, delta, aa), complete, sd)


def _analysis(plan_info: dict[str, Any], rounds: list[int], by_round: dict[int, dict[str, dict[str, Any]]]) -> Any:
    """The fixed paired analysis of the rounds where A, B and A′ were all measured."""
    from workbench.stats import analyze

    if len(rounds) < 2:
        return None
    a = [by_round[k]["A"]["statistic"] for k in rounds]
    b = [by_round[k]["B"]["statistic"] for k in rounds]
    ap = [by_round[k]["A'"]["statistic"] for k in rounds]
    slots = {arm: [by_round[k][arm]["slot"] for k in rounds] for arm in ARMS}
    return analyze(a, b, ap, paired=True, delta=plan_info["delta"], lower_is_better=not plan_info["higher_is_better"],
                   seed=plan_info["seed"], slots=slots)


def reanalyze(body: dict[str, Any]) -> dict[str, Any]:
    """A stored comparison's verdict-bearing parts derived again from its per-run values
    (what ``wb evidence verify --recompute`` checks): analysis, verdict, flags, sequential."""
    p = body["plan"]
    rows = body["runs"]
    rounds, by_round = paired_rounds(rows)
    analysis = _analysis(p, rounds, by_round)
    out: dict[str, Any] = {"analysis": analysis.to_json() if analysis else None,
                           "verdict": analysis.verdict if analysis else None,
                           "flags": list(analysis.flags) if analysis else []}
    if p.get("stopping") == "sequential" and len(rounds) >= 2:
        seq = look_over(rows, rounds=p["rounds"], delta=p["delta"], higher_is_better=p["higher_is_better"], spending=p["spending"])
        section = _sequential_section(p, seq, body["execution"]["status"])
        out["sequential"] = section
        out["verdict"] = section["decision"] if section["decision"] != "CONTINUE" else None
    return out


def _sequential_section(plan: dict[str, Any], seq: SequentialLook, status: str) -> dict[str, Any]:
    from workbench.stats import rounds_needed
    from workbench.stats.sequential import CONTINUE

    lk = seq.look
    delta, rounds = plan["delta"], plan["rounds"]
    band = f"[{1 / (1 + delta):.4f}, {1 + delta:.4f}]"
    interval = f"[{lk.low95:.4f}, {lk.high95:.4f}]"
    if lk.decision == CONTINUE:
        why = (f"no decision after {lk.round} of {rounds} rounds: the repeated 95 % interval {interval} "
               f"still overlaps the band {band} ({status})")
    elif lk.aa_unstable and lk.decision not in DECIDED:
        why = f"ran all {rounds} rounds: the A/A control stayed unstable, so no verdict is given"
    elif lk.round < rounds:
        why = f"stopped after round {lk.round} of {rounds}: the repeated 95 % interval {interval} decides {lk.decision} against the band {band}"
    else:
        why = f"ran all {rounds} rounds: repeated 95 % interval {interval} against the band {band}"
    fixed = rounds_needed(seq.sd_log, delta, paired=True) if math.isfinite(seq.sd_log) else None
    return {
        "design": seq.design.to_json(),
        "stopped_at_round": lk.round if lk.decision != CONTINUE else None,
        "decision": lk.decision,
        "why": why,
        "ratio": lk.ratio,
        "repeated_ci95": [lk.low95, lk.high95],
        "aa_unstable": lk.aa_unstable,
        "fixed_design_rounds": fixed,
        "method": "group-sequential, Lan–DeMets spending; repeated confidence intervals on the mean per-round log ratio (docs/methods.md)",
    }


def _failures(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for arm in ARMS:
        mine = [r for r in runs if r["arm"] == arm and r["round"] >= 1 and r["status"] in ("ok", "failed")]
        failed = [r for r in mine if r["status"] == "failed"]
        reasons: dict[str, int] = {}
        for r in failed:
            reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
        out[arm] = {"finished": len(mine), "failed": len(failed), "reasons": reasons}
    return out


def _guardrail_values(store: "Store", plan: Plan, run_ids: dict[str, list[int]]) -> dict[str, dict[str, list[float]]]:
    """metric -> arm -> per-run values (NaN where the run does not say)."""
    import numpy as np

    from lenses import builtin_lens

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


def _judge_guardrails(store: "Store", plan: Plan, rounds: list[int], by_round: dict[int, dict[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    from lenses.base import GuardrailSpec

    if not plan.guardrails:
        return []
    run_ids = {arm: [by_round[k][arm]["run_id"] for k in rounds if by_round[k][arm]["run_id"] is not None] for arm in ARMS}
    values = _guardrail_values(store, plan, run_ids)
    out = []
    for g in plan.guardrails:
        spec = GuardrailSpec(g.name or g.metric, g.name or g.metric, g.metric, g.rule, g.limit)
        per_arm = values[g.metric]
        means = {arm: _finite_mean(v) for arm, v in per_arm.items()}
        status = spec.judge(means["A"], means["B"]) if rounds else "unknown"
        control = spec.judge(means["A"], means["A'"]) if rounds else "unknown"
        row = g.to_json() | {
            "status": status,
            "means": {arm: (m if math.isfinite(m) else None) for arm, m in means.items()},
            "runs_with_value": {arm: sum(math.isfinite(x) for x in v) for arm, v in per_arm.items()},
            "control_status": control,
        }
        if status == "unknown":
            row["why"] = f"no run reported {g.metric!r}" if rounds else "no complete rounds"
        elif control == "broken":
            row["why"] = "A′ against A breaks it too: the guardrail is within this session's noise"
        out.append(row)
    return out


def _finite_mean(values: list[float]) -> float:
    kept = [v for v in values if math.isfinite(v)]
    return sum(kept) / len(kept) if kept else math.nan


def build_comparison(store: "Store", plan_row: Any, execution_row: Any, runs: list[Any]) -> dict[str, Any]:
    """The comparison document for one execution (see ``docs/verify.md``)."""
    from workbench.stats import MIN_ROUNDS

    plan = Plan.from_json(plan_row.body)
    rows = [
        {
            "round": r.round, "arm": r.arm, "slot": r.slot, "status": r.status, "reason": r.reason,
            "started_at": r.started_at, "wall_s": r.wall_s, "exit_status": r.exit_status,
            "run_id": r.run_id, "statistic": r.statistic,
            # What a failed run said last (untrusted text: cleaned before display).
            **({"stderr_tail": r.stderr_tail[-STDERR_SHOWN:]} if r.status == "failed" and r.stderr_tail else {}),
        }
        for r in runs
    ]
    rounds, by_round = paired_rounds(rows)
    failures = _failures(rows)
    finished_rounds = {r["round"] for r in rows if r["round"] >= 1 and r["status"] in ("ok", "failed")}
    incomplete = sorted(k for k in finished_rounds if k not in rounds)
    body: dict[str, Any] = {
        "format": FORMAT,
        "plan": {
            "id": plan_row.id, "name": plan.name, "digest": plan_row.digest, "lens": plan.lens,
            "metric": plan.metric, "statistic": plan.statistic, "higher_is_better": plan.higher_is_better,
            "rounds": plan.rounds, "order": plan.order, "seed": plan.seed, "delta": plan.delta,
            "warmup": plan.warmup.to_json(),
            **({"stopping": plan.stopping, "spending": plan.spending} if plan.stopping != "fixed" else {}),
        },
        "execution": {
            "id": execution_row.id, "status": execution_row.status, "host": execution_row.host,
            "started_at": execution_row.started_at, "ended_at": execution_row.ended_at, "workdir": execution_row.workdir,
        },
        "partial": execution_row.status != "complete",
        "rounds": {"planned": plan.rounds, "used": rounds, "left_out": incomplete},
        "runs": rows,
        "failures": failures,
        "scope": SCOPE,
    }
    notes = []
    for arm in ARMS:
        f = failures[arm]
        if f["failed"]:
            why = "; ".join(f"{n}× {reason}" for reason, n in f["reasons"].items())
            notes.append(f"{arm} ({ARM_NAMES[arm]}): {f['failed']} of {f['finished']} runs failed: {why}")
    if incomplete:
        notes.append(f"rounds {', '.join(map(str, incomplete))} left out of the paired analysis: an arm failed or has no value")
    body["notes"] = notes

    analysis = _analysis(body["plan"], rounds, by_round)
    body["analysis"] = analysis.to_json() if analysis else None
    if analysis is not None:
        body["verdict"], body["flags"], body["reason"] = analysis.verdict, list(analysis.flags), analysis.reason
    else:
        body["verdict"], body["flags"] = None, []
        body["reason"] = f"no comparison: {len(rounds)} round(s) with A, B and A′ all measured (a verdict needs at least {MIN_ROUNDS})"
    seq = sequential_look(plan, rows)
    if seq is not None and len(rounds) >= 2:
        # The fixed analysis above keeps its intervals for reading, but its nominal levels
        # do not hold after repeated looks: the verdict is the sequential design's.
        section = _sequential_section(body["plan"], seq, execution_row.status)
        body["sequential"] = section
        if section["decision"] != "CONTINUE":
            body["verdict"] = section["decision"]
        else:
            body["verdict"] = None
        body["reason"] = section["why"]
    body["guardrails"] = _judge_guardrails(store, plan, rounds, by_round)
    return body


def digest_of(body: dict[str, Any]) -> str:
    """SHA-256 of the comparison document: an identical analysis is stored once."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


def save_comparison(store: "Store", plan_id: int, execution_id: int, body: dict[str, Any]) -> int:
    """Store the comparison (once per distinct result) and return its id."""
    from sqlmodel import select

    from store.rerun import RerunComparison

    digest = digest_of(body)
    with store.session() as s:
        existing = s.exec(select(RerunComparison).where(RerunComparison.execution_id == execution_id, RerunComparison.digest == digest)).first()
        if existing is not None:
            return int(existing.id)  # type: ignore[arg-type]
        row = RerunComparison(
            plan_id=plan_id, execution_id=execution_id, rounds_used=len(body["rounds"]["used"]),
            verdict=body["verdict"], digest=digest, body=body,
        )
        s.add(row)
        s.flush()
        return int(row.id)  # type: ignore[arg-type]


# -- text ---------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "unknown" if x is None else f"{x:+.2f} %"


def format_comparison(body: dict[str, Any], width: int = 80) -> list[str]:
    """The comparison as plain lines for an 80-column terminal (untrusted text cleaned)."""
    import textwrap

    from workbench.textsafe import clean

    wrap = lambda text, indent="  ": textwrap.wrap(clean(text), width, initial_indent=indent, subsequent_indent=indent + "  ")  # noqa: E731
    p, e = body["plan"], body["execution"]
    lines = [f"Plan {p['id']} {clean(p['name'])} · execution {e['id']} ({e['status']}) · {p['lens']} lens"]
    lines += wrap(f"metric: per-run {p['statistic']} of {p['metric']} ({'higher' if p['higher_is_better'] else 'lower'} is better); "
                  f"rounds used {len(body['rounds']['used'])} of {p['rounds']} planned; order {p['order']}, seed {p['seed']}")
    if body["partial"]:
        lines += wrap("PARTIAL: the execution is not complete; this is the result so far.")
    a = body["analysis"]
    if a is not None:
        m = a["means"]
        a_prime = m["A'"]
        lines.append(f"  means per run: A {m['A']:.4g}  B {m['B']:.4g}  A′ {a_prime:.4g}")
        lines.append(f"  B/A effect θ {a['ratio']:.4f}: time {_pct(a['time_change_pct'])}, throughput {_pct(a['throughput_change_pct'])}")
        for iv in a["intervals"]:
            lo, hi = iv.get("low"), iv.get("high")
            rng = f"[{lo:.4f}, {hi:.4f}]" if lo is not None and hi is not None else "unbounded"
            lines.append(f"    {int(round(iv['level'] * 100))} % {clean(iv['method'])}: {rng}"[:width])
        aa = a.get("aa")
        if aa:
            lines.append(f"  A/A control A′/A {aa['ratio']:.4f}; noise floor (SD of log ratios) {aa['noise_floor_sd_log']:.4f}")
            lines.append(f"    resolution ±{aa['resolution_pct']:.2f} %, MDE {aa['mde_pct']:.2f} %")
        plan_info = a.get("planning") or {}
        if plan_info.get("rounds_needed"):
            lines += wrap(f"rounds that would resolve δ = {p['delta'] * 100:g} %: {plan_info['rounds_needed']} "
                          f"(equivalence: {plan_info.get('rounds_needed_equivalence')})")
        for arm, d in (a.get("drift") or {}).items():
            if d and d.get("p") is not None and d["p"] < 0.05:
                lines += wrap(f"drift in {arm}: {d.get('pct_per_slot', 0):+.3f} % per slot (p {d['p']:.3g})")
        for arm, idx in (a.get("outliers") or {}).items():
            lines += wrap(f"outlier runs in {arm} (modified z > 3.5, kept): rounds {', '.join(str(body['rounds']['used'][i]) for i in idx)}")
    seq = body.get("sequential")
    if seq:
        fixed = seq.get("fixed_design_rounds")
        lines += wrap(f"sequential stopping ({seq['design']['spending']} spending, α {seq['design']['alpha']:g} over every look): "
                      f"θ {seq['ratio']:.4f}, repeated 95 % interval [{seq['repeated_ci95'][0]:.4f}, {seq['repeated_ci95'][1]:.4f}]"
                      + (f"; a fixed design would need about {fixed} rounds at this noise" if fixed else ""))
    verdict = body["verdict"] or "NO VERDICT"
    flags = f"  [{', '.join(body['flags'])}]" if body["flags"] else ""
    lines.append(f"Verdict: {verdict}{flags}")
    lines += wrap(body["reason"])
    for g in body["guardrails"]:
        lines += wrap(f"guardrail {g['name']} ({g['rule']} {g['limit']:g}, {g['source']}): {g['status']}"
                      + (f" — {g['why']}" if g.get("why") else ""))
    for note in body["notes"]:
        lines += wrap(note)
    shown: set[str] = set()
    for r in body["runs"]:  # the last stderr line of the first failed run of each arm
        if r["status"] == "failed" and r.get("stderr_tail") and r["arm"] not in shown:
            shown.add(r["arm"])
            last = [x for x in r["stderr_tail"].splitlines() if x.strip()][-1:] or [""]
            lines += wrap(f"{r['arm']} round {r['round']} stderr: {last[0]}", "    ")
    lines += wrap(body["scope"])
    return lines
