"""Rerun records in the store (SQLite, and PostgreSQL when configured): plans are immutable once run."""

from __future__ import annotations

import pytest

from store import open_store
from store.rerun import (
    PlanImmutable,
    PlanNotFound,
    RerunComparison,
    RerunExecution,
    RerunRun,
    comparisons_of,
    executions_of,
    find_plan,
    list_plans,
    runs_of,
    save_plan,
)

pytestmark = pytest.mark.store


def test_plan_lifecycle_and_immutability(store_url):
    st = open_store(store_url)
    with st.session() as s:
        plan, how = save_plan(s, "gemm", "training", "d1", {"rounds": 10})
        assert how == "added"
    with st.session() as s:
        assert save_plan(s, "gemm", "training", "d1", {"rounds": 10})[1] == "unchanged"
        assert save_plan(s, "gemm", "training", "d2", {"rounds": 12})[1] == "replaced"  # never ran: may change
    with st.session() as s:
        s.add(RerunExecution(plan_id=plan.id, host="h", pid=1, schedule=[[1, "A"], [1, "B"], [1, "A'"]]))
    with pytest.raises(PlanImmutable, match="new name"):
        with st.session() as s:
            save_plan(s, "gemm", "training", "d3", {"rounds": 3})
    # Enforced below the application too: an ORM update of an executed plan is refused.
    with pytest.raises(PlanImmutable):
        with st.session() as s:
            row = find_plan(s, "gemm")
            row.body = {"rounds": 4}
            s.add(row)
    with pytest.raises(PlanImmutable):
        with st.session() as s:
            s.delete(find_plan(s, "gemm"))
    with st.session() as s:
        row = find_plan(s, str(plan.id))
        assert row.digest == "d2" and row.body == {"rounds": 12}
        assert [p.name for p in list_plans(s)] == ["gemm"]
    with pytest.raises(PlanNotFound):
        with st.session() as s:
            find_plan(s, "other")


def test_runs_and_comparisons_belong_to_their_execution(store_url):
    st = open_store(store_url)
    with st.session() as s:
        plan, _ = save_plan(s, "p", "training", "d", {})
        e = RerunExecution(plan_id=plan.id)
        s.add(e)
        s.flush()
        s.add(RerunRun(execution_id=e.id, round=1, arm="A", slot=0, status="ok", argv=["./bench"], statistic=10.5))
        s.add(
            RerunRun(
                execution_id=e.id,
                round=1,
                arm="B",
                slot=1,
                status="failed",
                reason="exit status 1",
                argv=["./bench", "-x"],
            )
        )
        s.add(
            RerunComparison(
                plan_id=plan.id, execution_id=e.id, rounds_used=0, verdict=None, digest="x", body={"verdict": None}
            )
        )
    with st.session() as s:
        (e,) = executions_of(s, plan.id)
        runs = runs_of(s, e.id)
        assert [(r.arm, r.status, r.statistic) for r in runs] == [("A", "ok", 10.5), ("B", "failed", None)]
        assert runs[1].argv == ["./bench", "-x"] and runs[1].run_id is None
        assert [c.body for c in comparisons_of(s, e.id)] == [{"verdict": None}]
