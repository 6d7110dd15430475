"""Verify from the TUI: a rerun runs to a verdict in a worker; cancel keeps finished runs."""

from __future__ import annotations

import asyncio

import pytest

from tests.tui.pilot import settle, text_of
from workbench.tui.app import WorkbenchApp

pytestmark = pytest.mark.asyncio

VERDICTS = ("REGRESSION", "IMPROVEMENT", "EQUIVALENT", "SLOWER_UNRESOLVED", "FASTER_UNRESOLVED", "INCONCLUSIVE")


async def _new_plan(app, pilot, rounds: str) -> None:
    await pilot.press("5")
    await settle(app, pilot)
    await pilot.press("n")
    await pilot.pause()
    app.screen.query_one("#field-slowdown").value = "30"
    app.screen.query_one("#field-rounds").value = rounds
    await pilot.click("#ok")
    await settle(app, pilot)


async def test_rerun_runs_to_a_verdict(demo_url):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape")  # close the picker: Verify needs no investigation
        await _new_plan(app, pilot, "3")
        assert app.query_one("#plans").option_count == 1
        await pilot.press("r")
        await settle(app, pilot, rounds=4)
        detail = text_of(app.query_one("#plan-detail"))
        assert "complete" in detail
        assert any(v in detail for v in VERDICTS), detail


async def test_cancel_keeps_finished_runs(demo_url):
    from store import open_store
    from store.rerun import executions_of, runs_of

    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape")
        await _new_plan(app, pilot, "6")
        stage = app.query_one("#stage-verify")
        await pilot.press("r")
        for _ in range(600):  # wait until at least one run has finished
            await asyncio.sleep(0.1)
            if app.query_one("#rerun-progress").progress >= 1:
                break
        await pilot.press("escape")
        assert stage.stop.is_set()
        await settle(app, pilot, rounds=4)
        assert not stage.running
    store = open_store(demo_url)
    with store.session() as s:
        (execution,) = executions_of(s, 1)
        runs = runs_of(s, int(execution.id))
        assert execution.status == "interrupted"
        total = len(execution.schedule)
        assert 1 <= len(runs) < total
