"""Focus is visible without colour (issue 49 item 2): under NO_COLOR every dialog draws its
focused button apart from the other (reverse video, the one focus mark used everywhere: a
button, a list's highlighted row, an input's cursor), and moving the focus moves the mark."""

from __future__ import annotations

import pytest
from textual.color import Color
from textual.geometry import Region
from textual.widgets import Button, Input

from tests.tui.pilot import DIALOGS, settle
from workbench.tui.app import WorkbenchApp


def drawn_styles(app, region, blank: bool = False) -> set[tuple]:
    """The attributes of the text drawn in ``region`` (blank cells too with ``blank``: a cursor
    at a field's end is a reversed space), after the app's filters (NO_COLOR's among them):
    what the terminal is told, colour and all."""
    out = set()
    for y, line in enumerate(app.screen._compositor.render_full_update().strips):
        if not region.y <= y < region.bottom:
            continue
        segments = [seg for strip in line for seg in strip]
        for line_filter in app._filters:
            segments = line_filter.apply(segments, Color(0, 0, 0))
        x = 0
        for seg in segments:
            x0, x = x, x + len(seg.text)
            if (blank or seg.text.strip()) and x0 >= region.x and x <= region.right and seg.style is not None:
                s = seg.style
                out.add((bool(s.bold), bool(s.reverse), bool(s.underline), s.color, s.bgcolor))
    return out


@pytest.mark.asyncio
async def test_every_dialogs_focused_button_differs_under_no_color(demo_url, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        checked = 0
        for pane, keys in DIALOGS:
            await pilot.press(pane)
            await settle(app, pilot)
            await pilot.press(*keys)
            await settle(app, pilot)
            buttons = list(app.screen.query(Button))
            if buttons:
                ok, cancel = (app.screen.query_one(f"#{name}", Button) for name in ("ok", "cancel"))
                for focused, other in ((ok, cancel), (cancel, ok)):
                    focused.focus()
                    await pilot.pause()
                    mine, theirs = drawn_styles(app, focused.region), drawn_styles(app, other.region)
                    assert mine and theirs and mine != theirs, (keys, mine, theirs)
                    assert all(reverse for _b, reverse, *_ in mine), (keys, mine)  # the one focus mark
                    colours = {c for *_, fg, bg in mine | theirs for c in (fg, bg) if c is not None}
                    assert all(c.is_default for c in colours), colours  # no colour at all: the attribute tells
                inputs = list(app.screen.query(Input))
                if inputs:  # an input's cursor: reverse video too (the theme's cursor is colour alone)
                    inputs[0].focus()
                    await pilot.pause()
                    cursor = inputs[0].region
                    assert any(reverse for _b, reverse, *_ in drawn_styles(app, cursor, blank=True))
                checked += 1
            while app.screen is not app.screen_stack[0]:
                await pilot.press("escape")
                await settle(app, pilot)
        assert checked >= 9  # every form dialog of the list


@pytest.mark.asyncio
async def test_the_focused_list_is_the_one_in_reverse_under_no_color(demo_url, monkeypatch):
    """Compare's three run lists each keep a highlighted row: only the focused list's is in
    reverse video, so Tab's effect is seen without colour."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "2")
        await settle(app, pilot)
        lists = [app.query_one(f"#{name}-list") for name in ("baseline", "candidate", "control")]
        for focused in lists:
            focused.focus()
            await pilot.pause()
            for runs in lists:
                row = runs.region
                y = row.y + 1 + runs.highlighted - runs.scroll_offset.y  # inside the border
                highlighted = Region(row.x + 1, y, row.width - 2, 1)
                reversed_ = {reverse for _b, reverse, *_ in drawn_styles(app, highlighted)}
                assert reversed_ == {runs is focused}, (focused.id, runs.id, reversed_)
