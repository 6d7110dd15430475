"""What the TUI asks of the headless core, in plain values (called from worker threads).

Each function takes the store and returns typed records (the investigation views of
``workbench.investigations.views``, frozen dataclasses) or strings, never ORM rows, so
nothing crosses threads that should not.
"""

from __future__ import annotations

import math
import os
import shlex
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from threading import Event
from typing import TYPE_CHECKING

import captures
from lenses import builtin_lens
from store.engine import default_data_dir
from workbench.bisect.format import format_report as format_bisection
from workbench.bundle.export import dumps, write_bundle
from workbench.bundle.reader import read_bundle_file
from workbench.bundle.verify import format_report, verify_bundle
from workbench.compare import inspect
from workbench.compare.charts import sparkline
from workbench.compare.fmt import qty
from workbench.compare.host_activity import between, render_host
from workbench.compare.inspect_data import series
from workbench.compare.model import Comparison
from workbench.compare.parameters import Value
from workbench.compare.render import render_comparison, render_inspect
from workbench.compare.sweep import compare_sweeps, sweep_of
from workbench.compare.sweep_render import render_sweep_comparison
from workbench.compare.way_out import render_way_out, rerun_words, way_out
from workbench.errors import UsageError
from workbench.investigations import workflow as wf
from workbench.investigations.bundling import export_investigation
from workbench.investigations.evidence import parse_decision_evidence, split_items
from workbench.investigations.frame import frame_guardrails, investigation_view
from workbench.investigations.views import ComparisonView, HypothesisView, InvestigationSummary, InvestigationView, ObservationView
from workbench.rerun.command_diff import diff_commands, wrap_words
from workbench.rerun.plan import Plan, build_plan, schedule, warmup_slots, with_frame_guardrails
from workbench.rerun.report import build_comparison, format_comparison, reanalyze, save_comparison
from workbench.textsafe import clean

if TYPE_CHECKING:
    from store.api import RunSummary, Store
    from store.records import RunRecord
    from workbench.rerun.execute import Outcome

Changes = dict[str, list[Value]]  # the intended change, {dimension: [from, to]}


@dataclass(frozen=True)
class CompareOutcome:
    comparison: ComparisonView  # the stored comparison
    text: str  # the rendered report (plain text, strings from captures cleaned)


def investigations(store: "Store") -> list[InvestigationSummary]:
    return wf.investigation_summaries(store)


def investigation(store: "Store", inv_id: int) -> InvestigationView:
    return wf.investigation_view(store, inv_id)


def new_investigation(store: "Store", lens: str, question: str, guardrails: list[str]) -> InvestigationView:
    return wf.new_investigation(store, lens=lens, question=question, guardrails=guardrails)


def runs(store: "Store", lens: str) -> list["RunSummary"]:
    return store.list_runs(lens)


def compare_and_store(store: "Store", inv_id: int, baseline: list[int], candidate: list[int], accepts: dict[str, str],
                      changes: Changes | None = None, control: list[int] | None = None) -> CompareOutcome:
    """Run the compare engine, store the comparison in the investigation, render it (the
    stored result, decoded: what is shown is what was stored). ``control``: A/A control
    runs (baseline again), stored with the comparison."""
    view = wf.store_comparison(store, inv_id, baseline, candidate, accepts=accepts, changes=changes, control=control or ())
    return CompareOutcome(view, comparison_report(store, view))


def comparison_report(store: "Store", comparison: ComparisonView) -> str:
    """A stored comparison's report: the same renderer as ``wb compare``, on the same typed
    object, with the same way out of a refusal."""
    result = comparison.comparison()
    records = [] if result.comparable else store.load_runs([*comparison.baseline_runs, *comparison.candidate_runs])
    return render_comparison(result) + way_out_text(result, comparison, records)


WAY_OUT_KEYS = ("In the workbench: run a 'wb declare' line from a shell, then press c to compare again; "
                "d declares the change under test; a accepts dimensions (comma separated) with one reason.")


def shell_lines(command: str, indent: int, width: int = 80) -> list[str]:
    """A long shell command over several lines that a shell reads back as one (`` \\``
    continuations, broken only before an option), so it can be read and copied at 80 columns."""
    words, word, quote = [], "", ""
    for ch in command:  # split at spaces outside quotes, each word kept as written
        if ch == " " and not quote:
            words.append(word)
            word = ""
            continue
        quote = "" if ch == quote else ch if ch in "'\"" and not quote else quote
        word += ch
    groups: list[list[str]] = []
    for w in [*words, word]:
        if not groups or w.startswith("--"):
            groups.append([])
        groups[-1].append(w)
    lines, current = [], " " * indent
    for group in (" ".join(g) for g in groups):
        if current.strip() and len(current) + 1 + len(group) + 2 > width:
            lines.append(current + " \\")
            current = " " * (indent + 2)
        current += (" " if current.strip() else "") + group
    return [*lines, current]


def way_out_text(result: Comparison, comparison: ComparisonView, records: Sequence["RunRecord"]) -> str:
    """What ``wb compare`` prints after a refusal (the ``wb declare`` lines, ``--change``,
    ``--accept a,b --why``), its sentences wrapped to 80 columns (commands stay whole, to
    be copied), then the keys that do the same here. Empty when the runs were compared."""
    params = comparison.parameters
    base, cand = list(comparison.baseline_runs), list(comparison.candidate_runs)
    changes = []
    for name, values in params.changes.items():
        old, new = ("" if v is None else str(v) for v in (list(values) + [None, None])[:2])
        changes.append(f"{name}={old}->{new}" if ":" in old + new else f"{name}={old}:{new}" if old or new else str(name))
    words = rerun_words("compare", base, cand, None, changes, dict(params.accepts), (), params.control)
    ways = way_out(result, base, cand, words, records)
    if ways is None:
        return ""
    lines = [""]
    for line in render_way_out(ways):
        indent = len(line) - len(line.lstrip())
        if indent >= 4:  # a command
            lines += shell_lines(line.strip(), indent)
        else:
            lines += textwrap.wrap(line, 78, initial_indent=" " * indent, subsequent_indent=" " * (indent + 1))  # commands sit at 4
    lines += ["", *textwrap.wrap(WAY_OUT_KEYS, 78, subsequent_indent="  ")]
    return "\n".join(lines)


SPARK_W = 50  # the sparkline's cells: 80 columns less the side, id, mean and label


@dataclass(frozen=True)
class RunSpark:
    """A run's primary per-item measure over time, reduced to what its sparkline needs:
    the mean of each of at most ``SPARK_W`` slices, the extremes, the run's mean."""

    label: str
    slices: tuple[float, ...]
    low: float
    high: float
    mean: float


def run_sparks(store: "Store", lens_name: str, run_ids: list[int]) -> dict[int, RunSpark]:
    """Each run's measure over time (requests, steps or job starts in order), reduced once:
    the pane keeps them, so selecting a run again never reads it again."""
    lens = builtin_lens(lens_name)
    out = {}
    for run in store.load_runs(run_ids):
        values = [float(v) for v in next(iter(series(lens, run).values()), [])]
        n, cells = len(values), min(SPARK_W, len(values))
        slices = []
        for i in range(cells):
            chunk = [v for v in values[i * n // cells:(i + 1) * n // cells] if math.isfinite(v)]
            slices.append(sum(chunk) / len(chunk) if chunk else math.nan)
        finite = [v for v in values if math.isfinite(v)]
        out[int(run.id)] = RunSpark(run.label, tuple(slices), min(finite, default=math.nan), max(finite, default=math.nan),
                                    sum(finite) / len(finite) if finite else math.nan)
    return out


def sparklines(lens_name: str, rows: list[tuple[str, int, RunSpark]]) -> str:
    """One line a run (``B`` baseline, ``C`` candidate, ``A`` A′ control), all on one scale,
    the run's mean at the end; fits 80 columns."""
    if not rows:
        return ""
    lows = [r.low for _s, _i, r in rows if math.isfinite(r.low)]
    highs = [r.high for _s, _i, r in rows if math.isfinite(r.high)]
    low, high = (min(lows), max(highs)) if lows else (0.0, 0.0)
    measure = builtin_lens(lens_name).item_measure
    unit, what = (measure.unit, measure.title) if measure else ("", "per-item values")
    lines = [f"Over time: {what}, one scale {qty(low, unit)} .. {qty(high, unit)}",
             "a line per selected run (B baseline, C candidate, A A′ control), then its mean"]
    for side, run_id, r in rows:
        spark = sparkline(list(r.slices), SPARK_W, low, high) if r.slices else "no per-item values"
        mean = qty(r.mean, unit) if math.isfinite(r.mean) else "unknown"
        lines.append(f"{side} {run_id:>4} {spark:<{SPARK_W}} {mean:>9} {clean(r.label)[:12]}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Sweep:
    """A load sweep in the store: one inference run a load level, sharing a sweep id."""

    id: str
    label: str
    tool: str
    runs: tuple[int, ...]  # in level order

    @property
    def name(self) -> str:
        return self.label or self.id


def sweeps(store: "Store") -> list[Sweep]:
    """Every load sweep in the store: id, label, tool and its run ids in level order."""
    found: dict[str, tuple[str, str, list[int]]] = {}
    for run in store.load_runs([r.id for r in store.list_runs("inference")], tables=[]):  # metadata only
        sweep = sweep_of(run)
        if sweep is not None:
            entry = found.setdefault(str(sweep["id"]), (str(sweep.get("label") or ""), str(sweep.get("tool") or run.meta.get("tool") or ""), []))
            entry[2].append(int(run.id))
    return [Sweep(sweep_id, label, tool, tuple(ids)) for sweep_id, (label, tool, ids) in found.items()]


def sweep_report(store: "Store", baseline: Sequence[int], candidate: Sequence[int], changes: Changes | None = None,
                 accepts: dict[str, str] | None = None) -> str:
    """What ``wb compare SWEEP --vs SWEEP`` prints: levels matched by load, saturation,
    the curve, each matched level's metrics (one level's rows in memory at a time)."""
    meta_only = [store.load_runs(list(ids), tables=[]) for ids in (baseline, candidate)]
    doc = compare_sweeps(meta_only[0], meta_only[1], changes={k: tuple(v) for k, v in (changes or {}).items()},
                         accepts=dict(accepts or {}), load=lambda runs: store.load_runs([r.id for r in runs]))
    return render_sweep_comparison(doc)


def latest_comparison(inv: InvestigationView) -> ComparisonView | None:
    return inv.comparisons[-1] if inv.comparisons else None


def inspect_text(store: "Store", inv: InvestigationView) -> str:
    """The Inspect report for the investigation's latest comparison: the engine again on
    the stored parameters, with the per-phase detail (as before, without the A/A control
    runs: the detail is descriptive, and the Compare stage shows the control)."""
    comp = latest_comparison(inv)
    if comp is None:
        return "No comparison yet: pick runs in Compare (2) and press c."
    arguments = {**comp.parameters.engine_arguments(), "lens": comp.parameters.lens or inv.lens}
    baseline, candidate = store.load_runs(list(comp.baseline_runs)), store.load_runs(list(comp.candidate_runs))
    result = inspect(baseline, candidate, **arguments)
    host = between(baseline, candidate) if result.comparison.comparable else None  # a flight recorder's stacks, CPU, GC
    return render_inspect(result) + ("\n\n" + "\n".join(render_host(host)) if host else "")


def derived_texts(comparison: ComparisonView) -> list[str]:
    """The texts of the observations the compare engine derived, in its order (``p`` pins one by index)."""
    return [str(o.get("text", "")) for o in wf.derived_observations(comparison)]


def pin_from_comparison(store: "Store", inv_id: int, comparison: ComparisonView, index: int) -> ObservationView:
    """Pin one of the observations the compare engine derived, citing the comparison."""
    return wf.pin_derived(store, inv_id, comparison, wf.derived_observations(comparison)[index])


def add_hypothesis(store: "Store", inv_id: int, statement: str, test: str) -> HypothesisView:
    return wf.new_hypothesis(store, inv_id, statement, test)


def check_evidence(text: str) -> str | None:
    """The dialog's one-line evidence ("plan=3, comparison=2"), checked before anything is
    stored: ``None`` when it parses, else the one-line reason (the dialog keeps the text)."""
    try:
        parse_decision_evidence(split_items(text))
    except UsageError as exc:
        return str(exc)
    return None


def set_status(store: "Store", hypothesis_id: int, status: str, evidence: list[str] | str, note: str) -> HypothesisView:
    """``evidence``: ``KIND=VALUE`` items, or the dialog's one line ("plan=3, comparison=2")."""
    items = split_items(evidence) if isinstance(evidence, str) else evidence
    return wf.decide_hypothesis(store, hypothesis_id, status, evidence=wf.parse_hypothesis_evidence(items), note=note)


def retract(store: "Store", observation_id: int, reason: str) -> ObservationView:
    return wf.new_retraction(store, observation_id, reason)


# Samples are embedded by default up to this size: a bundle that big still mails and diffs.
EMBED_BY_DEFAULT_BYTES = 16 * 2**20


def default_bundle_path(inv_id: int) -> Path:
    """Where the export dialog proposes to write: wb's data directory, never the working
    directory (which may be a source checkout) unless the user types it."""
    return default_data_dir() / "bundles" / f"investigation-{inv_id}.bundle.json"


@dataclass(frozen=True)
class BundleSizes:
    with_samples: int
    without_samples: int

    @property
    def embed_by_default(self) -> bool:
        return self.with_samples <= EMBED_BY_DEFAULT_BYTES


def bundle_sizes(store: "Store", inv_id: int) -> BundleSizes:
    """The bundle's size in bytes with and without the embedded samples (measured, not guessed)."""
    return BundleSizes(len(dumps(export_investigation(store, inv_id, embed_samples=True)).encode("utf-8")),
                       len(dumps(export_investigation(store, inv_id)).encode("utf-8")))


@dataclass(frozen=True)
class ExportResult:
    path: Path
    checksum: str
    embedded: bool
    valid: bool
    report: str  # `wb evidence verify` (with --recompute when samples are embedded) on the written file


def export_bundle(store: "Store", inv_id: int, path: Path, embed_samples: bool = True) -> ExportResult:
    """Export, then recheck the written file as `wb evidence verify [--recompute]` would."""
    if path.parent == default_bundle_path(inv_id).parent:
        path.parent.mkdir(parents=True, exist_ok=True)  # the proposed place; elsewhere the folder must exist
    bundle = export_investigation(store, inv_id, embed_samples=embed_samples)
    written = write_bundle(bundle, path)
    valid, report = verify_bundle_text(written, recompute=embed_samples)
    return ExportResult(written, str(bundle["checksum"]["value"]), embed_samples, valid, report)


def verify_bundle_text(path: Path, recompute: bool = False) -> tuple[bool, str]:
    """Verify a bundle file offline; (valid, the report as text). ``recompute``: re-derive
    the results from the embedded samples too, as `wb evidence verify --recompute`."""
    report = verify_bundle(read_bundle_file(path), source=path, recompute=recompute,
                           rerun_engine=reanalyze if recompute else None)
    return report.ok, format_report(report)


# -- Verify ------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanRow:
    """A rerun plan in the Verify list: its executions' ids and statuses, oldest first."""

    id: int
    name: str
    lens: str
    origin: str
    executions: tuple[tuple[int, str], ...]

    @property
    def last_status(self) -> str:
        return self.executions[-1][1] if self.executions else "not run"


@dataclass(frozen=True)
class BisectionRow:
    """A bisection in the Verify list: its status, the steps done, the candidates still open."""

    id: int
    name: str
    status: str
    steps: int
    open: int


def plans(store: "Store") -> list[PlanRow]:
    from store.rerun import executions_of, list_plans  # SQLAlchemy tables: the TUI's first frame does without them

    with store.session() as s:
        return [PlanRow(int(p.id), p.name, p.lens, p.origin, tuple((int(e.id), e.status) for e in executions_of(s, int(p.id))))
                for p in list_plans(s)]


def bisections(store: "Store") -> list[BisectionRow]:
    """Every bisection, for the Verify list: name, status, steps done, the open range."""
    from sqlmodel import select  # SQLAlchemy: the TUI's first frame does without it

    from store.bisect import Bisection  # SQLAlchemy tables: the TUI's first frame does without them

    with store.session() as s:
        rows = s.exec(select(Bisection).order_by(Bisection.id)).all()
        return [BisectionRow(int(r.id), r.name, r.status, len(r.state.get("steps") or []),
                             max(int(r.state.get("hi", 0)) - int(r.state.get("lo", 0)) - 1, 0)) for r in rows]


def bisection_text(store: "Store", bisection_id: int) -> str:
    """The bisection's report (``wb bisect status``), and how to carry it on from a shell."""
    from workbench.bisect.bisection import report  # loads the rerun executor and the importers: not for the first frame

    doc = report(store, bisection_id)
    hint = ("" if doc.status in ("done", "no-regression") else
            f"\n\nIt runs from a shell (builds and benchmarks take a while): wb bisect resume {clean(doc.name)}")
    return "\n".join(format_bisection(doc)) + hint


def plan_text(store: "Store", plan_id: int) -> str:
    """The plan's commands and schedule, its last preflight and its latest comparison."""
    from store.rerun import comparisons_of, executions_of, find_plan  # SQLAlchemy tables: the TUI's first frame does without them

    with store.session() as s:
        row = find_plan(s, plan_id)
        plan = Plan.from_json(row.body)
        executions = executions_of(s, int(row.id))
        last = executions[-1] if executions else None
        preflights = list(last.preflights or []) if last else []
        comparisons = comparisons_of(s, int(last.id)) if last else []
        body = dict(comparisons[-1].body) if comparisons else None
    lines = [f"plan {row.id} {clean(plan.name)} ({plan.lens}, origin {clean(plan.origin)}): {plan.rounds} rounds, {plan.order} order, seed {plan.seed}"]
    if plan.description:
        lines += textwrap.wrap(clean(plan.description), 78, initial_indent="  ", subsequent_indent="  ")
    if last is None:
        lines.append("not run yet: press r to preflight and run it")
    else:
        lines.append(f"execution {last.id}: {last.status}")
    if preflights:
        pf = preflights[-1]
        gpu = pf.get("gpu") or {}
        lines.append(f"preflight: GPU {clean(gpu.get('status', 'unknown'))}; blockers: {clean('; '.join(pf.get('blockers') or []) or 'none')}")
    if body:
        lines += ["", *format_comparison(body)]
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
    raise UsageError(f"the bundled CPU workload cannot stand in for a {lens} investigation: "
                     "wrap your own benchmark with wb rerun plan (docs/verify.md)")


def calibrate(argv: list[str]) -> float:
    """Seconds one run of ``argv`` takes here (one real run, its capture thrown away)."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        subprocess.run(argv, env={**os.environ, "WB_CAPTURE_OUT": str(Path(tmp) / "calibration.json")},
                       check=True, capture_output=True, timeout=120)
        return time.perf_counter() - start


def estimated_seconds(plan: Plan, run_s: float) -> float:
    return (len(warmup_slots(plan)) + len(schedule(plan))) * run_s


def new_cpu_plan(store: "Store", name: str, slowdown_pct: float = DEFAULT_SLOWDOWN_PCT, rounds: int = DEFAULT_ROUNDS,
                 lens: str | None = None, investigation: int | None = None) -> int:
    """A plan over the bundled CPU workload in the investigation's lens, the candidate
    slowed by ``slowdown_pct``; one calibration run puts the estimated duration in its description.
    ``investigation``: the open one, which the plan belongs to (its results are evidence there)."""
    from store.rerun import save_plan  # SQLAlchemy tables: the TUI's first frame does without them
    from workbench.rerun.preflight import run_preflight  # loads importlib.metadata: not for the first frame

    lens = cpu_plan_lens(lens)
    script = _workload()
    base = [sys.executable, script, "--lens", lens, "--steps", str(CPU_STEPS[lens]), *CPU_STEP_ARGS]
    data = {
        "name": name, "lens": lens, "rounds": rounds,
        "baseline": {"argv": base}, "candidate": {"argv": [*base, "--slowdown", f"{slowdown_pct:g}"]},
        "artifacts": [{"path": script, "role": "executable"}],
    }
    run_s = calibrate(base)
    plan = build_plan(data)
    data["description"] = (f"bundled CPU workload, {CPU_STEPS[lens]} CPU-clocked steps of 5 ms per run; candidate +{slowdown_pct:g} %; "
                           f"calibrated: {run_s:.1f} s a run here, estimated {estimated_seconds(plan, run_s):.0f} s in all")
    plan = build_plan(data)
    if investigation is not None:  # the investigation's frame guardrails are judged at Verify, as in wb rerun plan
        frame = investigation_view(store, investigation)
        plan = with_frame_guardrails(plan, investigation, frame_guardrails(frame.lens, frame.guardrails))
    plan = plan.with_environment(run_preflight().environment)
    with store.session() as s:
        row, _how = save_plan(s, plan.name, plan.lens, plan.digest(), plan.to_json(), plan.origin, investigation)
        return int(row.id)  # type: ignore[arg-type]


def plan_estimate(store: "Store", plan_id: int) -> str:
    """What the plan's description says of its duration, or what its schedule implies."""
    from store.rerun import find_plan  # SQLAlchemy tables: the TUI's first frame does without them

    with store.session() as s:
        plan = Plan.from_json(find_plan(s, plan_id).body)
    runs = len(warmup_slots(plan)) + len(schedule(plan))
    calibrated = plan.description.split("calibrated: ", 1)[1] if "calibrated: " in plan.description else ""
    return f"{runs} runs; {calibrated}" if calibrated else f"{runs} runs; duration unknown until the first run finishes"


@dataclass(frozen=True)
class RunEvent:
    """The executor's progress, as the Verify pane reads it: ``begin`` (``total`` runs,
    ``done`` already), ``started`` (``round``, ``arm``), ``finished`` (``status``, the
    ``live`` ratios after complete rounds), ``end`` (``status``)."""

    kind: str
    execution: int | None = None
    total: int = 0
    done: int = 0
    index: int | None = None
    round: int = 0
    arm: str = ""
    status: str = ""
    live: Mapping[str, float] = field(default_factory=dict)


class RunObserver:
    """Receives the executor's progress (worker thread) and forwards it to the UI."""

    def __init__(self, post: Callable[[RunEvent], None], stop: Event) -> None:
        self._post = post  # thread-safe
        self._stop = stop

    def begin(self, plan: Plan, execution_id: int, total: int, done: int) -> None:
        self._post(RunEvent("begin", execution=execution_id, total=total, done=done))

    def run_started(self, index: int, round_: int, arm: str, argv: list[str]) -> None:
        self._post(RunEvent("started", index=index, round=round_, arm=arm))

    def run_finished(self, outcome: "Outcome", live: dict[str, float]) -> None:
        self._post(RunEvent("finished", index=outcome.slot, status=outcome.status, live=dict(live)))

    def end(self, status: str) -> None:
        self._post(RunEvent("end", status=status))

    def should_stop(self) -> bool:
        return self._stop.is_set()


def run_plan(store: "Store", plan_id: int, observer: RunObserver) -> str:
    """Preflight, run (or resume) the plan's execution, and store its comparison."""
    from store.rerun import INTERRUPTED, RUNNING, RerunExecution, executions_of, find_plan, runs_of  # SQLAlchemy tables: not for the first frame
    from workbench.rerun.execute import Executor  # loads the importers and importlib.metadata: not for the first frame

    executor = Executor(store, plan_id, observer=observer)
    with store.session() as s:
        unfinished = [e for e in executions_of(s, plan_id) if e.status in (RUNNING, INTERRUPTED)]
    execution_id = executor.reopen() if unfinished else executor.start()
    status = executor.run(execution_id)
    with store.session() as s:
        plan_row = find_plan(s, plan_id)
        execution = s.get(RerunExecution, execution_id)
        body = build_comparison(store, plan_row, execution, runs_of(s, execution_id))
    save_comparison(store, plan_id, execution_id, body)
    head = f"execution {execution_id}: {status}"
    return "\n".join([head, *format_comparison(body)])
