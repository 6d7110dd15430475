"""Hand-written forgeries, one per kind the issue was shown (re-sealed: checksum and part digests
recomputed, as anyone can), each refused by ``--recompute`` (or, for a value of the wrong type or
an impossible decision, by verify itself) naming the place. The generated suite
(test_generated_forgeries.py) changes every leaf; these say why each kind fails."""

from __future__ import annotations

import copy

import pytest

from tests.bundle.conftest import rerun_engines
from workbench.bundle.export import reseal_digests
from workbench.bundle.verify import verify_bundle


def _forged(doc, forge):
    forged = copy.deepcopy(doc)
    forge(forged)
    return reseal_digests(forged)


def _fails(doc, forge, *, at: str, integrity: bool = True):
    """The forgery passes the digests (it is re-sealed) and fails --recompute at ``at`` (a path
    prefix of a failed part), with one line each."""
    forged = _forged(doc, forge)
    if integrity:
        assert verify_bundle(forged).ok, "the forgery must pass the integrity check (it is re-sealed)"
    report = verify_bundle(forged, recompute=True, **rerun_engines())
    assert not report.ok
    bad = {c.part: c.detail for c in [*report.checks, *(report.recompute or [])] if not c.ok}
    assert any(part.startswith(at) for part in bad), bad
    assert all("\n" not in detail for detail in bad.values())
    return bad


def test_the_honest_bundles_rebuild_whole(demo_bundles, rich_bundle):
    for doc in [*demo_bundles.values(), rich_bundle[1]]:
        report = verify_bundle(doc, recompute=True, **rerun_engines())
        assert report.ok, [c for c in report.recompute if not c.ok]
        assert any(c.part == "rebuilt" and "leaves equal within tolerance" in c.detail for c in report.recompute)


# -- comparisons ------------------------------------------------------------------------------


def _guardrails(doc):
    return doc["results"]["content"]["comparisons"][0]["result"]["guardrails"]


def test_a_guardrail_marked_held_against_its_own_figures(demo_bundles):
    doc = demo_bundles["inference"]
    assert _guardrails(doc), "the demo's frame guardrail is judged"
    assert _guardrails(doc)[0]["state"] == "held"

    def forge(d):  # its own figures break the limit (max_increase 0), and it still says held
        _guardrails(d)[0]["candidate"] = 0.25

    bad = _fails(doc, forge, at="results.comparisons[0].result.guardrails[0].candidate")
    assert "stated 0.25, rebuilt 0.0" in bad["results.comparisons[0].result.guardrails[0].candidate"]


def test_a_comparison_whose_guardrails_were_deleted(demo_bundles):
    bad = _fails(
        demo_bundles["inference"], lambda d: _guardrails(d).clear(), at="results.comparisons[0].result.guardrails"
    )
    assert any("entries stated" in detail for detail in bad.values())


def test_a_comparison_with_no_recipe_cannot_be_rebuilt(demo_bundles):
    def add(doc):
        doc["results"]["content"]["comparisons"].append(copy.deepcopy(doc["results"]["content"]["comparisons"][0]))

    _fails(demo_bundles["training"], add, at="results.comparisons[1]")


# -- rerun comparisons ------------------------------------------------------------------------


def _carried(doc, i=-1):
    return doc["results"]["content"]["rerun_comparisons"][i]["record"]


def test_rows_that_say_hardware_differs_with_no_refusal(rich_bundle):
    def forge(doc):
        body = _carried(doc)["body"]
        body["dimensions"] = [
            *body.get("dimensions", []),
            {"name": "hardware", "state": "different", "must_match": True, "baseline": "A100", "candidate": "H100"},
        ]

    _fails(rich_bundle[1], forge, at="results.rerun_comparisons[4].record.body.dimensions")


def test_an_execution_cut_short_presented_as_complete(rich_bundle):
    """The last round's runs removed from the run log and from the stated body, the status left
    complete: the rebuild finds the schedule unfinished."""

    def forge(doc):
        inputs = doc["recipe"]["content"]["rerun_comparisons"][-1]
        last = max(r["round"] for r in inputs["runs"])
        inputs["runs"] = [r for r in inputs["runs"] if r["round"] != last]
        body = _carried(doc)["body"]
        body["runs"] = [r for r in body["runs"] if r["round"] != last]
        body["rounds"]["used"] = [k for k in body["rounds"]["used"] if k != last]

    assert rich_bundle[1]["recipe"]["content"]["rerun_comparisons"][-1]["execution"]["status"] == "complete"
    bad = _fails(rich_bundle[1], forge, at="results.rerun_comparisons[4].record.body.execution.status")
    assert "cut short" in bad["results.rerun_comparisons[4].record.body.execution.status"]


def test_a_rerun_comparison_without_a_run_log_is_not_evidence(rich_bundle):
    def forge(doc):
        inputs = doc["recipe"]["content"]["rerun_comparisons"]
        inputs[-1] = {"ref": inputs[-1]["ref"], "unavailable": "dropped by the forger"}

    bad = _fails(rich_bundle[1], forge, at="results.rerun_comparisons[4].record")
    assert any("cannot be rebuilt" in detail for detail in bad.values())
    assert any(part.startswith("hypotheses[0]") for part in bad)  # the hypothesis it decided no longer stands


# -- actions ----------------------------------------------------------------------------------


def _action(doc):
    return doc["recipe"]["content"]["actions"][0]


def test_one_action_with_two_statuses(rich_bundle):
    def forge(doc):
        stated = doc["results"]["content"]["actions"]
        stated.append({**stated[0], "status": "verified", "reason": None})

    _fails(rich_bundle[1], forge, at="results.actions")


@pytest.mark.parametrize("word", ["yes", "approve\u200b", "approved\u200b", "Approved", "APPROVED", "approve"])
def test_only_the_vocabulary_approves(rich_bundle, word):
    bad = _fails(
        rich_bundle[1],
        lambda d: _action(d)["decisions"][0].update(decision=word),
        at="recipe.actions[0]",
        integrity=False,
    )
    assert any("decision" in part for part in bad)


@pytest.mark.parametrize("by", ["", " ", "\u200b", "\u00ad", "\u3164", "\u2800\u200d", "\ufe0f"])
def test_an_approval_by_nobody(rich_bundle, by):
    bad = _fails(
        rich_bundle[1],
        lambda d: _action(d)["decisions"][0].update(by=by),
        at="recipe.actions[0].decisions[0].by",
        integrity=False,
    )
    assert any("says nothing" in detail for detail in bad.values())


def test_a_verification_dated_before_its_approval(rich_bundle):
    def forge(doc):
        _action(doc)["verifications"][0]["at"] = "2001-01-01T00:00:00+00:00"

    bad = _fails(rich_bundle[1], forge, at="recipe.actions[0].verifications[0]", integrity=False)
    assert any("before the approval" in detail for detail in bad.values())


# -- hypotheses -------------------------------------------------------------------------------


def test_a_hypothesis_decided_by_the_comparison_its_observation_rests_on(demo_bundles):
    """The demo's comparison suggested the hypothesis (its observations cite it); stating it as the
    decision, with the status and links to match, is refused: wrong kind, recorded before, its origin."""

    def forge(doc):
        hyp = doc["hypotheses"][0]
        hyp["history"].append(
            {
                "status": "supported",
                "evidence": [{"kind": "comparison", "id": 1}],
                "note": "",
                "decided_by": "m",
                "decided_at": hyp["created_at"],
            }
        )
        hyp["status"], hyp["links"]["comparisons"] = "supported", [1]

    doc = demo_bundles["inference"]
    assert doc["hypotheses"][0]["test_kind"] == "rerun"
    bad = _fails(doc, forge, at="hypotheses[0]")
    said = " ".join(bad.values())
    assert "its test is a rerun" in said and "hypotheses[0].status" in bad


def test_the_same_forgery_with_a_comparison_test_is_still_its_origin(demo_bundles):
    def forge(doc):
        hyp = doc["hypotheses"][0]
        hyp["test_kind"] = "comparison"
        hyp["history"].append(
            {
                "status": "supported",
                "evidence": [{"kind": "comparison", "id": 1}],
                "note": "",
                "decided_by": "m",
                "decided_at": hyp["created_at"],
            }
        )
        hyp["status"], hyp["links"]["comparisons"] = "supported", [1]

    bad = _fails(demo_bundles["inference"], forge, at="hypotheses[0].history[1]")
    assert "recorded before the hypothesis" in bad["hypotheses[0].history[1]"]


def test_the_rich_hypothesis_is_decided_by_its_own_test(rich_bundle):
    hyp = rich_bundle[1]["hypotheses"][0]
    assert hyp["status"] == "supported" and hyp["history"][-1]["evidence"][0]["kind"] == "rerun_plan"
    # The bisection's rerun comparisons (the observation the hypothesis came from) cannot decide it.
    cited = next(e["id"] for e in rich_bundle[1]["observations"][0]["evidence"] if e.get("kind") == "rerun_comparison")

    def forge(doc):
        doc["hypotheses"][0]["history"][-1]["evidence"] = [{"kind": "rerun_comparison", "id": cited}]
        doc["hypotheses"][0]["links"] = {"rerun_plans": [], "comparisons": [], "rerun_comparisons": [cited]}

    _fails(rich_bundle[1], forge, at="hypotheses[0].history[1]")


# -- values of another type -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("forge", "at"),
    [
        (
            lambda d: d["recipe"]["content"]["comparisons"][0]["engine"].update(version=7),
            "recipe.comparisons[0].engine.version",
        ),
        (lambda d: d["recipe"]["content"]["comparisons"][0].update(ref={"a": 1}), "recipe.comparisons[0].ref"),
        (lambda d: d["results"]["content"]["comparisons"][0].update(ref={"a": 1}), "results.comparisons[0].ref"),
        (lambda d: d["hypotheses"][0].update(history=[{"status": "maybe"}]), "hypotheses[0].history[0].status"),
        (lambda d: d["investigation"].update(title=["x"]), "investigation.title"),
    ],
)
def test_a_value_of_another_type_is_refused_with_its_path(demo_bundles, forge, at):
    forged = _forged(demo_bundles["inference"], forge)
    report = verify_bundle(forged)  # verify itself: import is refused too
    assert not report.ok and report.mismatched == [at], report.mismatched
    again = verify_bundle(forged, recompute=True)  # no internal error under --recompute either
    assert [c.part for c in again.recompute] == ["recompute"]
