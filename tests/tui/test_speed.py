"""What keeps keys quick, checked by what the app does (never by how long it took:
bench/tui.py measures that): lists are not measured again when their pane is shown
again, a highlight and its detail line are drawn together, a plan's report is fetched
once, and the garbage collector's freeze keeps a bounded amount."""

from __future__ import annotations

import gc

import pytest

from tests.tui.pilot import settle, text_of
from workbench.tui import services
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets import PaneList


async def _open_first(app, pilot) -> None:
    await settle(app, pilot)
    await pilot.press("enter")  # investigation 1
    await settle(app, pilot)


@pytest.mark.asyncio
async def test_lists_are_not_measured_again_when_their_pane_is_shown_again(demo_url, monkeypatch):
    cleared: list[str] = []
    clear = PaneList._clear_caches
    monkeypatch.setattr(PaneList, "_clear_caches", lambda self: (cleared.append(self.id), clear(self)))
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_first(app, pilot)
        for key in "234512":  # every pane with a list shown once
            await pilot.press(key)
            await settle(app, pilot)
        cleared.clear()
        for key in "3425132":
            await pilot.press(key)
            await settle(app, pilot)
        assert cleared == []  # shown again at the same size: the measured options are kept
        await pilot.resize_terminal(100, 30)
        await settle(app, pilot)
        assert "baseline-list" in cleared  # a new size is measured again
        assert app.query_one("#baseline-list").option_count > 0


@pytest.mark.asyncio
async def test_detail_line_follows_the_highlight_in_the_same_handler(demo_url):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_first(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        picker = app.query_one("#baseline-list")
        run_id = int(picker.get_option_at_index(2).id)
        picker.highlighted = 2  # no pause: the line is drawn with the highlight, not a message later
        assert f"{run_id}: {picker.label_of(run_id)}" in text_of(app.query_one("#run-detail"))


@pytest.mark.asyncio
async def test_a_plans_report_is_fetched_once_until_the_list_reloads(demo_url, monkeypatch):
    from store import open_store

    store = open_store(demo_url)
    with store.session() as s:  # two plans without calibration runs (new_cpu_plan would run the workload)
        from store.rerun import save_plan
        from workbench.rerun.plan import build_plan

        for name in ("p1", "p2"):
            plan = build_plan(
                {
                    "name": name,
                    "lens": "training",
                    "rounds": 3,
                    "baseline": {"argv": ["true"]},
                    "candidate": {"argv": ["true", name]},
                }
            )
            save_plan(s, plan.name, plan.lens, plan.digest(), plan.to_json(), plan.origin)
    fetched: list[int] = []
    text = services.plan_text
    monkeypatch.setattr(services, "plan_text", lambda st, plan_id: (fetched.append(plan_id), text(st, plan_id))[1])
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_first(app, pilot)
        await pilot.press("5")
        await settle(app, pilot)
        for key in ("down", "up", "down", "up"):
            await pilot.press(key)
            await settle(app, pilot)
        assert sorted(fetched) == [1, 2]  # each once, however often the cursor passes
        assert "plan 1 p1" in text_of(app.query_one("#plan-detail"))
        app.query_one("#stage-verify").show(app.inv)  # what a finished run does: the list reloads
        await settle(app, pilot)
        await pilot.press("down")
        await settle(app, pilot)
        assert fetched.count(2) == 2  # reloaded: drawn afresh (a run may have changed it)


@pytest.mark.asyncio
async def test_the_collector_freeze_is_done_once_and_stays_bounded(demo_url):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_first(app, pilot)
        frozen = gc.get_freeze_count()
        assert frozen > 0  # the widgets are out of the collector's reach
        for i in range(6):
            app.open_investigation(1 + i % 3)
            await settle(app, pilot)
        # A freeze on every load kept ~2,600 more objects a load for good (cycles that died later).
        assert gc.get_freeze_count() <= frozen
    gc.unfreeze()
