"""The Verify pane's jobs (worker threads): rerun plans and bisections through the use cases
(``usecases.reruns``: their doors, on the store the workbench holds or a server's), the plan's
text, the one-key CPU plan with its calibration run, and the executor's progress as events for
the pane (the runs run here; their records go where the store is)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from threading import Event
from typing import TYPE_CHECKING

from textual.message import Message

import captures
from workbench.bisect.format import render_bisection
from workbench.bisect.workflow import BisectionRow
from workbench.errors import UsageError
from workbench.rerun.command_diff import diff_commands, wrap_words
from workbench.rerun.execute import Executor, Observer
from workbench.rerun.plan import Plan, build_plan, schedule, warmup_slots
from workbench.rerun.preflight import run_preflight
from workbench.rerun.report import render_rerun_report
from workbench.rerun.workflow import PlanHistory
from workbench.textsafe import clean
from workbench.tui.messages import RunBegan, RunEnded, RunFinished, RunStarted
from workbench.usecases.reruns import (
    ListBisections,
    ListPlanHistories,
    LoadPlan,
    PlanReport,
    SavePlan,
    ShowBisection,
    ShowPlanDetail,
    WorkbenchLedger,
)
from workbench.usecases.transport import Workbench

if TYPE_CHECKING:
    from workbench.rerun.execute import Outcome


def plans(wb: Workbench) -> list[PlanHistory]:
    """Every rerun plan with its executions, for the Verify list."""
    return wb.call(ListPlanHistories()).items


def bisections(wb: Workbench) -> list[BisectionRow]:
    """Every bisection, for the Verify list: name, status, steps done, the open range."""
    return wb.call(ListBisections()).items


def bisection_text(wb: Workbench, bisection_id: int) -> str:
    """The bisection's report (``wb bisect status``), and how to carry it on from a shell."""
    doc = wb.call(ShowBisection(bisection=str(bisection_id)))
    hint = (
        ""
        if doc.status in ("done", "no-regression")
        else f"\n\nIt runs from a shell (builds and benchmarks take a while): wb bisect resume {clean(doc.name)}"
    )
    return render_bisection(doc) + hint


def plan_text(wb: Workbench, plan_id: int) -> str:
    """The plan's commands and schedule, its last preflight and its latest comparison."""
    detail = wb.call(ShowPlanDetail(plan=str(plan_id)))
    plan, last, pf = detail.stored.plan, detail.last, detail.preflight
    lines = [
        f"plan {detail.stored.id} {clean(plan.name)} ({plan.lens}, origin {clean(plan.origin)}): {plan.rounds} rounds, "
        f"{plan.order} order, seed {plan.seed}"
    ]
    if plan.description:
        lines += textwrap.wrap(clean(plan.description), 78, initial_indent="  ", subsequent_indent="  ")
    if last is None:
        lines.append("not run yet: press r to preflight and run it")
    else:
        lines.append(f"execution {last.id}: {last.status}")
    if pf is not None:
        lines.append(f"preflight: GPU {clean(pf.gpu.status)}; blockers: {clean('; '.join(pf.blockers) or 'none')}")
    if detail.comparison is not None:
        lines += ["", render_rerun_report(detail.comparison)]
    lines += ["", *command_lines(plan)]  # last: long lines, and the verdict matters more on a small screen
    return "\n".join(lines)


ARMS = (("A ", "A"), ("B ", "B"), ("A′", "A'"))


def command_lines(plan: Plan, width: int = 76) -> list[str]:
    """The arms' commands as what they share once and what each adds (marked ``»``, so it
    reads without colour), then each full command wrapped, never cut at the screen's edge."""
    argvs = [[clean(w) for w in plan.command(arm).argv] for _, arm in ARMS]
    diff = diff_commands(argvs)
    lines = ["Commands: what differs between the arms (» marks each arm's own words)"]
    if diff.common_prefix:
        lines += ["  every arm starts with", *wrap_words(diff.common_prefix, width)]
    for (label, _), own in zip(ARMS, diff.own):
        lines += [f"  {label} » {shlex.join(own)}" if own else f"  {label}   (nothing of its own)"]
    if diff.common_suffix:
        lines += ["  every arm ends with", *wrap_words(diff.common_suffix, width)]
    lines += ["", "Full commands"]
    for (label, _), argv in zip(ARMS, argvs):
        lines += [f"  {label}", *wrap_words(argv, width)]
    return lines


# The one-key plan: CPU-clocked steps of a known cost (>= 5 ms each), so that a 5 % slowdown
# stands far above the noise even on a busy 2-core machine (docs/verify.md, section 6).
CPU_STEP_ARGS = ["--size", "8", "--wait-ms", "5", "--clock", "cpu", "--warmup", "2"]
CPU_STEPS = {"training": 20, "inference": 80}  # inference: p95 needs at least 72 requests
DEFAULT_SLOWDOWN_PCT = 5.0
DEFAULT_ROUNDS = 5


def _workload() -> str:
    return str(Path(captures.__file__).resolve().parent / "workloads" / "cpu_workload.py")


def cpu_plan_lens(lens: str | None) -> str:
    """The lens a CPU plan records in: the investigation's, where the workload can speak it."""
    if lens in (None, "training", "inference"):
        return lens or "training"
    raise UsageError(
        f"the bundled CPU workload cannot stand in for a {lens} investigation: "
        "wrap your own benchmark with wb rerun plan (docs/verify.md)"
    )


def calibrate(argv: list[str]) -> float:
    """Seconds one run of ``argv`` takes here (one real run, its capture thrown away)."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        subprocess.run(
            argv,
            env={**os.environ, "WB_CAPTURE_OUT": str(Path(tmp) / "calibration.json")},
            check=True,
            capture_output=True,
            timeout=120,
        )
        return time.perf_counter() - start


def estimated_seconds(plan: Plan, run_s: float) -> float:
    return (len(warmup_slots(plan)) + len(schedule(plan))) * run_s


def new_cpu_plan(
    wb: Workbench,
    name: str,
    slowdown_pct: float = DEFAULT_SLOWDOWN_PCT,
    rounds: int = DEFAULT_ROUNDS,
    lens: str | None = None,
    investigation: int | None = None,
) -> int:
    """A plan over the bundled CPU workload in the investigation's lens, the candidate
    slowed by ``slowdown_pct``; one calibration run puts the estimated duration in its description.
    ``investigation``: the open one, which the plan belongs to (its results are evidence there)."""

    lens = cpu_plan_lens(lens)
    script = _workload()
    base = [sys.executable, script, "--lens", lens, "--steps", str(CPU_STEPS[lens]), *CPU_STEP_ARGS]
    data = {
        "name": name,
        "lens": lens,
        "rounds": rounds,
        "baseline": {"argv": base},
        "candidate": {"argv": [*base, "--slowdown", f"{slowdown_pct:g}"]},
        "artifacts": [{"path": script, "role": "executable"}],
    }
    run_s = calibrate(base)
    plan = build_plan(data)
    data["description"] = (
        f"bundled CPU workload, {CPU_STEPS[lens]} CPU-clocked steps of 5 ms per run; candidate +{slowdown_pct:g} %; "
        f"calibrated: {run_s:.1f} s a run here, estimated {estimated_seconds(plan, run_s):.0f} s in all"
    )
    # Made for this machine; saved with the investigation's frame guardrails (judged at Verify, as in wb rerun plan).
    plan = build_plan(data).with_environment(run_preflight().environment)
    saved = wb.call(SavePlan(plan=plan, investigation=None if investigation is None else str(investigation)))
    return saved.saved.id


def plan_estimate(wb: Workbench, plan_id: int) -> str:
    """What the plan's description says of its duration, or what its schedule implies."""
    plan = wb.call(LoadPlan(plan=str(plan_id))).plan
    runs = len(warmup_slots(plan)) + len(schedule(plan))
    calibrated = plan.description.split("calibrated: ", 1)[1] if "calibrated: " in plan.description else ""
    return f"{runs} runs; {calibrated}" if calibrated else f"{runs} runs; duration unknown until the first run finishes"


class RunObserver(Observer):
    """Receives the executor's progress (worker thread) and posts it to the pane as messages."""

    def __init__(self, post: Callable[[Message], object], stop: Event) -> None:
        self._post = post  # thread-safe (a widget's post_message)
        self._stop = stop

    def begin(self, plan: Plan, execution_id: int, total: int, done: int) -> None:
        self._post(RunBegan(execution_id, total, done))

    def run_started(self, index: int, round_: int, arm: str, argv: list[str]) -> None:
        self._post(RunStarted(index, round_, arm))

    def run_finished(self, outcome: "Outcome", live: dict[str, float]) -> None:
        self._post(RunFinished(outcome.slot, outcome.status, live))

    def end(self, status: str) -> None:
        self._post(RunEnded(status))

    def should_stop(self) -> bool:
        return self._stop.is_set()


def run_plan(wb: Workbench, plan_id: int, observer: RunObserver) -> str:
    """Preflight, run (or resume) the plan's execution here, and store its comparison where the
    store is."""
    executor = Executor(WorkbenchLedger(wb), plan_id, observer=observer)
    execution_id = executor.resume_or_start()
    status = executor.run(execution_id)
    done = wb.call(PlanReport(plan=str(plan_id), execution=execution_id))
    head = f"execution {done.report.execution.id}: {status}"
    return "\n".join([head, render_rerun_report(done.report)])
