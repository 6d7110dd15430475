"""Decision and declaration history is append-only in the database itself: a bulk UPDATE or
DELETE through the store's own session, or raw SQL, is refused on both backends (the ORM's
guards are only the first line); a history row goes only with the record it belongs to."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, text, update

from store import open_store
from store.actions import ActionDecision, ActionVerification
from store.append_only import APPEND_ONLY
from store.declarations import DimensionDeclaration, declare
from store.investigations import HypothesisStatus
from store.schema import SCHEMA_VERSION
from store.tidy import remove_runs
from tests.investigations.fakes import populate
from workbench.actions import workflow as aw
from workbench.investigations import workflow as wf

pytestmark = pytest.mark.store


def _history(st, tmp_path):
    """An action approved, a hypothesis decided, a run with a declaration: one row of each history."""
    inv = wf.new_investigation(st, lens="inference", question="Raise max_num_seqs?", baseline=[], candidate=[])
    hyp = wf.new_hypothesis(st, inv.id, "Requests wait for a batch slot.", "a rerun with queue_ms per run")
    wf.decide_hypothesis(st, hyp.id, "undetermined", note="nothing yet")
    action = aw.propose_action(st, inv.id, scope="pool-a", changes={"max_num_seqs": ["128", "256"]}, because=[hyp.id])
    aw.decide_action(st, action.id, "approved", by="dana", why="queue time dominates")
    with st.session() as s:  # a verification row (what verify_action writes, without running a plan)
        s.add(ActionVerification(action_id=action.id, plan_id=None, observed={}, by="dana"))
    (run_id,), _, _ = populate(st, tmp_path, n_per_side=1)
    declare(st, [run_id], {"region": "eu"}, who="dana", why="from the inventory")
    return action.id, run_id


def _counts(st) -> dict[str, int]:
    with st.engine.connect() as conn:
        return {t: conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one() for t in APPEND_ONLY}


def _refused(st, statement) -> None:
    with pytest.raises(Exception, match="append-only history"):
        with st.session() as s:
            s.execute(statement)


BULK = {
    "decision updated": update(ActionDecision).values(decision="rejected"),
    "decision deleted": delete(ActionDecision),
    "verification deleted": delete(ActionVerification),
    "hypothesis decision rewritten": update(HypothesisStatus).values(status="supported"),
    "hypothesis decision deleted": delete(HypothesisStatus),
    "declaration rewritten": update(DimensionDeclaration).values(value="v3"),
    "declaration deleted": delete(DimensionDeclaration),
}


@pytest.mark.parametrize("name", sorted(BULK))
def test_a_bulk_change_through_the_stores_session_is_refused(store_url, tmp_path, name):
    st = open_store(store_url)
    _history(st, tmp_path)
    before = _counts(st)
    _refused(st, BULK[name])  # a Core statement: the ORM's per-row guards never see it
    assert _counts(st) == before
    view = aw.list_actions(st)[0]
    assert [(d.decision, d.by) for d in view.decisions] == [("approved", "dana")]
    st.close()


RAW = [
    "UPDATE action_decision SET decision = 'rejected'",
    "UPDATE action_decision SET why = 'edited'",
    "DELETE FROM action_decision",
    "DELETE FROM action_verification",
    "UPDATE action SET scope = 'everywhere'",
    "DELETE FROM action",
    "UPDATE hypothesis_status SET status = 'refuted'",
    "DELETE FROM hypothesis_status",
    "UPDATE dimension_declaration SET why = 'edited'",
    "DELETE FROM dimension_declaration",
]


@pytest.mark.parametrize("sql", RAW)
def test_raw_sql_cannot_edit_or_remove_history(store_url, tmp_path, sql):
    st = open_store(store_url)
    _history(st, tmp_path)
    before = _counts(st)
    with pytest.raises(Exception, match="append-only history"):
        with st.engine.begin() as conn:
            conn.exec_driver_sql(sql)
    assert _counts(st) == before
    st.close()


def test_history_goes_only_with_what_it_belongs_to(store_url, tmp_path):
    """Removing a run removes its declarations (the owner's cascade passes the trigger)."""
    st = open_store(store_url)
    _, run_id = _history(st, tmp_path)
    remove_runs(st, [run_id])
    assert _counts(st)["dimension_declaration"] == 0
    assert _counts(st)["action_decision"] == 1
    st.close()


def test_a_version_4_store_gets_the_triggers_and_the_hypothesis_columns(tmp_path):
    url = f"sqlite:///{tmp_path / 'v4.sqlite'}"
    st = open_store(url)
    _history(st, tmp_path)
    with st.engine.begin() as conn:
        for table in APPEND_ONLY:
            for suffix in ("no_update", "no_delete"):
                conn.exec_driver_sql(f"DROP TRIGGER {table}_{suffix}")
        conn.exec_driver_sql("ALTER TABLE hypothesis DROP COLUMN test_kind")
        conn.exec_driver_sql("ALTER TABLE hypothesis DROP COLUMN evidence_before")
        conn.execute(text("UPDATE wb_meta SET value = '4' WHERE key = 'schema_version'"))
    st.close()
    again = open_store(url)
    written_before = wf.investigation_view(again, 1).hypotheses[0]
    assert written_before.test_kind is None and written_before.evidence_before is None  # any kind, placed by time
    with again.engine.begin() as conn:
        assert conn.execute(text("SELECT value FROM wb_meta WHERE key = 'schema_version'")).scalar_one() == str(
            SCHEMA_VERSION
        )
    with pytest.raises(Exception, match="append-only history"):
        with again.engine.begin() as conn:
            conn.exec_driver_sql("DELETE FROM action_decision")
    again.close()
