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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET

from workbench.bisect import candidates as cand
from workbench.bisect.classify import BAD, BETWEEN, GOOD, SKIP, UNDECIDED, UNTESTED, classify
from workbench.bisect.result import (
    BisectionReport,
    BisectionState,
    CandidateState,
    Current,
    Endpoint,
    Interval,
    Result,
    Spec,
    Split,
    Step,
)
from workbench.bisect.records import BisectRecords, StoreRecords, execute
from workbench.errors import UsageError, WbError
from workbench.rerun.plan import build_plan

if TYPE_CHECKING:
    from store.api import Store
    from workbench.rerun.execute import Observer

STARTED, BISECTING, DONE, NO_REGRESSION = "started", "bisecting", "done", "no-regression"
STOPPED = "stopped"  # an endpoint did not build (or a step failed): resume tries again


@dataclass
class Search:
    """The search while it runs (stored as a :class:`BisectionState` after every step)."""

    candidates: list[CandidateState]
    lo: int
    hi: int
    reference: int
    endpoint: Endpoint | None = None
    steps: list[Step] = field(default_factory=list)
    current: Current | None = None
    splits: list[Split] = field(default_factory=list)
    result: Result | None = None
    stopped: str | None = None
    workspaces: tuple[str, ...] | None = None  # kept at the end

    @classmethod
    def of(cls, state: BisectionState) -> "Search":
        return cls(
            list(state.candidates),
            state.lo,
            state.hi,
            state.reference,
            state.endpoint,
            list(state.steps),
            state.current,
            list(state.splits),
            state.result,
            state.stopped or None,
            state.workspaces or None,
        )

    def state(self) -> BisectionState:
        return BisectionState(
            candidates=tuple(self.candidates),
            lo=self.lo,
            hi=self.hi,
            reference=self.reference,
            endpoint=self.endpoint,
            steps=tuple(self.steps),
            current=self.current,
            splits=tuple(self.splits),
            result=self.result,
            stopped=self.stopped if self.stopped is not None else UNSET,
            workspaces=self.workspaces if self.workspaces is not None else UNSET,
        )

    def name(self, index: int) -> str:
        return self.candidates[index].rev[:12]


def records_of(where: "BisectRecords | Store") -> BisectRecords:
    """Where the records go: ``BisectRecords`` as given, or a store's (``StoreRecords``)."""
    return where if hasattr(where, "ledger") else StoreRecords(where)  # type: ignore[return-value]


def start(where: "BisectRecords | Store", spec: Spec) -> int:
    """Record a new bisection over the candidates between good and bad; returns its id. The
    candidates are read here (a git repository, a file); the record goes to ``where``."""
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
    candidates = [
        CandidateState(rev=c.rev, title=c.title, status=GOOD if i == 0 else UNTESTED) for i, c in enumerate(found)
    ]
    search = Search(candidates, lo=0, hi=len(found) - 1, reference=0)
    return records_of(where).begin(spec, search.state())


def load(store: "BisectRecords | Store", ref: str | int | None) -> tuple[int, Spec, BisectionState, str]:
    """The bisection's id, spec, stored state and status."""
    stored = records_of(store).load(ref)
    return stored.id, stored.spec, stored.state, stored.status


def _save(store: BisectRecords, bisection_id: int, search: Search, status: str) -> None:
    store.save(bisection_id, search.state(), status)


def run(where: "BisectRecords | Store", ref: str | int | None, observer: "Observer | None" = None) -> BisectionReport:
    """Run (or resume) a bisection to its end, here; returns its report. Its records go to ``where``."""
    store = records_of(where)
    bisection_id, spec, state, status = load(store, ref)
    if status in (DONE, NO_REGRESSION):
        return report(store, bisection_id)
    search = Search.of(state)
    search.stopped = None
    try:
        return _run(store, bisection_id, spec, search, observer)
    except WbError as exc:
        # Not left "started" for ever: the record says why it stopped (resume tries again).
        search.stopped = str(exc)
        _save(store, bisection_id, search, STOPPED)
        raise


def _run(
    store: BisectRecords, bisection_id: int, spec: Spec, search: Search, observer: "Observer | None"
) -> BisectionReport:
    repo = Path(spec.repo) if spec.repo else None
    root = Path(spec.workdir)

    def measure(ref_i: int, cand_i: int, endpoint: bool) -> Step:
        return _step(store, spec, search, bisection_id, ref_i, cand_i, repo, root, observer, endpoint=endpoint)

    def save(status: str) -> None:
        if status != BISECTING:  # it ended: workspaces removed (or kept and listed) before the state is kept
            _finish_workspaces(spec, search, repo, root)
        _save(store, bisection_id, search, status)

    closed = walk(spec, search, measure, save)
    if closed and spec.investigation is not None:
        _pin(store, spec, search)
    return report(store, bisection_id)


Measure = Callable[[int, int, bool], Step]


def walk(spec: Spec, search: Search, measure: Measure, save: Callable[[str], None]) -> bool:
    """The search itself, step by step until it ends: ``measure(reference, candidate, endpoint)``
    gives each step (a rerun in the store; a simulation in bench/pinpoint_bisect.py), ``save``
    keeps the state after each with its status. True when the range closed (a result to pin),
    False when it ended at an endpoint check that did not reproduce."""
    while True:
        if search.endpoint is None:
            ref_i, cand_i = search.reference, search.hi
            step = measure(ref_i, cand_i, True)
            search.steps.append(step)
            if step.verdict != "REGRESSION":
                first = search.reference == 0 and search.hi == len(search.candidates) - 1
                search.result = Result(
                    outcome=NO_REGRESSION if first else "split-part-does-not-reproduce",
                    text=(
                        f"{search.name(cand_i)} against {search.name(ref_i)} is {step.verdict or 'undecided'} "
                        f"(θ {_theta(step.ratio)}), not a REGRESSION beyond δ = {spec.delta:g}: "
                        + (
                            "the regression does not reproduce here"
                            if first
                            else "the rest of the split regression is too small to follow"
                        )
                    ),
                )
                save(NO_REGRESSION if first else DONE)
                return False
            search.endpoint = Endpoint(ratio=step.ratio, ci95=step.ci95, step=len(search.steps) - 1)
            _mark(search, cand_i, BAD, step)
            save(BISECTING)
            continue
        mid = _next_candidate(search)
        if mid is None:
            break
        step = measure(search.reference, mid, False)
        search.steps.append(step)
        kind = step.klass
        if kind == GOOD:
            search.lo = mid
        elif kind == BAD:
            search.hi = mid
        elif kind == BETWEEN:
            assert step.ratio is not None and search.endpoint.ratio is not None  # a split has both effects
            whole, part = math.log(search.endpoint.ratio), math.log(step.ratio)
            search.splits.append(
                Split(
                    rev=search.candidates[mid].rev,
                    ratio=step.ratio,
                    of=search.endpoint.ratio,
                    share=part / whole if whole else None,
                )
            )
            if part >= whole / 2:  # most of it is before the split point: follow that part
                search.hi = mid
                search.endpoint = Endpoint(ratio=step.ratio, ci95=step.ci95, step=len(search.steps) - 1)
            else:  # most of it is after: the split point is the new reference
                search.lo = search.reference = mid
                search.endpoint = None
        _mark(search, mid, kind if isinstance(kind, str) else UNDECIDED, step)
        save(BISECTING)
    search.result = _result(search)
    save(DONE)
    return True


def _finish_workspaces(spec: Spec, search: Search, repo: Path | None, root: Path) -> None:
    """A finished bisection's workspaces (worktrees and builds) are removed, or kept and
    listed in its report with ``--keep-workspaces``; a stopped one keeps them for resume."""
    if spec.keep_workspaces:
        search.workspaces = tuple(str(ws) for ws in cand.workspaces(root))
    else:
        cand.remove_workspaces(repo, root)


def _theta(ratio: float | None) -> str:
    return f"{ratio if ratio is not None else math.nan:.4f}"


def _next_candidate(search: Search) -> int | None:
    """The untested candidate nearest the middle of the open range (skips are passed over)."""
    lo, hi = search.lo, search.hi
    open_ = [i for i in range(lo + 1, hi) if search.candidates[i].status == UNTESTED]
    if not open_:
        return None
    middle = (lo + hi) / 2
    return min(open_, key=lambda i: (abs(i - middle), i))


def _mark(search: Search, index: int, status: str, step: Step) -> None:
    search.candidates[index] = msgspec.structs.replace(
        search.candidates[index],
        status=SKIP if status == UNDECIDED else status,
        ratio=step.ratio,
        ci95=step.ci95,
        verdict=step.verdict,
        plan=step.plan or None,
        comparison_id=step.comparison_id if step.comparison_id is not UNSET else None,
        reason=step.reason or None,
        against=search.candidates[step.reference].rev,
    )


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _step(
    store: BisectRecords,
    spec: Spec,
    search: Search,
    bisection_id: int,
    ref_i: int,
    cand_i: int,
    repo: Path | None,
    root: Path,
    observer: "Observer | None",
    *,
    endpoint: bool,
) -> Step:
    """One controlled comparison: candidate ``cand_i`` against reference ``ref_i``."""
    candidates = [cand.Candidate(c.rev, c.title) for c in search.candidates]
    ref_c, new_c = candidates[ref_i], candidates[cand_i]
    number = len(search.steps) + 1

    def step_of(**outcome: Any) -> Step:
        return Step(
            step=number,
            endpoint=endpoint,
            reference=ref_i,
            candidate=cand_i,
            rev=new_c.rev,
            against=ref_c.rev,
            **outcome,
        )

    workspaces = {}
    for i, c in ((ref_i, ref_c), (cand_i, new_c)):
        ws = cand.prepare(c, repo=repo, root=root)
        why = cand.build(spec.build, c, ws, spec.timeout_s)
        if why and (i == ref_i or endpoint):
            raise WbError(f"{'the reference' if i == ref_i else 'the bad endpoint'} {c.short} does not build: {why}")
        if why:  # a candidate that does not build is skipped, like git bisect skip
            return step_of(verdict=None, ratio=None, ci95=None, klass=UNDECIDED, reason=why)
        workspaces[i] = ws
    current = search.current
    plan_name = (
        current.plan if current is not None and (current.reference, current.candidate) == (ref_i, cand_i) else None
    )
    if plan_name is None:
        plan_name = _make_plan(store, spec, number, ref_c, new_c, workspaces[ref_i], workspaces[cand_i])
        search.current = Current(plan=plan_name, reference=ref_i, candidate=cand_i, endpoint=endpoint)
        _save(store, bisection_id, search, BISECTING)
    result, comparison_id = execute(store, plan_name, root, observer)
    seq = result.sequential
    lo, hi = seq.repeated_ci95 if seq else (None, None)
    ci: Interval | None = (lo, hi) if _finite(lo) is not None and _finite(hi) is not None else None  # type: ignore[assignment]
    klass = UNSET
    if not endpoint:
        assert search.endpoint is not None and search.endpoint.ratio is not None
        klass = classify(result.verdict, ci or (math.nan, math.nan), search.endpoint.ratio)
    step = step_of(
        verdict=result.verdict,
        ratio=_finite(seq.ratio) if seq else None,
        ci95=ci,
        plan=plan_name,
        comparison_id=comparison_id,
        rounds_used=len(result.rounds.used),
        stopped_at_round=seq.stopped_at_round if seq else None,
        why=result.reason,
        klass=klass,
    )
    search.current = None
    return step


def _make_plan(
    store: BisectRecords,
    spec: Spec,
    number: int,
    ref_c: cand.Candidate,
    new_c: cand.Candidate,
    ref_ws: Path,
    new_ws: Path,
) -> str:
    name = f"{spec.name}-step{number}-{new_c.short}"
    # A seed drawn from the step's name: the arm orders are recorded and reproducible.
    seed = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)
    data: dict[str, object] = {
        "name": name,
        "seed": seed,
        "lens": spec.lens,
        "rounds": spec.max_rounds,
        "stopping": "sequential",
        "spending": spec.spending,
        "delta": spec.delta,
        "timeout_s": spec.timeout_s,
        "higher_is_better": spec.higher_is_better,
        "description": f"bisection {spec.name}: {new_c.short} against {ref_c.short}",
        "baseline": {"argv": cand.substitute(spec.bench, ref_c, ref_ws), "cwd": str(ref_ws)},
        "candidate": {"argv": cand.substitute(spec.bench, new_c, new_ws), "cwd": str(new_ws)},
    }
    for key in ("metric", "statistic"):
        if getattr(spec, key):
            data[key] = getattr(spec, key)
    store.save_plan(build_plan(data), spec.investigation)  # its steps are its investigation's
    return name


def _result(search: Search) -> Result:
    lo, hi = search.lo, search.hi
    cs = search.candidates
    skipped = tuple(c.rev for c in cs if c.status == SKIP)
    splits = tuple(search.splits)
    if all(cs[i].status == SKIP for i in range(lo + 1, hi)):
        bad, good = cs[hi], cs[lo]
        if hi - lo == 1:
            effect = ""
            if bad.ci95 and bad.ratio is not None and bad.against:
                effect = f"θ {bad.ratio:.3f} [{bad.ci95[0]:.3f}, {bad.ci95[1]:.3f}] against `{bad.against[:12]}`"
            text = f"first bad: `{bad.rev[:12]}` ({bad.title}) — {effect}; last good: `{good.rev[:12]}`"
            outcome = "found"
        else:
            between = [c.rev[:12] for c in cs[lo + 1 : hi + 1]]
            text = (
                f"the first bad change is one of {', '.join(f'`{r}`' for r in between)} "
                f"(undecided candidates in between were skipped); last good: `{good.rev[:12]}`"
            )
            outcome = "range"
        if splits:
            text += "; the regression is split across changes: " + ", ".join(
                f"`{sp.rev[:12]}` carries θ {sp.ratio:.3f} of {sp.of:.3f}" for sp in splits
            )
        return Result(
            outcome=outcome,
            first_bad=bad.rev if outcome == "found" else None,
            last_good=good.rev,
            text=text,
            skipped=skipped,
            splits=splits,
        )
    return Result(
        outcome="unfinished", text="the search stopped before the range closed", skipped=skipped, splits=splits
    )


def _pin(store: BisectRecords, spec: Spec, search: Search) -> None:
    """The result as an observation (not a cause) with the decisive comparisons as evidence."""
    assert search.result is not None and spec.investigation is not None
    evidence = [
        {"kind": "rerun_comparison", "id": s.comparison_id, "rev": s.rev, "against": s.against, "verdict": s.verdict}
        for s in search.steps
        if s.comparison_id is not UNSET
    ]
    if evidence:
        store.pin(spec.investigation, f"bisection {spec.name}: {search.result.text}", evidence)


def report(store: "BisectRecords | Store", ref: str | int | None) -> BisectionReport:
    """The bisection as stored, typed (``wb bisect status|report``)."""
    bisection_id, spec, state, status = load(store, ref)
    return BisectionReport.of(bisection_id, status, spec, state)
