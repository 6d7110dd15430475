"""Export from the store, verify, recompute, and import a colleague's bundle read-only."""

import json

import pytest

from store import open_store
from tests.investigations.fakes import fake_compare, populate
from workbench.bundle.export import dumps, reseal_digests, write_bundle
from workbench.bundle.reader import read_bundle_file
from workbench.bundle.verify import verify_bundle
from workbench.errors import BadInput, WbError
from workbench.investigations import workflow as wf
from workbench.investigations.bundling import export_investigation, import_bundle


@pytest.fixture
def investigation(store_url, tmp_path):
    st = open_store(store_url)
    (tmp_path / "caps").mkdir()
    base, cand, _ = populate(st, tmp_path / "caps")
    inv = wf.new_investigation(
        st,
        lens="inference",
        question="Ship engine v0.8.3?",
        intended_change={"engine": ["v0.8.2", "v0.8.3"]},
        baseline=base,
        candidate=cand,
        by="ana",
    ).to_json()
    # Written first, then decided by its own test: the comparison made after it.
    hyp = wf.new_hypothesis(
        st,
        inv["id"],
        "The scheduler admits requests later.",
        "a comparison of the runs",
        by="ana",
        test_kind="comparison",
    ).to_json()
    comp = wf.store_comparison(st, inv["id"], base, cand, engine=fake_compare, by="ana").to_json()
    wf.decide_hypothesis(
        st, hyp["id"], "supported", evidence=[{"kind": "comparison", "id": comp["id"]}], by="ana"
    ).to_json()
    wf.observations_from_comparison(st, inv["id"], comp["id"], by="ana")
    first = wf.new_observation(st, inv["id"], "Prefill grew.", [{"kind": "run", "id": base[0]}], by="ana").to_json()
    wf.new_retraction(st, first["id"], "wrong window", by="ana").to_json()
    return st, inv, tmp_path / "caps"


@pytest.mark.store
def test_export_verify_round_trip_with_provenance(investigation, tmp_path):
    st, inv, caps = investigation
    bundle = export_investigation(st, inv["id"])
    path = write_bundle(bundle, tmp_path / "bundle.json")
    doc = read_bundle_file(path)
    assert verify_bundle(doc, source=path, captures_dir=caps).ok
    assert len(doc["subject"]) == 6 and {s["annotations"]["importer"] for s in doc["subject"]} == {"native"}
    assert doc["investigation"]["question"] == "Ship engine v0.8.3?"
    assert doc["recipe"]["content"]["comparisons"][0]["parameters"]["changes"] == {"engine": ["v0.8.2", "v0.8.3"]}
    assert [o["kind"] for o in doc["observations"]] == ["observation", "observation", "retraction"]
    assert doc["hypotheses"][0]["status"] == "supported"
    assert "samples" not in doc


@pytest.mark.store
def test_embedded_samples_recompute(investigation, tmp_path):
    st, inv, _ = investigation
    bundle = json.loads(dumps(export_investigation(st, inv["id"], embed_samples=True)))
    assert verify_bundle(bundle, recompute=True, engine=fake_compare).ok
    bundle["results"]["content"]["comparisons"][0]["result"]["primary"]["delta_pct"] = 1.0
    report = verify_bundle(reseal_digests(bundle), recompute=True, engine=fake_compare)
    assert not report.ok and "results.comparisons[0].result.primary.delta_pct" in report.mismatched


@pytest.mark.store
def test_import_is_read_only_and_idempotent(investigation, tmp_path, store_url):
    st, inv, _ = investigation
    path = write_bundle(export_investigation(st, inv["id"]), tmp_path / "bundle.json")
    colleague = open_store(store_url.replace("wb.sqlite", "colleague.sqlite")) if store_url.startswith("sqlite") else st
    result = import_bundle(colleague, path, by="bo")
    assert not result["already_imported"]
    shown = wf.investigation_view(colleague, result["investigation"]).to_json()
    assert shown["imported"] and shown["question"] == "Ship engine v0.8.3?"
    assert shown["baseline_runs"][0].startswith("run/")
    assert [o["kind"] for o in shown["observations"]] == ["observation", "observation", "retraction"]
    assert shown["observations"][1]["retracted_by"] == f"observation/{shown['observations'][2]['id']}"
    assert shown["hypotheses"][0]["status"] == "supported" and shown["comparisons"][0]["verdict"] == "REGRESSION"
    with pytest.raises(WbError, match="read-only"):
        wf.new_observation(colleague, result["investigation"], "x", [{"kind": "value", "value": "1"}]).to_json()
    with pytest.raises(WbError, match="read-only"):
        wf.new_hypothesis(colleague, result["investigation"], "x", "y").to_json()
    with pytest.raises(WbError, match="imported"):
        export_investigation(colleague, result["investigation"])
    again = import_bundle(colleague, path)
    assert again["already_imported"] and again["investigation"] == result["investigation"]


@pytest.mark.store
def test_tampered_bundle_is_not_imported(investigation, tmp_path):
    st, inv, _ = investigation
    doc = json.loads(dumps(export_investigation(st, inv["id"])))
    doc["hypotheses"][0]["status"] = "refuted"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    before = len(wf.list_investigations(st))
    with pytest.raises(WbError, match="not imported: verification failed") as err:
        import_bundle(st, path)
    assert err.value.exit_code == 3
    assert len(wf.list_investigations(st)) == before
    path.write_text('{"a": 1, "a": 2}')
    with pytest.raises(BadInput, match="duplicate key"):
        import_bundle(st, path)


@pytest.mark.store
def test_import_never_runs_a_carried_command(investigation, tmp_path, monkeypatch):
    import subprocess

    st, inv, _ = investigation
    doc = json.loads(dumps(export_investigation(st, inv["id"])))
    marker = tmp_path / "ran"
    doc["recipe"]["content"]["rerun_plans"] = [
        {
            "ref": "rerun-plan/1",
            "record": {"id": 1, "name": "evil", "body": {"baseline": {"argv": ["touch", str(marker)]}}},
        }
    ]
    path = write_bundle(reseal_digests(doc), tmp_path / "b.json")

    def forbidden(*a, **k):
        raise AssertionError("import tried to run a command")

    for name in ("run", "Popen", "call", "check_call", "check_output"):
        monkeypatch.setattr(subprocess, name, forbidden)
    result = import_bundle(st, path)
    assert result["investigation"] and not marker.exists()


@pytest.mark.store
def test_linked_rerun_plan_travels_with_its_comparisons(investigation, tmp_path):
    rerun = pytest.importorskip("store.rerun")
    st, inv, _ = investigation
    hyp = wf.new_hypothesis(st, inv["id"], "Admission is slower.", "interleaved rerun").to_json()  # before its test
    with st.session() as s:
        # A plan of this investigation, run to completion: evidence that can decide.
        plan = rerun.RerunPlan(
            name="queue-check",
            lens="inference",
            digest="d" * 64,
            investigation_id=inv["id"],
            body={"baseline": {"argv": ["bench", "--engine", "v0.8.2"]}, "rounds": 10},
        )
        s.add(plan)
        s.flush()
        execution = rerun.RerunExecution(plan_id=plan.id, status=rerun.COMPLETE)
        s.add(execution)
        s.flush()
        s.add(
            rerun.RerunComparison(
                plan_id=plan.id,
                execution_id=execution.id,
                rounds_used=10,
                verdict="REGRESSION",
                digest="e" * 64,
                body={"verdict": "REGRESSION"},
            )
        )
        plan_id = plan.id
    with pytest.raises(Exception, match="no rerun plan named"):
        wf.decide_hypothesis(st, hyp["id"], "supported", evidence=wf.parse_hypothesis_evidence(["plan=nope"])).to_json()
    decided = wf.decide_hypothesis(
        st, hyp["id"], "supported", evidence=wf.parse_hypothesis_evidence(["plan=queue-check"])
    ).to_json()
    assert decided["links"]["rerun_plans"] == [plan_id]
    doc = json.loads(dumps(export_investigation(st, inv["id"])))
    plans = doc["recipe"]["content"]["rerun_plans"]
    assert [p["ref"] for p in plans] == [f"rerun-plan/{plan_id}"]
    assert plans[0]["record"]["investigation_id"] == inv["id"]  # the bundle carries the plan's investigation
    assert plans[0]["record"]["body"]["baseline"]["argv"] == ["bench", "--engine", "v0.8.2"]
    assert [c["record"]["verdict"] for c in doc["results"]["content"]["rerun_comparisons"]] == ["REGRESSION"]
    assert verify_bundle(doc).ok


@pytest.mark.store
def test_hostile_strings_in_an_imported_bundle_are_shown_escaped(investigation, tmp_path, capsys):
    from workbench.investigations.text import print_investigation

    st, inv, _ = investigation
    doc = json.loads(dumps(export_investigation(st, inv["id"])))
    doc["investigation"]["question"] = "\x1b[2J\x1b]0;owned\x07 ship it?"
    doc["investigation"]["lens"] = "inference\x1b[31m"
    doc["hypotheses"][0]["statement"] = "supported\x1b[0m by the data"
    path = write_bundle(reseal_digests(doc), tmp_path / "hostile.json")
    imported = import_bundle(st, path)
    capsys.readouterr()
    print_investigation(wf.investigation_view(st, imported["investigation"]))
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[2J" in out and "\\x1b[31m" in out


@pytest.mark.store
@pytest.mark.parametrize(
    ("forge", "named"),
    [
        (lambda d: d["recipe"]["content"]["comparisons"][0]["engine"].update(version=7), "engine.version"),
        (lambda d: d["recipe"]["content"]["comparisons"][0].update(ref={"a": 1}), "comparisons[0].ref"),
        (lambda d: d["hypotheses"][0].update(test_kind="a hunch"), "hypotheses[0].test_kind"),
        (lambda d: d["results"]["content"]["verdicts"][0].update(comparable="yes"), "results.verdicts[0].comparable"),
    ],
)
def test_a_value_of_another_type_is_refused_at_import_with_its_place(investigation, tmp_path, forge, named):
    """Import reads with the typed readers export writes with: a sealed bundle with a value of
    another type is refused with one line naming it (exit 2 or 3), nothing is written, and
    nothing fails later in investigate show."""
    st, inv, _ = investigation
    doc = json.loads(dumps(export_investigation(st, inv["id"])))
    forge(doc)
    path = write_bundle(reseal_digests(doc), tmp_path / "odd.json")
    before = len(wf.list_investigations(st))
    with pytest.raises(WbError) as err:
        import_bundle(st, path)
    assert err.value.exit_code in (2, 3) and named in str(err.value) and "\n" not in str(err.value)
    assert len(wf.list_investigations(st)) == before
