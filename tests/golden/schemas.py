"""The JSON Schemas in docs/schema/, generated from the typed results (msgspec.json.schema).

``python -m tests.golden.regen`` rewrites them with the goldens; tests/golden/test_schemas.py
checks that the committed files match the types.
"""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCHEMA_DIR = REPO / "docs" / "schema"


def schemas() -> dict[str, str]:
    """File name -> schema text, for each typed result that is a ``--json`` contract."""
    import msgspec

    from workbench.actions.records import ActionView, WatchResult
    from workbench.bisect.result import BisectionReport
    from workbench.compare.parameters import ComparisonParameters
    from workbench.compare.results import Effect
    from workbench.compare.sweep_result import SweepComparison
    from workbench.diagnostics.result import DiagnosisReport
    from workbench.investigations.views import InvestigationSummary, InvestigationView
    from workbench.rerun.comparison import RerunReport
    from workbench.rerun.plan import Plan
    from workbench.rerun.plan_summary import PlanList, PlanSaved
    from workbench.rerun.preflight import PreflightReport

    types = {
        "investigation.json": InvestigationView,  # wb investigate show --json
        "investigation-list.json": list[InvestigationSummary],  # wb investigate list --json
        "comparison-parameters.json": ComparisonParameters,  # a stored comparison's parameters
        "comparison-effect.json": Effect,  # wb compare --json: primary.effect, phases[].effect, metrics[].effect
        "sweep-comparison.json": SweepComparison,  # wb compare SWEEP --vs SWEEP --json
        "rerun-report.json": RerunReport,  # wb rerun report|run|resume --json, and the stored comparison
        "rerun-plan.json": Plan,  # a stored rerun plan (rerun_plan.body, a bundle's recipe.rerun_plans[])
        "rerun-plan-saved.json": PlanSaved,  # wb rerun plan --json
        "rerun-plan-list.json": PlanList,  # wb rerun plan --list --json
        "preflight.json": PreflightReport,  # wb doctor --json, and each rerun execution's preflights
        "diagnosis.json": DiagnosisReport,  # wb diagnose --json
        "bisection.json": BisectionReport,  # wb bisect start|resume|status|report --json
        "action.json": ActionView,  # wb action propose|approve|reject|verify|show --json
        "action-list.json": list[ActionView],  # wb action list --json
        "action-watch.json": WatchResult,  # wb action watch --json
    }
    return {name: json.dumps(msgspec.json.schema(t), indent=2, sort_keys=True) + "\n" for name, t in types.items()}


def write() -> list[Path]:
    SCHEMA_DIR.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in schemas().items():
        path = SCHEMA_DIR / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed
