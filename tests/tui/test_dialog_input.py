"""Dialogs never lose input: keys typed faster than a dialog mounts are replayed into its
fields in order, and a validation error keeps every field as typed (issue 30 item 4)."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Input

from tests.tui.pilot import screen_text, settle, text_of
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets import Field, FormScreen


def burst(app, keys: list[str]) -> None:
    """Keys as a terminal delivers a fast typist's or a paste: all queued before any is handled."""
    for key in keys:
        char = {"tab": "\t", "enter": "\r", "space": " ", "backspace": "\x7f"}.get(key, key if len(key) == 1 else None)
        app.post_message(events.Key(key, char))


def fields(app) -> dict[str, str]:
    return {i.id.removeprefix("field-"): i.value for i in app.screen.query(Input)}


async def _open_hypothesize(app, pilot):
    await settle(app, pilot)
    await pilot.press("enter")
    await settle(app, pilot)
    await pilot.press("4")
    await settle(app, pilot)


@pytest.mark.asyncio
async def test_a_burst_of_keys_fills_the_dialog_in_order(demo_url):
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_hypothesize(app, pilot)
        before = len(app.inv.hypotheses)
        burst(app, ["h", *"rank", "space", "5", "space", *"lags", "tab", *"swap", "space", *"it", "backspace", "t"])
        await settle(app, pilot)
        assert isinstance(app.screen, FormScreen)
        assert fields(app) == {"statement": "rank 5 lags", "test": "swap it", "test_kind": "rerun"}
        burst(app, ["tab", "enter"])  # Enter submits from the last field (the test's kind, "rerun" given)
        await settle(app, pilot)
        assert not isinstance(app.screen, FormScreen)
        assert len(app.inv.hypotheses) == before + 1
        assert app.inv.hypotheses[-1].statement == "rank 5 lags"


@pytest.mark.asyncio
async def test_a_validation_error_keeps_the_dialog_and_what_was_typed(demo_url):
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_hypothesize(app, pilot)
        before = len(app.inv.hypotheses)
        burst(app, ["h", *"a claim", "tab", "tab", "enter"])  # the test left empty, then submitted
        await settle(app, pilot)
        assert isinstance(app.screen, FormScreen), "the dialog stays open"
        assert fields(app) == {"statement": "a claim", "test": "", "test_kind": "rerun"}
        assert app.focused is app.screen.query_one("#field-test", Input), "the cursor is on the field at fault"
        assert "must not be empty" in text_of(app.screen.query_one("#form-error"))
        assert len(app.inv.hypotheses) == before


@pytest.mark.asyncio
async def test_the_hypothesis_records_its_tests_kind_and_refuses_an_unknown_one(demo_url):
    """Issue 42's own-test rule from the TUI: the kind is asked (rerun by default), checked in the
    dialog, and stored with the hypothesis."""
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_hypothesize(app, pilot)
        burst(app, ["h", *"a claim", "tab", *"a compare", "tab", "ctrl+a", "ctrl+k", *"yes", "enter"])
        await settle(app, pilot)
        assert isinstance(app.screen, FormScreen), "an unknown kind keeps the dialog open"
        assert "must be one of" in text_of(app.screen.query_one("#form-error"))
        burst(app, ["ctrl+a", "ctrl+k", *"comparison", "enter"])
        await settle(app, pilot)
        assert not isinstance(app.screen, FormScreen)
        assert app.inv.hypotheses[-1].test_kind == "comparison"


@pytest.mark.asyncio
async def test_a_long_prefilled_value_is_on_screen(demo_url):
    """A path longer than its field scrolls sideways: the field's one line shows the value's end
    at the cursor (a horizontal scrollbar once took that line and left only the cursor)."""
    path = "/tmp/" + "/".join(f"folder-{i}" for i in range(12)) + "/investigation-1.bundle.json"
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.push_screen(
            FormScreen("Export", [Field("path", "Write to", value=path), Field("embed", "Embed", value="yes")])
        )
        await settle(app, pilot)
        field = app.screen.query(Input).first()
        assert field.scroll_offset.x > 0  # the value is longer than the field
        assert "investigation-1.bundle.json" in screen_text(app)[field.region.y]
