"""A hypothesis is decided by its own test (``workbench.bundle.decisive``, applied by
``wb hypothesis status`` and by ``--recompute`` alike): evidence of the kind its test names,
recorded after it, and not what the observations it was derived from rest on."""

from __future__ import annotations

import pytest

from store import open_store
from tests.investigations.fakes import fake_compare, populate
from workbench.errors import UsageError
from workbench.investigations import workflow as wf

pytestmark = pytest.mark.store


@pytest.fixture
def suggested(store_url, tmp_path):
    """A comparison, its observations pinned, then a hypothesis they suggested (its test: a comparison)."""
    st = open_store(store_url)
    base, cand, _ = populate(st, tmp_path, n_per_side=3)
    inv = wf.new_investigation(st, lens="inference", question="Ship it?", baseline=base, candidate=cand).id
    first = wf.store_comparison(st, inv, base, cand, engine=fake_compare)
    wf.observations_from_comparison(st, inv, first.id)
    hyp = wf.new_hypothesis(st, inv, "TTFT grew.", "compare four runs", test_kind="comparison")
    yield st, inv, base, cand, first, hyp
    st.close()


def _decide(st, hyp, comparison):
    return wf.decide_hypothesis(st, hyp.id, "supported", evidence=[{"kind": "comparison", "id": comparison.id}])


def test_the_comparison_that_suggested_it_cannot_decide_it(suggested):
    st, inv, _, _, first, hyp = suggested
    with pytest.raises(UsageError, match=f"comparison {first.id} was recorded before the hypothesis"):
        _decide(st, hyp, first)
    assert wf.investigation_view(st, inv).hypotheses[0].status == "open"


def test_the_same_figures_made_again_after_it_cannot_decide_it(suggested):
    st, inv, base, cand, _, hyp = suggested
    again = wf.store_comparison(st, inv, base, cand, engine=fake_compare)  # after the hypothesis, same runs
    with pytest.raises(UsageError, match="what the observation it was derived from rests on"):
        _decide(st, hyp, again)


def test_its_own_test_decides_it(suggested):
    st, inv, base, cand, _, hyp = suggested
    fresh = wf.store_comparison(st, inv, base[:2], cand[:2], engine=fake_compare)
    assert _decide(st, hyp, fresh).status == "supported"


def test_evidence_of_another_kind_than_its_test_cannot_decide_it(suggested):
    st, inv, base, cand, _, _ = suggested
    rerun_test = wf.new_hypothesis(st, inv, "The queue is the cause.", "an interleaved rerun")  # test kind: rerun
    fresh = wf.store_comparison(st, inv, base[:2], cand[:2], engine=fake_compare)
    with pytest.raises(UsageError, match="its test is a rerun: it is decided by rerun_comparison or rerun_plan"):
        _decide(st, rerun_test, fresh)
    with pytest.raises(UsageError, match="test's kind must be one of"):
        wf.new_hypothesis(st, inv, "x", "y", test_kind="hunch")


def test_a_hypothesis_written_before_wb_recorded_its_origin_is_placed_by_time(suggested):
    from store.investigations import Hypothesis

    st, inv, base, cand, first, hyp = suggested
    fresh = wf.store_comparison(st, inv, base[:2], cand[:2], engine=fake_compare)
    with st.session() as s:  # as a store upgraded from schema 4 holds it
        row = s.get(Hypothesis, hyp.id)
        row.test_kind, row.evidence_before, row.created_at = None, None, "2100-01-01T00:00:00+00:00"
        s.add(row)
    with pytest.raises(UsageError, match="recorded before the hypothesis"):
        _decide(st, hyp, fresh)  # everything in the store is older than it
    with st.session() as s:
        row = s.get(Hypothesis, hyp.id)
        row.created_at = "2000-01-01T00:00:00+00:00"
        s.add(row)
    assert _decide(st, hyp, first).status == "supported"  # no kind named; everything came after it
