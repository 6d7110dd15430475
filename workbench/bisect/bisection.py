"""The search: endpoints first, then midpoints, each a sequentially stopped rerun.

1. **Endpoint check**: bad against good (A = good, B = bad, A′ = good again). Unless that
   is a REGRESSION beyond δ, the search stops: the regression does not reproduce here.
2. **Steps**: the candidate nearest the middle of the open range (last good, first bad)
   against the reference (the good endpoint), classified by ``classify``. Like good: the
   range starts there; like bad: it ends there; undecided: the candidate is skipped and
   its neighbour tried; in between: the regression is split — it is recorded, and the
   search follows the larger part (before the split point: that part's whole effect is
   the split point's; after it: the split point becomes the reference, and the rest of
   the range gets an endpoint check of its own).
3. **Result**: the first bad candidate, the effect that convicted it against the last
   good one, the splits and skips on the way.

Every step is an ordinary rerun plan, execution and comparison in the store; the
bisection's own record (``store.bisect``) is rewritten after each step, so ``resume``
continues where Ctrl-C or a reboot left off.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.bisect import candidates as cand
from workbench.bisect.classify import BAD, BETWEEN, GOOD, SKIP, UNDECIDED, UNTESTED, classify
from workbench.bisect.result import BisectionReport, Spec
from workbench.errors import UsageError, WbError
from workbench.investigations.common import investigation_row
from workbench.investigations.workflow import pin_observation
from workbench.rerun.execute import Executor
from workbench.rerun.plan import build_plan
from workbench.rerun.report import build_comparison, save_comparison

if TYPE_CHECKING:
    from store.api import Store
    from workbench.rerun.comparison import RerunReport
    from workbench.rerun.execute import Observer

STARTED, BISECTING, DONE, NO_REGRESSION = "started", "bisecting", "done", "no-regression"
STOPPED = "stopped"  # an endpoint did not build (or a step failed): resume tries again


def start(store: "Store", spec: Spec) -> int:
    """Record a new bisection over the candidates between good and bad; returns its id."""
    from sqlmodel import select  # SQLModel/SQLAlchemy: heavy, loaded when a bisection is recorded

    from store.bisect import Bisection

    if spec.max_rounds < 3:
        raise UsageError("--max-rounds: at least 3 (a sequential step looks from round 3)")
    if not 0 < spec.delta < 1:
        raise UsageError("--delta: a fraction between 0 and 1 (0.02 = 2 %)")
    if spec.repo is not None:
        found = cand.from_git(Path(spec.repo), spec.good, spec.bad)
    elif spec.candidates_file is not None:
        found = cand.from_file(Path(spec.candidates_file))
    else:
        raise UsageError("wb bisect start needs --good and --bad in a git repository, or --candidates FILE")
    if spec.investigation is not None:
        with store.session() as s:
            investigation_row(s, spec.investigation, writable=True)
    state = {
        "candidates": [{**c.to_json(), "status": UNTESTED} for c in found],
        "lo": 0, "hi": len(found) - 1, "reference": 0, "endpoint": None,
        "steps": [], "current": None, "splits": [], "result": None,
    }
    state["candidates"][0]["status"] = GOOD
    with store.session() as s:
        if s.exec(select(Bisection).where(Bisection.name == spec.name)).first() is not None:
            raise UsageError(f"a bisection named {spec.name!r} exists; resume it with 'wb bisect resume {spec.name}' "
                             "or start a new one with another --name")
        row = Bisection(name=spec.name, spec=spec.to_json(), state=state, investigation_id=spec.investigation)
        s.add(row)
        s.flush()
        return int(row.id)  # type: ignore[arg-type]


def load(store: "Store", ref: str | int | None) -> tuple[int, Spec, dict[str, Any], str]:
    """The bisection's id, spec, working state (the stored JSON document) and status."""
    from store.bisect import find_bisection  # the store's tables: SQLModel, heavy

    with store.session() as s:
        row = find_bisection(s, ref)
        return int(row.id), Spec.from_json(row.spec), dict(row.state), row.status  # type: ignore[arg-type]


def _save(store: "Store", bisection_id: int, state: dict[str, Any], status: str) -> None:
    from store.bisect import Bisection  # the store's tables: SQLModel, heavy
    from store.tables import utcnow_iso

    with store.session() as s:
        row = s.get(Bisection, bisection_id)
        row.state, row.status, row.updated_at = state, status, utcnow_iso()  # type: ignore[union-attr]
        s.add(row)


def run(store: "Store", ref: str | int | None, observer: "Observer | None" = None) -> BisectionReport:
    """Run (or resume) a bisection to its end; returns its report."""
    bisection_id, spec, state, status = load(store, ref)
    if status in (DONE, NO_REGRESSION):
        return report(store, bisection_id)
    state.pop("stopped", None)
    try:
        return _run(store, bisection_id, spec, state, observer)
    except WbError as exc:
        # Not left "started" for ever: the record says why it stopped (resume tries again).
        state["stopped"] = str(exc)
        _save(store, bisection_id, state, STOPPED)
        raise


def _run(store: "Store", bisection_id: int, spec: Spec, state: dict[str, Any], observer: "Observer | None") -> BisectionReport:
    repo = Path(spec.repo) if spec.repo else None
    root = Path(spec.workdir)
    while True:
        if state["endpoint"] is None:
            ref_i, cand_i = state["reference"], state["hi"]
            step = _step(store, spec, state, bisection_id, ref_i, cand_i, repo, root, observer, endpoint=True)
            if step["verdict"] != "REGRESSION":
                first = state["reference"] == 0 and state["hi"] == len(state["candidates"]) - 1
                state["result"] = {
                    "outcome": NO_REGRESSION if first else "split-part-does-not-reproduce",
                    "text": (f"{_name(state, cand_i)} against {_name(state, ref_i)} is {step['verdict'] or 'undecided'} "
                             f"(θ {step['ratio']:.4f}), not a REGRESSION beyond δ = {spec.delta:g}: "
                             + ("the regression does not reproduce here" if first else "the rest of the split regression is too small to follow")),
                }
                _save(store, bisection_id, state, NO_REGRESSION if first else DONE)
                return report(store, bisection_id)
            state["endpoint"] = {"ratio": step["ratio"], "ci95": step["ci95"], "step": len(state["steps"]) - 1}
            _mark(state, cand_i, BAD, step)
            _save(store, bisection_id, state, BISECTING)
            continue
        mid = _next_candidate(state)
        if mid is None:
            break
        step = _step(store, spec, state, bisection_id, state["reference"], mid, repo, root, observer, endpoint=False)
        kind = step["class"]
        if kind == GOOD:
            state["lo"] = mid
        elif kind == BAD:
            state["hi"] = mid
        elif kind == BETWEEN:
            whole, part = math.log(state["endpoint"]["ratio"]), math.log(step["ratio"])
            state["splits"].append({"rev": state["candidates"][mid]["rev"], "ratio": step["ratio"], "of": state["endpoint"]["ratio"],
                                    "share": part / whole if whole else None})
            if part >= whole / 2:  # most of it is before the split point: follow that part
                state["hi"] = mid
                state["endpoint"] = {"ratio": step["ratio"], "ci95": step["ci95"], "step": len(state["steps"]) - 1}
            else:  # most of it is after: the split point is the new reference
                state["lo"] = state["reference"] = mid
                state["endpoint"] = None
        _mark(state, mid, kind, step)
        _save(store, bisection_id, state, BISECTING)
    state["result"] = _result(state)
    _save(store, bisection_id, state, DONE)
    if spec.investigation is not None:
        _pin(store, spec, state)
    return report(store, bisection_id)


def _next_candidate(state: dict[str, Any]) -> int | None:
    """The untested candidate nearest the middle of the open range (skips are passed over)."""
    lo, hi = state["lo"], state["hi"]
    open_ = [i for i in range(lo + 1, hi) if state["candidates"][i]["status"] == UNTESTED]
    if not open_:
        return None
    middle = (lo + hi) / 2
    return min(open_, key=lambda i: (abs(i - middle), i))


def _mark(state: dict[str, Any], index: int, status: str, step: dict[str, Any]) -> None:
    c = state["candidates"][index]
    c["status"] = SKIP if status == UNDECIDED else status
    clean = _jsonable(step)
    c.update({k: clean.get(k) for k in ("ratio", "ci95", "verdict", "plan", "comparison_id", "reason")})
    c["against"] = state["candidates"][step["reference"]]["rev"]


def _name(state: dict[str, Any], index: int) -> str:
    return state["candidates"][index]["rev"][:12]


def _step(store: "Store", spec: Spec, state: dict[str, Any], bisection_id: int, ref_i: int, cand_i: int,
          repo: Path | None, root: Path, observer: "Observer | None", *, endpoint: bool) -> dict[str, Any]:
    """One controlled comparison: candidate ``cand_i`` against reference ``ref_i``."""
    candidates = [cand.Candidate(c["rev"], c["title"]) for c in state["candidates"]]
    ref_c, new_c = candidates[ref_i], candidates[cand_i]
    number = len(state["steps"]) + 1
    step: dict[str, Any] = {"step": number, "endpoint": endpoint, "reference": ref_i, "candidate": cand_i,
                            "rev": new_c.rev, "against": ref_c.rev, "verdict": None, "ratio": math.nan, "ci95": None}
    workspaces = {}
    for i, c in ((ref_i, ref_c), (cand_i, new_c)):
        ws = cand.prepare(c, repo=repo, root=root)
        why = cand.build(spec.build, c, ws, spec.timeout_s)
        if why and (i == ref_i or endpoint):
            raise WbError(f"{'the reference' if i == ref_i else 'the bad endpoint'} {c.short} does not build: {why}")
        if why:  # a candidate that does not build is skipped, like git bisect skip
            step.update({"class": UNDECIDED, "reason": why})
            state["steps"].append(_jsonable(step))
            return step
        workspaces[i] = ws
    current = state.get("current") or {}
    plan_name = current.get("plan") if (current.get("reference"), current.get("candidate")) == (ref_i, cand_i) else None
    if plan_name is None:
        plan_name = _make_plan(store, spec, number, ref_c, new_c, workspaces[ref_i], workspaces[cand_i])
        state["current"] = {"plan": plan_name, "reference": ref_i, "candidate": cand_i, "endpoint": endpoint}
        _save(store, bisection_id, state, BISECTING)
    report, comparison_id = _execute(store, plan_name, root, observer)
    seq = report.sequential
    ci = [math.nan if v is None else v for v in seq.repeated_ci95] if seq else [math.nan, math.nan]
    ratio = seq.ratio if seq and seq.ratio is not None else math.nan
    step.update({
        "plan": plan_name, "comparison_id": comparison_id, "verdict": report.verdict,
        "ratio": ratio, "ci95": ci, "rounds_used": len(report.rounds.used),
        "stopped_at_round": seq.stopped_at_round if seq else None, "why": report.reason,
    })
    if not endpoint:
        e = state["endpoint"]
        step["class"] = classify(step["verdict"], (ci[0], ci[1]), e["ratio"])
    state["steps"].append(_jsonable(step))
    state["current"] = None
    return step


def _make_plan(store: "Store", spec: Spec, number: int, ref_c: cand.Candidate, new_c: cand.Candidate, ref_ws: Path, new_ws: Path) -> str:
    from store.rerun import save_plan  # the store's tables: SQLModel, heavy

    name = f"{spec.name}-step{number}-{new_c.short}"
    # A seed drawn from the step's name: the arm orders are recorded and reproducible.
    seed = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)
    data: dict[str, Any] = {
        "name": name, "seed": seed, "lens": spec.lens, "rounds": spec.max_rounds, "stopping": "sequential", "spending": spec.spending,
        "delta": spec.delta, "timeout_s": spec.timeout_s, "higher_is_better": spec.higher_is_better,
        "description": f"bisection {spec.name}: {new_c.short} against {ref_c.short}",
        "baseline": {"argv": cand.substitute(spec.bench, ref_c, ref_ws), "cwd": str(ref_ws)},
        "candidate": {"argv": cand.substitute(spec.bench, new_c, new_ws), "cwd": str(new_ws)},
    }
    for key in ("metric", "statistic"):
        if getattr(spec, key):
            data[key] = getattr(spec, key)
    plan = build_plan(data)
    with store.session() as s:
        save_plan(s, plan.name, plan.lens, plan.digest(), plan.to_json())
    return name


def _execute(store: "Store", plan_name: str, root: Path, observer: "Observer | None") -> tuple["RerunReport", int]:
    """Run (or resume) the plan's execution, then build and store its comparison."""
    from store.rerun import COMPLETE, INTERRUPTED, RUNNING, RerunExecution, executions_of, find_plan, runs_of  # SQLModel, heavy

    executor = Executor(store, plan_name, observer=observer, workdir=root / "runs", confirmed=True)
    with store.session() as s:
        executions = executions_of(s, executor.plan_id)
    latest = executions[-1] if executions else None
    if latest is None or latest.status not in (RUNNING, INTERRUPTED, COMPLETE):
        execution_id = executor.start()
        executor.run(execution_id)
    elif latest.status in (RUNNING, INTERRUPTED):
        execution_id = executor.reopen()
        executor.run(execution_id)
    else:
        execution_id = int(latest.id)  # type: ignore[arg-type]
    with store.session() as s:
        plan_row, execution, runs = find_plan(s, plan_name), s.get(RerunExecution, execution_id), runs_of(s, execution_id)
    report = build_comparison(store, plan_row, execution, runs)
    plan_id = int(plan_row.id)  # type: ignore[arg-type]
    comparison_id = save_comparison(store, plan_id, execution_id, report)
    return report, comparison_id


def _result(state: dict[str, Any]) -> dict[str, Any]:
    lo, hi = state["lo"], state["hi"]
    cs = state["candidates"]
    skipped = [c["rev"] for c in cs if c["status"] == SKIP]
    splits = state["splits"]
    if all(cs[i]["status"] == SKIP for i in range(lo + 1, hi)):
        bad, good = cs[hi], cs[lo]
        if hi - lo == 1:
            effect = f"θ {bad['ratio']:.3f} [{bad['ci95'][0]:.3f}, {bad['ci95'][1]:.3f}] against `{bad['against'][:12]}`" if bad.get("ci95") else ""
            text = f"first bad: `{bad['rev'][:12]}` ({bad['title']}) — {effect}; last good: `{good['rev'][:12]}`"
            outcome = "found"
        else:
            between = [c["rev"][:12] for c in cs[lo + 1:hi + 1]]
            text = (f"the first bad change is one of {', '.join(f'`{r}`' for r in between)} "
                    f"(undecided candidates in between were skipped); last good: `{good['rev'][:12]}`")
            outcome = "range"
        if splits:
            text += "; the regression is split across changes: " + ", ".join(
                f"`{sp['rev'][:12]}` carries θ {sp['ratio']:.3f} of {sp['of']:.3f}" for sp in splits)
        return {"outcome": outcome, "first_bad": bad["rev"] if outcome == "found" else None, "last_good": good["rev"],
                "text": text, "skipped": skipped, "splits": splits}
    return {"outcome": "unfinished", "text": "the search stopped before the range closed", "skipped": skipped, "splits": splits}


def _pin(store: "Store", spec: Spec, state: dict[str, Any]) -> None:
    """The result as an observation (not a cause) with the decisive comparisons as evidence."""
    result = state["result"]
    evidence = [{"kind": "rerun_comparison", "id": s["comparison_id"], "rev": s["rev"], "against": s["against"],
                 "verdict": s["verdict"]} for s in state["steps"] if s.get("comparison_id") is not None]
    if evidence:
        pin_observation(store, spec.investigation, f"bisection {spec.name}: {result['text']}", evidence, source="bisect")


def report(store: "Store", ref: str | int | None) -> BisectionReport:
    """The bisection as stored, typed (``wb bisect status|report``)."""
    bisection_id, spec, state, status = load(store, ref)
    return BisectionReport.from_json({"id": bisection_id, "name": spec.name, "status": status, "spec": spec.to_json(), **state,
                                      "steps_done": len(state["steps"])})


def _jsonable(step: dict[str, Any]) -> dict[str, Any]:
    out = dict(step)
    if isinstance(out.get("ratio"), float) and not math.isfinite(out["ratio"]):
        out["ratio"] = None
    if out.get("ci95") and any(not isinstance(v, (int, float)) or not math.isfinite(v) for v in out["ci95"]):
        out["ci95"] = None
    return out
