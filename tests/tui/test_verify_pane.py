"""Verify from the TUI: the one-key plan reaches a verdict; cancel keeps finished runs."""

from __future__ import annotations

import asyncio

import pytest

from tests.tui.pilot import settle, text_of
from workbench.tui.app import WorkbenchApp

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]


async def test_one_key_plan_in_the_investigations_lens_reaches_regression(demo_url):
    """Verify → n → r: the bundled CPU workload in the inference investigation's lens, the
    estimate first, and REGRESSION for the built-in +5 % candidate."""
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")  # investigation 1: inference
        await settle(app, pilot)
        await pilot.press("5", "n")
        await settle(app, pilot)
        plans = app.query_one("#plans")
        assert plans.option_count == 1 and "[inference, not run]" in str(plans.get_option_at_index(0).prompt)
        detail = text_of(app.query_one("#plan-detail"))
        assert "estimated" in detail and "candidate +5 %" in detail, detail
        await pilot.press("r")
        await pilot.pause()
        for _ in range(50):  # the estimate comes before the first run finishes
            status = text_of(app.query_one("#rerun-status"))
            if "estimated" in status:
                break
            await asyncio.sleep(0.05)
        assert "estimated" in status and "runs" in status, status
        await settle(app, pilot, rounds=4)
        detail = text_of(app.query_one("#plan-detail"))
        assert "complete" in detail and "inference lens" in detail
        assert "Verdict: REGRESSION" in detail, detail


async def test_fleet_investigation_gets_a_clear_refusal(demo_url):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        picker = app.screen.query_one("#picker-list")
        picker.highlighted = 2  # investigation 3: fleet
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("5", "n")
        await settle(app, pilot)
        assert app.query_one("#plans").option_count == 0
        assert "cannot stand in for a fleet investigation" in text_of(app.query_one("#rerun-status"))


async def test_cancel_keeps_finished_runs(demo_url):
    from store import open_store
    from store.rerun import executions_of, runs_of

    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape")  # no investigation: a training plan
        await pilot.press("5", "N")
        await pilot.pause()
        app.screen.query_one("#field-rounds").value = "6"
        await pilot.click("#ok")
        await settle(app, pilot)
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
