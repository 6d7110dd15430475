"""wb demo's three seed investigations: framed, compared, observed, one open hypothesis each."""

import pytest

from store import open_store
from workbench.investigations import workflow as wf
from workbench.investigations.demo import DEMOS, create_demo_investigations
from workbench.usecases.transport import Local


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory):
    pytest.importorskip("workbench.compare")
    from workbench.demo import demo_captures_dir
    from workbench.ingest import import_files

    url = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'demo.sqlite'}"
    st = open_store(url)
    import_files(st, [demo_captures_dir() / lens for lens in ("inference", "training", "fleet")])
    return st


def test_three_investigations_idempotently(demo_store):
    ids = create_demo_investigations(demo_store)
    assert len(ids) == 3
    assert create_demo_investigations(demo_store) == ids
    assert len(wf.list_investigations(demo_store)) == 3
    for inv_id, demo in zip(ids, DEMOS):
        inv = wf.investigation_view(demo_store, inv_id).to_json()
        assert inv["lens"] == demo["lens"] and len(inv["baseline_runs"]) == 5 and len(inv["candidate_runs"]) == 5
        assert len(inv["comparisons"]) == 1 and inv["comparisons"][0]["comparable"], inv["comparisons"][0][
            "result"
        ].get("refusal")
        assert inv["observations"], "the engine's observations are pinned"
        assert all(o["label"] == "observation, not cause" for o in inv["observations"])
        assert [h["status"] for h in inv["hypotheses"]] == ["open"]


def test_seed_wording(demo_store):
    ids = create_demo_investigations(demo_store)
    texts = {
        DEMOS[i]["lens"]: " ".join(o["text"] for o in wf.investigation_view(demo_store, inv).to_json()["observations"])
        for i, inv in enumerate(ids)
    }
    assert "Queue time grew" in texts["inference"]
    assert "communication grew" in texts["training"].lower()
    assert "straggling rank" in wf.investigation_view(demo_store, ids[1]).to_json()["hypotheses"][0]["statement"]


def test_demo_comparisons_carry_their_aa_control(demo_store):
    """The demo's A′ runs are the A/A control of its comparisons: no NO_AA_CONTROL."""
    from workbench.investigations.demo import demo_run_sets

    for inv_id, demo in zip(create_demo_investigations(demo_store), DEMOS):
        _, _, control = demo_run_sets(demo_store, demo["lens"])
        comp = wf.investigation_view(demo_store, inv_id).to_json()["comparisons"][0]
        assert len(control) == 5 and comp["parameters"]["control"] == control
        assert comp["result"]["runs"]["control"] == control
        effect = comp["result"]["primary"]["effect"]
        assert "NO_AA_CONTROL" not in effect["flags"] and effect["aa"] is not None


def test_bundle_carries_the_control_and_recompute_uses_it(demo_store):
    import json

    from workbench.bundle.export import dumps, reseal_digests
    from workbench.bundle.verify import verify_bundle
    from workbench.investigations.bundling import export_investigation

    inv_id = create_demo_investigations(demo_store)[0]
    bundle = json.loads(dumps(export_investigation(demo_store, inv_id, embed_samples=True)))
    spec = bundle["recipe"]["content"]["comparisons"][0]
    assert spec["control"] == [f"run/{i}" for i in spec["parameters"]["control"]]
    assert {r["ref"] for r in bundle["runs"]} >= set(spec["control"])
    report = verify_bundle(bundle, recompute=True)
    assert report.ok and "+5 control" in report.recompute[0].detail
    # Edit one control run's samples (and reseal): the recomputed A/A control differs.
    samples = bundle["samples"]["content"]["runs"][spec["control"][0]]["samples"]
    assert "ttft_ms" in samples
    tampered = json.loads(json.dumps(bundle))
    from workbench.bundle.columns import decode_tables

    table = decode_tables({"samples": samples}, where="test")["samples"]
    edited = {k: (v * 1.5 if k in ("ttft_ms", "queue_ms") else v) for k, v in table.items()}
    from workbench.bundle.columns import encode_tables

    tampered["samples"]["content"]["runs"][spec["control"][0]] = encode_tables({"samples": edited})
    report = verify_bundle(reseal_digests(tampered), recompute=True)
    assert not report.ok and "differ" in report.recompute[0].detail
    assert any(".result.primary.effect.aa." in part for part in report.mismatched)


def test_an_imported_bundle_keeps_the_control_refs(demo_store, tmp_path):
    from workbench.bundle.export import write_bundle
    from workbench.investigations.bundling import export_investigation, import_bundle

    inv_id = create_demo_investigations(demo_store)[0]
    path = write_bundle(export_investigation(demo_store, inv_id), tmp_path / "b.json")
    other = open_store(f"sqlite:///{tmp_path / 'other.sqlite'}")
    imported = import_bundle(other, path)
    comp = wf.investigation_view(other, imported["investigation"]).to_json()["comparisons"][0]
    assert comp["parameters"]["control"] == [f"run/{i}" for i in range(6, 11)]
    assert "NO_AA_CONTROL" not in comp["result"]["primary"]["effect"]["flags"]


def test_the_tui_service_stores_a_comparison_with_its_control(demo_store):
    """The headless call the TUI's Compare stage makes, with a third run list (A′)."""
    from workbench.investigations.demo import demo_run_sets
    from workbench.tui import services

    inv_id = create_demo_investigations(demo_store)[1]
    base, cand, control = demo_run_sets(demo_store, "training")
    outcome = services.compare_and_store(Local(demo_store), inv_id, base, cand, {}, control=control)
    assert list(outcome.comparison.parameters.control) == control
    assert "A/A control: A′/A" in outcome.text and "control (A′, baseline again)" in outcome.text


def test_a_stored_comparison_is_decoded_once_per_view(demo_store):
    """The report, the banner and the way out all read one view: ``comparison()`` decodes its
    stored document once, and a view read again is decoded afresh (nothing leaks between them)."""
    import gc

    from workbench.investigations import views

    inv_id = create_demo_investigations(demo_store)[0]
    view = wf.investigation_view(demo_store, inv_id).comparisons[0]
    first = view.comparison()
    assert view.comparison() is first
    assert first.to_json()["runs"] == view.result["runs"]
    again = wf.investigation_view(demo_store, inv_id).comparisons[0]
    assert again.comparison() is not first and again.comparison().to_json() == first.to_json()
    held = len(views._DECODED)
    del view, first
    gc.collect()
    assert len(views._DECODED) == held - 1
