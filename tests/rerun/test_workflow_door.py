"""The rerun door (workbench/rerun/workflow.py): the faces' one way to stored plans and executions.

It opens the sessions and returns typed records; the store's refusals come out as the CLI's
errors (an unknown plan is a usage error, exit 2; a change to an executed plan is refused, exit 3)."""

from __future__ import annotations

import pytest

from store import open_store
from store.rerun import RerunComparison, RerunExecution
from workbench.errors import EXIT_REFUSED, EXIT_USAGE, UsageError, WbError
from workbench.rerun import workflow as door
from workbench.rerun.plan import build_plan
from workbench.rerun.preflight import run_preflight

pytestmark = pytest.mark.store


def _plan(rounds: int = 5):
    return build_plan(
        {
            "name": "gemm",
            "lens": "training",
            "rounds": rounds,
            "seed": 7,
            "baseline": {"argv": ["./bench", "--old"]},
            "candidate": {"argv": ["./bench", "--new"]},
        }
    )


def test_save_load_list_and_history_are_typed_records(store_url):
    st = open_store(store_url)
    saved = door.save(st, _plan())
    assert saved.status == "added" and saved.plan.name == "gemm" and isinstance(saved.id, int)
    assert door.save(st, _plan()).status == "unchanged"
    stored = door.load(st, "gemm")
    assert stored.id == saved.id and stored.digest == saved.digest and stored.plan == _plan()
    assert door.load(st, str(saved.id)).plan == stored.plan
    (row,) = door.plan_list(st).plans
    assert (row.id, row.name, row.lens, row.digest) == (saved.id, "gemm", "training", saved.digest)
    (history,) = door.plan_histories(st)
    assert history.id == saved.id and history.executions == () and history.last_status == "not run"
    detail = door.detail(st, saved.id)
    assert detail.stored == stored and detail.last is None and detail.preflight is None and detail.comparison is None
    assert door.has_unfinished(st, saved.id) is False


def test_an_unknown_plan_is_a_usage_error_and_an_unrun_one_has_no_latest_execution(store_url):
    st = open_store(store_url)
    for call in (
        lambda: door.load(st, "nope"),
        lambda: door.detail(st, "nope"),
        lambda: door.latest_execution(st, "nope"),
    ):
        with pytest.raises(UsageError, match="no rerun plan") as err:
            call()
        assert err.value.exit_code == EXIT_USAGE
    door.save(st, _plan())
    with pytest.raises(UsageError, match="has not run yet"):
        door.latest_execution(st, "gemm")
    with pytest.raises(UsageError, match="has no execution 99"):
        door.finish(st, "gemm", 99)


def test_an_executed_plan_cannot_change_and_its_executions_are_read_back(store_url):
    st = open_store(store_url)
    saved = door.save(st, _plan())
    pf = run_preflight()
    with st.session() as s:  # an execution as the executor records one (its preflight beside it)
        s.add(
            RerunExecution(
                plan_id=saved.id, host="h", pid=1, status="interrupted", schedule=[[1, "A"]], preflights=[pf.to_json()]
            )
        )
    with pytest.raises(WbError, match="new name") as err:
        door.save(st, _plan(rounds=6))
    assert err.value.exit_code == EXIT_REFUSED
    (history,) = door.plan_histories(st)
    assert [e.status for e in history.executions] == ["interrupted"] and history.last_status == "interrupted"
    assert door.has_unfinished(st, saved.id) is True
    detail = door.detail(st, "gemm")
    assert detail.last is not None and detail.last.status == "interrupted"
    assert detail.preflight is not None and detail.preflight.gpu.status == pf.report().gpu.status  # typed, not a dict
    assert door.latest_execution(st, "gemm") == detail.last.id


def test_finishing_an_execution_stores_its_comparison_once(store_url):
    st = open_store(store_url)
    saved = door.save(st, _plan())
    with st.session() as s:
        execution = RerunExecution(plan_id=saved.id, host="h", pid=1, status="done", schedule=[[1, "A"]])
        s.add(execution)
        s.flush()
        execution_id = int(execution.id)
    first = door.finish(st, "gemm", execution_id)
    again = door.finish(st, saved.id, execution_id)
    assert first.comparison_id == again.comparison_id  # the same result is stored once
    assert first.report.execution.id == execution_id and first.report.analysis is None  # no runs: no effect
    detail = door.detail(st, "gemm")
    assert detail.comparison is not None and detail.comparison.execution.id == execution_id
    with st.session() as s:
        assert s.get(RerunComparison, first.comparison_id) is not None
