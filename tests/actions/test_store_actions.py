"""The action tables: schema 3 -> 4, append-only history, a status never stored."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from store import open_store
from store.schema import SCHEMA_VERSION
from workbench.actions import workflow as aw
from workbench.investigations import workflow as wf

pytestmark = pytest.mark.store


def _investigation(st):
    inv = wf.new_investigation(
        st, lens="inference", question="Raise max_num_seqs?", intended_change={}, baseline=[], candidate=[]
    )
    hyp = wf.new_hypothesis(st, inv.id, "Requests wait for a batch slot.", "a rerun with queue_ms per run")
    return inv.id, hyp.id


def test_a_version_3_store_is_upgraded_with_empty_action_tables(tmp_path):
    url = f"sqlite:///{tmp_path / 'v3.sqlite'}"
    st = open_store(url)
    inv, hyp = _investigation(st)
    with st.engine.begin() as conn:
        for table in ("action_verification", "action_decision", "action"):
            conn.exec_driver_sql(f"DROP TABLE {table}")
        conn.execute(text("UPDATE wb_meta SET value = '3' WHERE key = 'schema_version'"))
    st.close()
    again = open_store(url)
    with again.engine.begin() as conn:
        assert (
            conn.execute(text("SELECT value FROM wb_meta WHERE key = 'schema_version'")).scalar_one()
            == str(SCHEMA_VERSION)
            == "5"
        )
        assert conn.execute(text("SELECT count(*) FROM action")).scalar_one() == 0
    assert wf.investigation_view(again, inv).question == "Raise max_num_seqs?"  # kept
    action = aw.propose_action(
        again,
        inv,
        scope="pool-a",
        changes={"max_num_seqs": ["128", "256"]},
        because=[hyp],
        expect=("queue_ms", "decrease"),
    )
    assert action.changes == {"engine_config.max_num_seqs": ["128", "256"]} and action.status.status == "proposed"
    again.close()


def test_decisions_are_append_only_and_the_status_is_derived(store_url):
    from store.actions import ActionDecision, ActionHistoryImmutable

    st = open_store(store_url)
    inv, hyp = _investigation(st)
    a = aw.propose_action(
        st,
        inv,
        scope="pool-a",
        changes={"max_num_seqs": ["128", "256"]},
        because=[hyp],
        expect=("queue_ms", "decrease"),
    )
    aw.decide_action(st, a.id, "approved", by="dana", why="queue time dominates")
    with pytest.raises(ActionHistoryImmutable):
        with st.session() as s:
            row = s.get(ActionDecision, 1)
            row.why = "rewritten"
            s.add(row)
    with pytest.raises(ActionHistoryImmutable):
        with st.session() as s:
            s.delete(s.get(ActionDecision, 1))
    view = aw.action_view(st, a.id)
    assert [(d.decision, d.why) for d in view.decisions] == [("approved", "queue time dominates")]
    assert view.status.status == "pending" and "no verification" in view.status.why
    with st.engine.connect() as conn:  # no status column anywhere: it is derived
        columns = (
            {r[1] for r in conn.exec_driver_sql("PRAGMA table_info(action)")}
            if st.engine.dialect.name == "sqlite"
            else set()
        )
    assert "status" not in columns
    st.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"changes": {}, "because": [1]}, "names its change"),
        ({"changes": {"max_num_seqs": ["1", "2"]}, "because": []}, "cites the hypothesis"),
        (
            {"changes": {"max_num_seqs": ["1", "2"]}, "because": [1], "expect": ("queue_ms", "sideways")},
            "decrease, increase, recovery",
        ),
        ({"changes": {"gpu_colour.shade": ["1", "2"]}, "because": [1], "kind": "version"}, "no such dimension"),
        ({"changes": {"max_num_seqs": ["1", "2"]}, "because": [99]}, "no hypothesis 99"),
    ],
)
def test_a_bad_proposal_is_refused_and_nothing_is_written(store_url, kwargs, message):
    from workbench.errors import WbError

    st = open_store(store_url)
    inv, _ = _investigation(st)
    with pytest.raises(WbError, match=message):
        aw.propose_action(st, inv, scope="x", **kwargs)
    assert aw.list_actions(st) == []
    st.close()


def test_a_plan_without_the_frames_guardrails_cannot_verify(store_url):
    from store.rerun import save_plan
    from workbench.errors import UsageError

    st = open_store(store_url)
    inv = wf.new_investigation(
        st,
        lens="inference",
        question="Raise max_num_seqs?",
        guardrails=["error_rate max_increase 0"],
        intended_change={},
        baseline=[],
        candidate=[],
    )
    hyp = wf.new_hypothesis(st, inv.id, "Requests wait for a batch slot.", "a rerun")
    a = aw.propose_action(
        st,
        inv.id,
        scope="pool-a",
        changes={"max_num_seqs": ["128", "256"]},
        because=[hyp.id],
        expect=("queue_ms", "decrease"),
    )
    aw.decide_action(st, a.id, "approved", by="dana", why="go")
    with st.session() as s:  # written past wb rerun plan, which would have added the frame's guardrails
        save_plan(
            s,
            "bare",
            "inference",
            "d" * 64,
            {"name": "bare", "metric": "queue_ms", "change": {"engine_config": []}, "guardrails": []},
            investigation_id=inv.id,
        )
    with pytest.raises(UsageError, match="does not carry investigation"):
        aw.verify_action(st, a.id, plan="bare")
    assert aw.action_view(st, a.id).verifications == []
    st.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("approve", "--by", "\u200b", "--why", "looks fine"), "--by (who) says nothing"),
        (("approve", "--by", "", "--why", "looks fine"), "--by (who) says nothing"),
        (("reject", "--by", "dana", "--why", "\u00ad"), "--why (the reason) says nothing"),
        (("reject", "--by", "dana", "--why", " \u2800\u3164 "), "--why (the reason) says nothing"),
        (("approve", "--by", "\ufeff\u034f", "--why", "\u200d"), "--by (who) says nothing"),
    ],
)
def test_the_door_refuses_a_decision_by_nobody_or_for_no_reason(store_url, args, message):
    from tests.rerun.helpers import wb

    st = open_store(store_url)
    inv, hyp = _investigation(st)
    a = aw.propose_action(st, inv, scope="pool-a", changes={"max_num_seqs": ["128", "256"]}, because=[hyp])
    code, _, err = wb("action", args[0], str(a.id), *args[1:], store=store_url)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert aw.action_view(st, a.id).decisions == []  # nothing was written
    st.close()
