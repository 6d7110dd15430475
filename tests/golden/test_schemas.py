"""docs/schema/*.json are the typed results' JSON Schemas, generated (python -m tests.golden.regen)."""

from __future__ import annotations

import json

import pytest

from tests.golden.schemas import SCHEMA_DIR, schemas


@pytest.mark.parametrize("name", sorted(schemas()))
def test_committed_schema_matches_the_types(name):
    path = SCHEMA_DIR / name
    assert path.is_file(), f"{path} missing: run python -m tests.golden.regen"
    assert path.read_text(encoding="utf-8") == schemas()[name], f"{path} is stale: run python -m tests.golden.regen"


def test_investigation_golden_validates_against_its_types():
    """The golden `wb investigate show --json` decodes into InvestigationView and encodes back to the same JSON."""
    from tests.golden.cases import golden_path
    from workbench.investigations.views import InvestigationSummary, InvestigationView

    for n in (1, 2, 3):
        doc = json.loads(golden_path(f"demo_investigate_show_{n}").read_text(encoding="utf-8"))["document"]
        assert InvestigationView.from_json(doc).to_json() == doc
    for row in json.loads(golden_path("demo_investigate_list").read_text(encoding="utf-8"))["document"]:
        assert InvestigationSummary.from_json(row).to_json() == row


@pytest.mark.parametrize("case", ["rerun_report_fixed", "rerun_report_sequential", "rerun_report_failing"])
def test_rerun_report_golden_round_trips_through_its_type(case):
    """The golden `wb rerun report --json` decodes into RerunReport and encodes back key for key, in order."""
    from tests.golden.cases import golden_path
    from workbench.rerun.comparison import RerunReport

    text = golden_path(case).read_text(encoding="utf-8").replace('"wall_s": "<MASKED>"', '"wall_s": 0.25')
    doc = json.loads(text)["document"]
    again = RerunReport.from_json(doc).to_json()
    assert json.dumps(again) == json.dumps(doc)
    stored = RerunReport.from_json(doc).stored().to_json()
    assert "comparison_id" not in stored and list(stored) == list(doc)[1:]


@pytest.mark.parametrize(
    "case",
    [
        "diagnose_xid79",
        "diagnose_tie",
        "diagnose_cuda_oom",
        "diagnose_nvrx_gpu_error",
        "diagnose_nvrx_lock_gil",
        "diagnose_gpud",
    ],
)
def test_diagnosis_golden_round_trips_through_its_type(case):
    """The golden `wb diagnose --json` decodes into DiagnosisReport and encodes back key for key, in order."""
    from tests.golden.cases import golden_path
    from workbench.diagnostics.result import DiagnosisReport

    doc = json.loads(golden_path(case).read_text(encoding="utf-8"))["document"]
    assert json.dumps(DiagnosisReport.from_json(doc).to_json()) == json.dumps(doc)


def test_bisection_golden_round_trips_through_its_type():
    """The golden `wb bisect report --json` decodes into BisectionReport and encodes back key for key, in order."""
    from tests.golden.cases import golden_path
    from workbench.bisect.result import BisectionReport

    doc = json.loads(golden_path("bisect_report_list").read_text(encoding="utf-8"))["document"]
    assert json.dumps(BisectionReport.from_json(doc).to_json()) == json.dumps(doc)


def test_rerun_plan_golden_round_trips_through_its_type():
    """The golden `wb rerun plan --json` decodes into PlanSaved (a typed Plan inside) and encodes back."""
    from tests.golden.cases import golden_path
    from workbench.rerun.plan_summary import PlanSaved

    text = (
        golden_path("rerun_plan_full")
        .read_text(encoding="utf-8")
        .replace('"environment": "<MASKED>"', '"environment": {}')
    )
    doc = json.loads(text)["document"]
    saved = PlanSaved.from_json(doc)
    assert saved.plan.warmup.steps == "auto" and saved.plan.guardrails[-1].name == "cap"
    assert json.dumps(saved.to_json()) == json.dumps(doc)
