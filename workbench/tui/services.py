"""What the TUI asks of the headless core, in plain values (called from worker threads).

Each function takes the store and returns typed records (the investigation views of
``workbench.investigations.views``, the doors' records) or strings, never ORM rows, so
nothing crosses threads that should not. The jobs of each pane live in their own module
(``compare_jobs``, ``inspect_jobs``, ``share_jobs``, ``verify_jobs``); the stages reach them
through this one namespace (so a test can stand in for one), the investigation's own steps are here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.errors import UsageError
from workbench.investigations import workflow as wf
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

if TYPE_CHECKING:
    from store.api import RunSummary, Store


def investigations(store: "Store") -> list[InvestigationSummary]:
    return wf.investigation_summaries(store)


def investigation(store: "Store", inv_id: int) -> InvestigationView:
    return wf.investigation_view(store, inv_id)


def new_investigation(store: "Store", lens: str, question: str, guardrails: list[str]) -> InvestigationView:
    return wf.new_investigation(store, lens=lens, question=question, guardrails=guardrails)


def runs(store: "Store", lens: str) -> list["RunSummary"]:
    return store.list_runs(lens)


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
