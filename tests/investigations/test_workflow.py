"""Investigations in the store: frame, comparisons, immutable observations, hypotheses."""

import pytest

from store import open_store
from tests.investigations.fakes import FakeComparison, fake_compare, populate
from workbench.errors import NotFound, UsageError, WbError
from workbench.investigations import workflow as wf


@pytest.fixture
def setup(store_url, tmp_path):
    st = open_store(store_url)
    base, cand, files = populate(st, tmp_path)
    inv = wf.new_investigation(
        st,
        lens="inference",
        question="Ship engine v0.8.3?",
        guardrails=["error_rate max 0.001"],
        intended_change={"engine": ["v0.8.2", "v0.8.3"]},
        baseline=base,
        candidate=cand,
        by="ana",
    ).to_json()
    return st, inv, base, cand, files


@pytest.mark.store
def test_frame_is_stored(setup):
    st, inv, base, cand, _ = setup
    shown = wf.investigation_view(st, f"investigation/{inv['id']}").to_json()
    assert shown["question"] == "Ship engine v0.8.3?" and shown["lens"] == "inference"
    assert shown["baseline_runs"] == base and shown["candidate_runs"] == cand
    assert shown["intended_change"] == {"engine": ["v0.8.2", "v0.8.3"]}
    assert shown["created_by"] == "ana" and not shown["imported"]
    assert [i["id"] for i in wf.list_investigations(st)] == [inv["id"]]


@pytest.mark.store
def test_frame_refuses_bad_input(setup):
    st = setup[0]
    with pytest.raises(UsageError, match="unknown lens"):
        wf.new_investigation(st, lens="nope", question="q").to_json()
    with pytest.raises(UsageError, match="question"):
        wf.new_investigation(st, lens="training", question="   ").to_json()
    with pytest.raises(NotFound, match="no run"):
        wf.new_investigation(st, lens="training", question="q", baseline=["missing-run"]).to_json()
    with pytest.raises(NotFound):
        wf.investigation_view(st, 999).to_json()


@pytest.mark.store
def test_compare_stores_result_and_parameters(setup):
    st, inv, base, cand, _ = setup
    comp = wf.store_comparison(
        st,
        inv["id"],
        [str(i) for i in base],
        ["cand-0", "cand-1", "cand-2"],
        engine=fake_compare,
        accepts={"hardware": "same SKU, new serial"},
    ).to_json()
    assert comp["candidate_runs"] == cand
    assert comp["parameters"] == {
        "lens": "inference",
        "changes": {"engine": ["v0.8.2", "v0.8.3"]},
        "accepts": {"hardware": "same SKU, new serial"},
        "guardrails": ["error_rate max 0.001"],
    }  # the frame's, judged at Compare
    assert comp["verdict"] == "REGRESSION" and comp["comparable"]
    assert comp["result"]["primary"]["candidate"] > 200
    again = wf.get_comparison(st, comp["id"])
    assert again["result"] == comp["result"]


@pytest.mark.store
def test_observations_from_a_comparison_cite_it(setup):
    st, inv, base, cand, _ = setup
    comp = wf.store_comparison(st, inv["id"], base, cand, engine=fake_compare).to_json()
    pinned = wf.observations_from_comparison(st, inv["id"], comp["id"], by="ana")
    assert len(pinned) == 1
    obs = pinned[0]
    assert obs["label"] == "observation, not cause" and obs["source"] == f"comparison:{comp['id']}"
    assert obs["evidence"][0] == {"kind": "comparison", "id": comp["id"]}
    assert obs["evidence"][1]["metric"] == "ttft_mean"
    assert obs["pinned_by"] == "ana" and obs["pinned_at"]
    with pytest.raises(WbError, match="already pinned"):
        wf.observations_from_comparison(st, inv["id"], comp["id"])


@pytest.mark.store
def test_manual_observation_needs_evidence_and_resolves_runs(setup):
    st, inv, base, _, _ = setup
    with pytest.raises(UsageError, match="cites its evidence"):
        wf.new_observation(st, inv["id"], "Queue grew", []).to_json()
    with pytest.raises(UsageError, match="KIND=VALUE"):
        wf.parse_evidence(["run"], st)
    ev = wf.parse_evidence(["run=base-0", "metric=queue_p95", "window=steady", "value=40 ms -> 160 ms"], st)
    assert ev[0] == {"kind": "run", "id": base[0]}
    obs = wf.new_observation(st, inv["id"], "Queue time grew from 40 ms to 160 ms.", ev).to_json()
    assert obs["kind"] == "observation" and obs["evidence"][3] == {"kind": "value", "value": "40 ms -> 160 ms"}


@pytest.mark.store
def test_retraction_is_a_new_record_and_both_are_kept(setup):
    st, inv, base, _, _ = setup
    first = wf.new_observation(st, inv["id"], "Prefill grew.", [{"kind": "run", "id": base[0]}]).to_json()
    retraction = wf.new_retraction(st, first["id"], "prefill was measured on the wrong window").to_json()
    assert retraction["retracts"] == f"observation/{first['id']}"
    shown = wf.investigation_view(st, inv["id"]).to_json()["observations"]
    assert [o["id"] for o in shown] == [first["id"], retraction["id"]]
    assert shown[0]["text"] == "Prefill grew." and shown[0]["retracted_by"] == f"observation/{retraction['id']}"
    with pytest.raises(UsageError, match="itself a retraction"):
        wf.new_retraction(st, retraction["id"], "again").to_json()


@pytest.mark.store
def test_hypothesis_lifecycle_with_links(setup):
    st, inv, base, cand, _ = setup
    hyp = wf.new_hypothesis(
        st,
        inv["id"],
        "A straggling rank slows the collectives.",
        "controlled interleaved rerun",
        test_kind="comparison",
    ).to_json()
    assert hyp["status"] == "open" and hyp["test"] == "controlled interleaved rerun"
    assert hyp["test_kind"] == "comparison" and hyp["evidence_before"]["comparison"] == 0
    with pytest.raises(UsageError, match="needs the evidence"):
        wf.decide_hypothesis(st, hyp["id"], "supported").to_json()
    with pytest.raises(UsageError, match="status must be"):
        wf.decide_hypothesis(st, hyp["id"], "proven").to_json()
    with pytest.raises(NotFound, match="no stored comparison"):
        wf.decide_hypothesis(st, hyp["id"], "refuted", evidence=[{"kind": "comparison", "id": 99}]).to_json()
    comp = wf.store_comparison(st, inv["id"], base, cand, engine=fake_compare).to_json()
    decided = wf.decide_hypothesis(
        st,
        hyp["id"],
        "refuted",
        evidence=wf.parse_hypothesis_evidence([f"comparison={comp['id']}"]),
        note="no rank lagged",
    ).to_json()
    assert decided["status"] == "refuted" and decided["links"]["comparisons"] == [comp["id"]]
    rerun_test = wf.new_hypothesis(st, inv["id"], "The rank waits on I/O.", "a rerun").to_json()  # kind: rerun
    with pytest.raises(UsageError, match="its test is a rerun: it is decided by rerun_comparison"):
        wf.decide_hypothesis(st, rerun_test["id"], "supported", evidence=[{"kind": "comparison", "id": comp["id"]}])
    assert [h["status"] for h in decided["history"]] == ["open", "refuted"]
    undetermined = wf.decide_hypothesis(st, hyp["id"], "undetermined").to_json()
    assert undetermined["status"] == "undetermined" and len(undetermined["history"]) == 3
    shown = wf.investigation_view(st, inv["id"]).to_json()
    assert shown["hypotheses"][0]["status"] == "undetermined"
    assert shown["observations"] == []  # a hypothesis never becomes an observation


def test_hypothesis_evidence_parsing():
    """One syntax, KIND=VALUE, as for observations; a wrong form gets one line naming the kinds."""
    assert wf.parse_hypothesis_evidence(
        ["rerun_plan=3", "plan=4", "comparison=5", "rerun-comparison=6", "Plan=queue-check"]
    ) == [
        {"kind": "rerun_plan", "id": 3},
        {"kind": "rerun_plan", "id": 4},
        {"kind": "comparison", "id": 5},
        {"kind": "rerun_comparison", "id": 6},
        {"kind": "rerun_plan", "name": "queue-check"},
    ]
    kinds = (
        "accepted kinds: plan=ID|NAME (or rerun_plan=ID|NAME), comparison=N, rerun_comparison=N, "
        "bisection=ID|NAME, diagnosis=N"
    )
    for item, hint in (("comparison:5", "(write comparison=5)"), ("3", "(a plan? write plan=3)"), ("plan=", "")):
        with pytest.raises(UsageError) as exc:
            wf.parse_hypothesis_evidence([item])
        assert str(exc.value) == f"evidence {item!r} is not KIND=VALUE{' ' + hint if hint else ''}; {kinds}"
    with pytest.raises(UsageError, match="'run' cannot decide a hypothesis; accepted kinds: plan=ID"):
        wf.parse_hypothesis_evidence(["run=3"])
    with pytest.raises(UsageError, match="comparison needs a number"):
        wf.parse_hypothesis_evidence(["comparison=five"])


def test_observation_evidence_wrong_form_lists_the_kinds():
    with pytest.raises(UsageError) as exc:
        wf.parse_evidence(["run:12"])
    assert str(exc.value) == (
        "evidence 'run:12' is not KIND=VALUE (write run=12); accepted kinds: run=ID|LABEL, "
        "comparison=N, metric=NAME, window=KIND, value=TEXT (or another KIND=TEXT)"
    )
    assert wf.parse_evidence(["value=a=b", "note=free text"]) == [
        {"kind": "value", "value": "a=b"},
        {"kind": "note", "value": "free text"},
    ]


def test_tui_dialog_evidence_line_is_checked_headlessly():
    from workbench.tui import services

    assert services.check_evidence("rerun_plan=3, comparison=2") is None
    assert "accepted kinds" in services.check_evidence("plan:3")


@pytest.mark.store
def test_comparison_must_belong_to_the_investigation(setup):
    st, inv, base, cand, _ = setup
    other = wf.new_investigation(st, lens="inference", question="other").to_json()
    comp = wf.store_comparison(st, other["id"], base, cand, engine=fake_compare).to_json()
    with pytest.raises(UsageError, match="belongs to investigation"):
        wf.observations_from_comparison(st, inv["id"], comp["id"])
    hyp = wf.new_hypothesis(st, inv["id"], "h", "t").to_json()
    with pytest.raises(UsageError, match="not to this hypothesis's investigation"):
        wf.decide_hypothesis(st, hyp["id"], "supported", evidence=[{"kind": "comparison", "id": comp["id"]}]).to_json()


@pytest.mark.store
def test_refused_comparison_is_stored_and_has_nothing_to_pin(setup):
    st, inv, base, cand, _ = setup

    def refusing(b, c, **kw):
        return FakeComparison(
            {
                "lens": "inference",
                "comparable": False,
                "refusal": {"dimension": "model", "reason": "model differs: A vs B"},
                "dimensions": [],
                "primary": None,
                "phases": None,
                "observations": [],
                "guardrails": [],
                "work": {},
            }
        )

    comp = wf.store_comparison(st, inv["id"], base, cand, engine=refusing).to_json()
    assert not comp["comparable"] and comp["verdict"] is None
    with pytest.raises(WbError, match="refused"):
        wf.observations_from_comparison(st, inv["id"], comp["id"])
