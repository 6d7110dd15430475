"""Actions in the TUI: Verify lists them and approves one through the reason dialog;
Hypothesize shows the actions that cite a hypothesis."""

from __future__ import annotations

import pytest

from store import open_store
from tests.tui.pilot import settle, text_of
from workbench.actions import workflow as aw
from workbench.tui.app import WorkbenchApp

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]


def _propose(url: str) -> int:
    st = open_store(url)
    try:
        return aw.propose_action(
            st,
            1,
            scope="pool-a",
            changes={"max_num_seqs": ["128", "256"]},
            because=[1],
            expect=("queue_ms", "decrease"),
            by="test",
        ).id
    finally:
        st.close()


async def test_verify_lists_actions_and_approves_with_the_reason_dialog(demo_url):
    action_id = _propose(demo_url)
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")  # investigation 1: inference
        await settle(app, pilot)
        await pilot.press("5")
        await settle(app, pilot)
        plans = app.query_one("#plans")
        ids = [plans.get_option_at_index(i).id for i in range(plans.option_count)]
        assert f"a{action_id}" in ids, ids
        plans.focus()
        plans.highlighted = ids.index(f"a{action_id}")
        await settle(app, pilot)
        detail = text_of(app.query_one("#plan-detail"))
        assert "[proposed]" in detail and "a approve" in detail, detail
        await pilot.press("a")
        await settle(app, pilot)
        app.screen.query_one("#field-why").value = "queue time dominates TTFT p95"
        await pilot.click("#ok")
        await settle(app, pilot)
        assert "approved by" in text_of(app.query_one("#plan-detail"))
    st = open_store(demo_url)
    view = aw.action_view(st, action_id)
    st.close()
    assert [d.decision for d in view.decisions] == ["approved"] and view.decisions[
        0
    ].why == "queue time dominates TTFT p95"
    assert view.status.status == "pending"


async def test_hypothesize_shows_the_actions_citing_a_hypothesis(demo_url):
    action_id = _propose(demo_url)
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        app.query_one("#hypotheses").focus()
        await settle(app, pilot)
        detail = text_of(app.query_one("#hyp-detail"))
        assert f"actions: {action_id} engine_config.max_num_seqs 128 -> 256 [proposed]" in detail, detail
