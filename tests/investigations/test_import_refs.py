"""A bundle imported into a store that already holds other records keeps every reference
true: each cited id resolves to the record it cited in the exporting store (a copied
comparison or observation by its new id, a run, plan, rerun comparison or bisection by
the bundle's ref)."""

from __future__ import annotations

import json

import pytest

from store import open_store
from tests.conftest import REPO, run_wb
from workbench.investigations import workflow as wf
from workbench.investigations.bundling import import_bundle

pytestmark = pytest.mark.store


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """The three demo investigations, exported after more records were made in them (so
    their ids are not 1, 2, 3), with a decided hypothesis, a retraction and a run cited."""
    tmp = tmp_path_factory.mktemp("refs-src")
    url = f"sqlite:///{tmp / 'src.sqlite'}"
    assert run_wb("--store", url, "demo").returncode == 0
    store = open_store(url)
    out = {
        "inference-demo (docs/examples)": json.loads(
            (REPO / "docs" / "examples" / "inference-demo.bundle.json").read_text()
        )
    }
    for summary in wf.investigation_summaries(store):
        view = wf.investigation_view(store, summary.id)
        comp = view.comparisons[0]
        run = comp.baseline_runs[0]
        pinned = wf.new_observation(
            store, summary.id, "A run cited by id.", [{"kind": "run", "id": run}, {"kind": "comparison", "id": comp.id}]
        )
        wf.new_retraction(store, view.observations[0].id, "pinned too early")
        # A hypothesis decided by its own test: a comparison made after it, on other figures.
        hyp = wf.new_hypothesis(
            store, summary.id, "It holds on fewer runs.", "four runs a side", test_kind="comparison"
        )
        again = wf.store_comparison(store, summary.id, comp.baseline_runs[:-1], comp.candidate_runs[:-1])
        if again.comparable and again.verdict not in (None, "INCONCLUSIVE"):
            wf.decide_hypothesis(store, hyp.id, "supported", evidence=[{"kind": "comparison", "id": again.id}])
        assert pinned.id > 1
        path = tmp / f"{summary.lens}.json"
        assert run_wb("--store", url, "bundle", "export", str(summary.id), "-o", str(path)).returncode == 0
        out[f"wb demo {summary.lens}"] = json.loads(path.read_text())
    return out, tmp


def _check_ref(value, kind, bundle, imported_comparisons, imported_observations, where):
    """``value`` (as stored after import) names the record ``kind`` it named in the bundle."""
    carried = {
        "run": {r["ref"] for r in bundle["runs"]},
        "rerun-comparison": {c["ref"] for c in bundle["results"]["content"].get("rerun_comparisons") or []},
        "rerun-plan": {p["ref"] for p in bundle["recipe"]["content"].get("rerun_plans") or []},
        "bisection": {b["ref"] for b in bundle["recipe"]["content"].get("bisections") or []},
    }
    if kind == "comparison":
        assert value in imported_comparisons, f"{where}: comparison {value!r} is not one of the imported ones"
        return imported_comparisons[value]
    if kind == "observation":
        assert value in imported_observations, f"{where}: observation {value!r} is not one of the imported ones"
        return imported_observations[value]
    assert isinstance(value, str) and value in carried[kind], f"{where}: {value!r} is not a {kind} the bundle carries"
    return value


def _source_ref(kind, old):
    return f"{kind}/{old}"


@pytest.mark.parametrize(
    "name", ["inference-demo (docs/examples)", "wb demo inference", "wb demo training", "wb demo fleet"]
)
def test_every_cited_id_resolves_to_the_record_it_cited(bundles, tmp_path_factory, name):
    docs, _ = bundles
    bundle = docs[name]
    tmp = tmp_path_factory.mktemp("refs-dst")
    url = f"sqlite:///{tmp / 'dst.sqlite'}"
    assert run_wb("--store", url, "demo").returncode == 0  # a store that already holds other records
    store = open_store(url)
    first = wf.investigation_summaries(store)[0]
    wf.new_observation(store, first.id, "Shifts the ids.", [{"kind": "metric", "value": "x"}])
    path = tmp / "b.json"
    path.write_text(json.dumps(bundle))
    inv = wf.investigation_view(store, import_bundle(store, path)["investigation"])

    from store.investigations import InvestigationComparison, Observation

    with store.session() as s:
        comparisons = {c.id: s.get(InvestigationComparison, c.id).origin_ref for c in inv.comparisons}
        observations = {o.id: s.get(Observation, o.id).origin_ref for o in inv.observations}
    assert sorted(comparisons.values()) == sorted(c["ref"] for c in bundle["recipe"]["content"]["comparisons"])

    def same(new_value, kind, old_value, where):
        resolved = _check_ref(new_value, kind, bundle, comparisons, observations, where)
        assert resolved == _source_ref(kind, old_value) or resolved == old_value, (
            f"{where}: {new_value!r} -> {resolved!r}, cited {old_value!r}"
        )

    def runs_lists(new, old, where):
        if isinstance(old, dict):
            for key, value in old.items():
                if key == "runs" and isinstance(value, dict) and all(isinstance(v, list) for v in value.values()):
                    for side, ids in value.items():
                        for n, (a, b) in enumerate(zip(new[key][side], ids)):
                            same(a, "run", b, f"{where}.runs.{side}[{n}]")
                else:
                    runs_lists(new[key], value, f"{where}.{key}")
        elif isinstance(old, list):
            for n, (a, b) in enumerate(zip(new, old)):
                runs_lists(a, b, f"{where}[{n}]")

    kinds = {
        "comparison": "comparison",
        "run": "run",
        "rerun_comparison": "rerun-comparison",
        "rerun_plan": "rerun-plan",
        "bisection": "bisection",
        "observation": "observation",
    }

    def evidence(new_items, old_items, where):
        assert len(new_items) == len(old_items)
        for n, (a, b) in enumerate(zip(new_items, old_items)):
            if isinstance(b, dict) and b.get("kind") in kinds and "id" in b:
                same(a["id"], kinds[b["kind"]], b["id"], f"{where}[{n}]")
            runs_lists(a, b, f"{where}[{n}]")

    for view, src in zip(inv.observations, bundle["observations"]):
        where = f"{name} {src['ref']}"
        assert observations[view.id] == src["ref"]
        evidence(view.evidence, src["evidence"], f"{where}.evidence")
        if str(src.get("source", "")).startswith("comparison:"):
            new = int(view.source.split(":")[1])
            same(new, "comparison", src["source"].split(":")[1], f"{where}.source")
        if src.get("retracts"):
            assert view.retracts is not None and observations[int(view.retracts.split("/")[1])] == src["retracts"]
    for view, src in zip(inv.hypotheses, bundle["hypotheses"]):
        for n, (step, old) in enumerate(zip(view.history, src["history"])):
            evidence(step.evidence, old["evidence"], f"{name} {src['ref']}.history[{n}]")
    results = {c["ref"]: c["result"] for c in bundle["results"]["content"]["comparisons"]}
    for view in inv.comparisons:
        runs_lists(view.result, results[comparisons[view.id]], f"{name} {comparisons[view.id]}.result")
    assert any(o.evidence for o in inv.observations)


def test_the_demo_hypothesis_cites_the_imported_comparisons(bundles, tmp_path_factory):
    """The issue's example: after import the links name this store's comparisons."""
    docs, _ = bundles
    bundle = docs["wb demo training"]
    tmp = tmp_path_factory.mktemp("refs-links")
    url = f"sqlite:///{tmp / 'dst.sqlite'}"
    assert run_wb("--store", url, "demo").returncode == 0
    store = open_store(url)
    path = tmp / "b.json"
    path.write_text(json.dumps(bundle))
    inv = wf.investigation_view(store, import_bundle(store, path)["investigation"])
    own = {c.id for c in inv.comparisons}
    linked = inv.hypotheses[-1].links["comparisons"]
    assert linked and set(linked) <= own
