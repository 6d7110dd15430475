"""Every verdict-bearing field of every result kind, forged and re-sealed with a valid
checksum, fails ``wb evidence verify --recompute``: stated verdicts, flags, statuses and
links are outputs checked against what is re-derived from the per-run values."""

from __future__ import annotations

import copy
import json

import pytest

from tests.bundle.helpers import sample_bundle
from tests.investigations.fakes import fake_compare
from workbench.bundle.export import reseal_digests
from workbench.bundle.verify import verify_bundle


def _set(path: str, value):
    def forge(doc):
        *parents, last = path.split(".")
        node = doc
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        node[int(last) if last.isdigit() else last] = (
            value(node[int(last) if last.isdigit() else last]) if callable(value) else value
        )

    return forge


OTHER_VERDICT = {"REGRESSION": "IMPROVEMENT", "IMPROVEMENT": "REGRESSION", "EQUIVALENT": "REGRESSION"}

COMPARISON_FORGERIES = {
    "stated verdict": _set("results.content.verdicts.0.verdict", lambda v: OTHER_VERDICT.get(v, "IMPROVEMENT")),
    "stated comparable": _set("results.content.verdicts.0.comparable", False),
    "result verdict": _set(
        "results.content.comparisons.0.result.primary.effect.verdict", lambda v: OTHER_VERDICT.get(v, "IMPROVEMENT")
    ),
    "result flags": _set("results.content.comparisons.0.result.primary.effect.flags", lambda f: [*f, "UNSTABLE"]),
    "result comparable": _set("results.content.comparisons.0.result.comparable", False),
    "hypothesis status": _set("hypotheses.0.status", "refuted"),
    "hypothesis links": _set("hypotheses.0.links.comparisons", [7]),
    "hypothesis evidence": _set("hypotheses.0.history.1.evidence", [{"kind": "comparison", "id": 7}]),
    "decision without evidence": _set("hypotheses.0.history.1.evidence", []),
}


def _forged_fails(doc, forge, **engines):
    forged = copy.deepcopy(doc)
    forge(forged)
    forged = reseal_digests(forged)
    assert verify_bundle(forged).ok, "the forgery must pass the integrity check (it is re-sealed)"
    report = verify_bundle(forged, recompute=True, **engines)
    assert not report.ok
    return report


@pytest.fixture(scope="module")
def demo_bundle(tmp_path_factory):
    """The demo's training investigation, its hypothesis decided by its comparison, with samples."""
    from store import open_store
    from tests.conftest import run_wb
    from workbench.investigations import workflow as wf

    tmp = tmp_path_factory.mktemp("forge-demo")
    url = f"sqlite:///{tmp / 'wb.sqlite'}"
    assert run_wb("--store", url, "demo").returncode == 0
    store = open_store(url)
    inv = next(s for s in wf.investigation_summaries(store) if s.lens == "training")
    view = wf.investigation_view(store, inv.id)
    wf.decide_hypothesis(
        store, view.hypotheses[0].id, "supported", evidence=[{"kind": "comparison", "id": view.comparisons[0].id}]
    )
    out = tmp / "training.json"
    assert run_wb("--store", url, "bundle", "export", str(inv.id), "-o", str(out), "--embed-samples").returncode == 0
    return json.loads(out.read_text())


def test_the_honest_comparison_bundles_recompute(demo_bundle):
    assert verify_bundle(sample_bundle(), recompute=True, engine=fake_compare).ok
    report = verify_bundle(demo_bundle, recompute=True)
    assert report.ok, [c for c in report.recompute if not c.ok]


@pytest.mark.parametrize("name", sorted(COMPARISON_FORGERIES))
def test_each_forged_comparison_field_fails_the_recheck(demo_bundle, name):
    _forged_fails(demo_bundle, COMPARISON_FORGERIES[name])


def test_a_comparison_with_no_recipe_cannot_be_rederived(demo_bundle):
    def add(doc):
        doc["results"]["content"]["comparisons"].append({"ref": "comparison/99", "result": {"comparable": True}})

    report = _forged_fails(demo_bundle, add)
    assert "results.comparisons comparison/99" in report.mismatched


# -- rerun comparisons and bisections: a real bisection over a throwaway git history ----


@pytest.fixture(scope="module")
def bisect_bundle(tmp_path_factory):
    from store import open_store
    from tests.bisect.test_bisect import _bisect, history
    from tests.rerun.helpers import wb
    from workbench.investigations import workflow as wf

    tmp = tmp_path_factory.mktemp("forge")
    url = f"sqlite:///{tmp / 'wb.sqlite'}"
    store = open_store(url)
    inv = wf.new_investigation(store, lens="training", question="Which commit made the step slower?").id
    repo, ids = history(tmp, {5: 1.05}, commits=8)
    _bisect(tmp, url, repo, ids[0], ids[-1], "--investigation", str(inv))
    view = wf.investigation_view(store, inv)
    cited = next(e["id"] for e in view.observations[0].evidence if e.get("kind") == "rerun_comparison")
    hyp = wf.new_hypothesis(store, inv, "Commit 5 slowed the step.", "its bisection step").id
    wf.decide_hypothesis(store, hyp, "supported", evidence=[{"kind": "rerun_comparison", "id": cited}])
    out = tmp / "b.json"
    code, _, err = wb("bundle", "export", str(inv), "-o", str(out), "--embed-samples", store=url)
    assert code == 0, err
    return json.loads(out.read_text())


def _rerun_engines():
    from workbench.rerun.report import reanalyze

    return {"engine": fake_compare, "rerun_engine": reanalyze}


def test_the_honest_bisection_bundle_recomputes(bisect_bundle):
    report = verify_bundle(bisect_bundle, recompute=True, **_rerun_engines())
    assert report.ok, [c for c in report.recompute if not c.ok]
    parts = {c.part.split()[0].split("[")[0] for c in report.recompute}
    assert {"results.rerun_comparisons", "recipe.bisections", "hypotheses"} <= parts


def _first_rerun(doc):
    return doc["results"]["content"]["rerun_comparisons"][0]["record"]


RERUN_FORGERIES = {
    "record verdict": lambda d: _first_rerun(d).update(
        verdict=OTHER_VERDICT.get(_first_rerun(d)["verdict"], "IMPROVEMENT")
    ),
    "record rounds": lambda d: _first_rerun(d).update(rounds_used=_first_rerun(d)["rounds_used"] + 1),
    "body verdict": lambda d: _first_rerun(d)["body"].update(
        verdict=OTHER_VERDICT.get(_first_rerun(d)["body"]["verdict"], "IMPROVEMENT")
    ),
    "body flags": lambda d: _first_rerun(d)["body"].update(flags=[*_first_rerun(d)["body"]["flags"], "UNSTABLE"]),
    "bisection step verdict": lambda d: d["recipe"]["content"]["bisections"][0]["state"]["steps"][0].update(
        verdict="EQUIVALENT"
    ),
    "bisection step rounds": lambda d: d["recipe"]["content"]["bisections"][0]["state"]["steps"][0].update(
        rounds_used=99
    ),
    "hypothesis status": lambda d: d["hypotheses"][0].update(status="refuted"),
    "hypothesis links": lambda d: d["hypotheses"][0]["links"].update(rerun_comparisons=[12345]),
    # The plan moved out of the investigation: its results no longer decide the hypothesis.
    "plan's investigation": lambda d: [
        p["record"].update(investigation_id=None) for p in d["recipe"]["content"]["rerun_plans"]
    ],
}


@pytest.mark.parametrize("name", sorted(RERUN_FORGERIES))
def test_each_forged_rerun_field_fails_the_recheck(bisect_bundle, name):
    _forged_fails(bisect_bundle, RERUN_FORGERIES[name], **_rerun_engines())


def test_an_added_rerun_comparison_without_runs_fails_with_its_name(bisect_bundle):
    """Forgery (c): an invented verdict on a record with no per-run values, a hypothesis relinked to it."""

    def add(doc):
        carried = doc["results"]["content"]["rerun_comparisons"]
        invented = copy.deepcopy(carried[0])
        invented["ref"] = "rerun-comparison/999"
        invented["record"].update(id=999, verdict="IMPROVEMENT")
        invented["record"]["body"]["runs"] = []
        carried.append(invented)
        step = doc["hypotheses"][0]["history"][-1]
        step["evidence"] = [{"kind": "rerun_comparison", "id": 999}]
        doc["hypotheses"][0]["links"]["rerun_comparisons"] = [999]

    report = _forged_fails(bisect_bundle, add, **_rerun_engines())
    bad = {c.part: c.detail for c in report.recompute if not c.ok}
    assert any(p.endswith("rerun-comparison/999") and "cannot be re-derived" in d for p, d in bad.items())
    assert any(p.startswith("hypotheses[0]") and "rerun-comparison/999" in d for p, d in bad.items())
