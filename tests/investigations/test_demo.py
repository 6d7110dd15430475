"""wb demo's three seed investigations: framed, compared, observed, one open hypothesis each."""

import pytest

from store import open_store
from workbench.investigations import workflow as wf
from workbench.investigations.demo import DEMOS, create_demo_investigations


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
        inv = wf.show_investigation(demo_store, inv_id)
        assert inv["lens"] == demo["lens"] and len(inv["baseline_runs"]) == 5 and len(inv["candidate_runs"]) == 5
        assert len(inv["comparisons"]) == 1 and inv["comparisons"][0]["comparable"], inv["comparisons"][0]["result"].get("refusal")
        assert inv["observations"], "the engine's observations are pinned"
        assert all(o["label"] == "observation, not cause" for o in inv["observations"])
        assert [h["status"] for h in inv["hypotheses"]] == ["open"]


def test_seed_wording(demo_store):
    ids = create_demo_investigations(demo_store)
    texts = {DEMOS[i]["lens"]: " ".join(o["text"] for o in wf.show_investigation(demo_store, inv)["observations"])
             for i, inv in enumerate(ids)}
    assert "Queue time grew" in texts["inference"]
    assert "communication grew" in texts["training"].lower()
    assert "straggling rank" in wf.show_investigation(demo_store, ids[1])["hypotheses"][0]["statement"]
