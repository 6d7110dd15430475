"""The status rule (workbench.bundle.action_status): each reason an action is not verified,
judged from the rerun comparison's data through the contract's expected_effect."""

from __future__ import annotations

import pytest

from workbench.bundle.action_status import derive_status
from workbench.compare.contract import expected_effect

ACTION = {
    "kind": "configuration",
    "changes": {"engine_config.max_num_seqs": ["128", "256"]},
    "expect": {"metric": "queue_ms", "direction": "decrease"},
    "retry": {},
}
PLAN = {"name": "p", "metric": "queue_ms", "higher_is_better": False, "change": {"engine_config": []}}
APPROVED = [{"decision": "approved", "by": "dana", "why": "ok"}]
LINKED = {"plan_id": 1, "plan": "p", "observed": {}}


def report(**over):
    base = {
        "execution": {"status": "complete"},
        "verdict": "IMPROVEMENT",
        "refusal": None,
        "guardrails": [],
        "dimensions": [
            {"name": "engine_config", "baseline": {"max_num_seqs": 128}, "candidate": {"max_num_seqs": 256}}
        ],
    }
    return base | over


@pytest.mark.parametrize(
    ("doc", "status", "reason"),
    [
        (report(), "verified", None),
        (report(refusal={"dimension": "hardware", "reason": "hardware differs"}), "not verified", "refused"),
        (report(verdict="INCONCLUSIVE"), "not verified", "underpowered"),
        (report(verdict="FASTER_UNRESOLVED"), "not verified", "underpowered"),
        (report(verdict=None), "not verified", "underpowered"),
        (report(guardrails=[{"name": "error_rate", "status": "broken"}]), "not verified", "guardrail broken"),
        (report(verdict="REGRESSION"), "not verified", "wrong direction"),
        (report(verdict="EQUIVALENT"), "not verified", "wrong direction"),
        (
            report(
                dimensions=[
                    {"name": "engine_config", "baseline": {"max_num_seqs": 128}, "candidate": {"max_num_seqs": 128}}
                ]
            ),
            "not verified",
            "not embodied",
        ),
        (report(execution={"status": "interrupted"}), "pending", None),
    ],
)
def test_each_reason_comes_from_the_data(doc, status, reason):
    got = derive_status(ACTION, APPROVED, LINKED, PLAN, doc)
    assert (got["status"], got["reason"]) == (status, reason), got


def test_before_approval_and_before_a_comparison():
    assert derive_status(ACTION, [], None)["status"] == "proposed"
    assert (
        derive_status(
            ACTION, [*APPROVED, {"decision": "rejected", "by": "lee", "why": "risky"}], LINKED, PLAN, report()
        )["status"]
        == "rejected"
    )
    assert derive_status(ACTION, APPROVED, None)["status"] == "pending"
    assert derive_status(ACTION, APPROVED, LINKED, PLAN, None)["status"] == "pending"
    undeclared = derive_status(ACTION, APPROVED, LINKED, {**PLAN, "change": {}}, report())
    assert (undeclared["status"], undeclared["reason"]) == ("not verified", "not embodied")


def test_an_unstated_setting_is_verified_with_the_caveat_not_assumed():
    got = derive_status(ACTION, APPROVED, LINKED, PLAN, report(dimensions=[]))
    assert got["status"] == "verified" and "no capture states engine_config.max_num_seqs" in got["why"]


@pytest.mark.parametrize(
    ("direction", "verdict", "higher", "outcome"),
    [
        ("decrease", "IMPROVEMENT", False, "met"),
        ("increase", "IMPROVEMENT", True, "met"),
        ("increase", "REGRESSION", False, "met"),
        ("decrease", "IMPROVEMENT", True, "wrong direction"),
        ("recovery", "EQUIVALENT", False, "met"),
        ("recovery", "REGRESSION", False, "wrong direction"),
        ("recovery", "INCONCLUSIVE", False, "underpowered"),
    ],
)
def test_expected_effect_is_the_contracts(direction, verdict, higher, outcome):
    assert expected_effect(direction, verdict, higher)[0] == outcome


def test_a_retry_needs_a_changed_condition_and_unknown_is_not_changed():
    retry = {"kind": "retry", "changes": {}, "expect": {}, "retry": {"conditions": {"node": ["node-0"], "gpu": "3"}}}
    same = derive_status(retry, APPROVED, {"observed": {"conditions": {"node": ["node-0"]}}})
    assert same["reason"] == "conditions unchanged" and "not known for the retry: gpu" in same["why"]
    moved = derive_status(retry, APPROVED, {"observed": {"conditions": {"node": ["node-1"], "gpu": "3"}}})
    assert moved["status"] == "verified" and "node node-0 -> node-1" in moved["why"]
