"""What a key did, or why it did nothing, is said on the pane where the user looks (a list's
heading, a status line, the pane's result), never in a toast over the report (issue 49 item 4)."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from tests.tui.pilot import settle, text_of
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets import FormScreen


async def keys(app, pilot, *pressed: str) -> None:
    await pilot.press(*pressed)
    await settle(app, pilot)


@pytest.mark.asyncio
async def test_keys_that_do_nothing_say_why_on_their_pane(demo_url):
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await keys(app, pilot, "escape", "6", "e")  # no investigation open
        assert "Pick an investigation first" in text_of(app.query_one("#share-result"))
        await keys(app, pilot, "1", "n", "enter")  # a new inference investigation: nothing in it yet
        await keys(app, pilot, *"Is it slower?", "enter", "enter")
        assert app.inv is not None and not app.inv.comparisons
        toasts = len(app._notifications)
        for pane, key, where, said in (
            ("2", "c", "#run-detail", "Select at least one baseline and one candidate run"),
            ("3", "p", "#derived-label", "Select a derived observation first"),
            ("4", "s", "#hyp-detail", "Select a hypothesis first"),
            ("4", "x", "#hyp-detail", "Select an observation first"),
            ("5", "r", "#rerun-status", "Pick a plan first"),
        ):
            await keys(app, pilot, pane, key)
            assert said in text_of(app.query_one(where)), (key, text_of(app.query_one(where)))
        assert len(app._notifications) == toasts  # not one toast over a report


@pytest.mark.asyncio
async def test_a_custom_plans_numbers_are_checked_in_its_dialog(demo_url):
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await keys(app, pilot, "enter", "5", "N")
        rounds = app.screen.query_one("#field-rounds", Input)
        rounds.value = "five"
        rounds.focus()
        await keys(app, pilot, "enter")
        assert isinstance(app.screen, FormScreen) and app.focused is rounds  # open, on the field at fault
        assert "rounds must be a whole number" in text_of(app.screen.query_one("#form-error"))
