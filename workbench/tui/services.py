"""What the TUI asks of the headless core, in plain values (called from worker threads).

Each function takes the app's :class:`~workbench.usecases.transport.Workbench` (a local store's,
or a server's: ``wb --server URL``) and runs the use cases (``workbench.usecases``) the command
line runs, returning their typed records (the investigation views of
``workbench.investigations.views``, the doors' records) or strings, never ORM rows, so nothing
crosses threads that should not. The jobs of each pane live in their own module
(``compare_jobs``, ``inspect_jobs``, ``share_jobs``, ``verify_jobs``); the stages reach them
through this one namespace (so a test can stand in for one), the investigation's own steps are here.
"""

from __future__ import annotations

from store.api import RunSummary
from store.records import Dimension
from workbench.errors import UsageError
from workbench.investigations.common import current_user
from workbench.investigations.evidence import parse_decision_evidence, split_items
from workbench.bisect.workflow import BisectionRow as BisectionRow  # the Verify list's rows
from workbench.investigations.views import HypothesisView, InvestigationSummary, InvestigationView, ObservationView
from workbench.rerun.workflow import PlanHistory as PlanHistory  # the Verify list's rows

# The panes' jobs, each in its module; the stages call them through this namespace.
from workbench.tui.compare_jobs import (
    Changes as Changes,
    CompareOutcome as CompareOutcome,
    compare_and_store as compare_and_store,
    comparison_report as comparison_report,
    WAY_OUT_KEYS as WAY_OUT_KEYS,
    way_out_text as way_out_text,
    Sweep as Sweep,
    sweeps as sweeps,
    sweep_report as sweep_report,
)
from workbench.tui.shell_text import shell_lines as shell_lines
from workbench.compare.way_out import Declarable as Declarable, PLACEHOLDER as PLACEHOLDER
from workbench.tui.declaring import missing_declarations as missing_declarations, declare_missing as declare_missing
from workbench.tui.inspect_jobs import (
    SPARK_W as SPARK_W,
    RunSpark as RunSpark,
    run_sparks as run_sparks,
    sparklines as sparklines,
    latest_comparison as latest_comparison,
    inspect_text as inspect_text,
    derived_texts as derived_texts,
    pin_from_comparison as pin_from_comparison,
)
from workbench.tui.share_jobs import (
    EMBED_BY_DEFAULT_BYTES as EMBED_BY_DEFAULT_BYTES,
    default_bundle_path as default_bundle_path,
    BundleSizes as BundleSizes,
    bundle_sizes as bundle_sizes,
    ExportResult as ExportResult,
    export_bundle as export_bundle,
    verify_bundle_text as verify_bundle_text,
    ReportWritten as ReportWritten,
    report_beside as report_beside,
)
from workbench.tui.verify_jobs import (
    plans as plans,
    bisections as bisections,
    bisection_text as bisection_text,
    plan_text as plan_text,
    ARMS as ARMS,
    command_lines as command_lines,
    CPU_STEP_ARGS as CPU_STEP_ARGS,
    CPU_STEPS as CPU_STEPS,
    DEFAULT_SLOWDOWN_PCT as DEFAULT_SLOWDOWN_PCT,
    DEFAULT_ROUNDS as DEFAULT_ROUNDS,
    cpu_plan_lens as cpu_plan_lens,
    calibrate as calibrate,
    estimated_seconds as estimated_seconds,
    new_cpu_plan as new_cpu_plan,
    plan_estimate as plan_estimate,
    RunObserver as RunObserver,
    run_plan as run_plan,
)
from workbench.usecases.investigations import (
    DecideHypothesis,
    Hypothesize,
    ListInvestigations,
    NewInvestigation,
    Observe,
    ShowInvestigation,
)
from workbench.usecases.runs import ListRuns
from workbench.usecases.transport import Workbench


def investigations(wb: Workbench) -> list[InvestigationSummary]:
    return wb.call(ListInvestigations()).items


def investigation(wb: Workbench, inv_id: int) -> InvestigationView:
    return wb.call(ShowInvestigation(investigation=str(inv_id)))


def new_investigation(wb: Workbench, lens: str, question: str, guardrails: list[str]) -> InvestigationView:
    return wb.call(NewInvestigation(lens=lens, question=question, guardrails=guardrails, by=current_user()))


def runs(wb: Workbench, lens: str) -> list[RunSummary]:
    """The lens's runs (``wb runs --lens``), as the run list holds them."""
    return [
        RunSummary(
            id=r["id"],
            lens=r["lens"],
            label=r["label"],
            dimensions={k: Dimension(v, r["dimension_sources"][k]) for k, v in r["dimensions"].items()},
            window=r["window"],
            sample_count=r["samples"],
            origin=r["origin"],
            created_at=r["created_at"],
        )
        for r in wb.call(ListRuns(lens=lens)).runs
    ]


def add_hypothesis(wb: Workbench, inv_id: int, statement: str, test: str, test_kind: str = "rerun") -> HypothesisView:
    return wb.call(
        Hypothesize(investigation=str(inv_id), statement=statement, test=test, test_kind=test_kind, by=current_user())
    )


def check_evidence(text: str) -> str | None:
    """The dialog's one-line evidence ("plan=3, comparison=2"), checked before anything is
    stored: ``None`` when it parses, else the one-line reason (the dialog keeps the text)."""
    try:
        parse_decision_evidence(split_items(text))
    except UsageError as exc:
        return str(exc)
    return None


def set_status(wb: Workbench, hypothesis_id: int, status: str, evidence: list[str] | str, note: str) -> HypothesisView:
    """``evidence``: ``KIND=VALUE`` items, or the dialog's one line ("plan=3, comparison=2")."""
    req = DecideHypothesis(
        hypothesis=str(hypothesis_id),
        status=status,  # type: ignore[arg-type]
        evidence=evidence,
        note=note,
        by=current_user(),
    )
    return wb.call(req)


def retract(wb: Workbench, observation_id: int, reason: str) -> ObservationView:
    pinned = wb.call(Observe(investigation="", retract=str(observation_id), text=reason, by=current_user()))
    return ObservationView.from_json(pinned.items[0])
