"""Layouts that fit: dialogs with their buttons in view at 80x24 and 60x20, footers that keep
q, ? and the palette, one-line labels, lists that open highlighted, the minimum size, resizes."""

from __future__ import annotations

import pytest

from tests.tui.pilot import DIALOGS, screen_text, settle, text_of
from workbench.tui.app import WorkbenchApp

pytestmark = pytest.mark.asyncio


def _inside(widget, app) -> bool:
    r, screen = widget.region, app.screen.region
    return r.width > 0 and r.height > 0 and screen.contains_region(r)


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_every_dialog_fits_with_its_buttons(demo_url, size):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        for pane, keys in DIALOGS:
            await pilot.press(pane)
            await settle(app, pilot)
            await pilot.press(*keys)
            await settle(app, pilot)
            dialog = app.screen.query_one(".dialog")
            assert _inside(dialog, app), (keys, dialog.region)
            for button in app.screen.query("Button"):
                assert _inside(button, app), (keys, button.id, button.region)
            for field in app.screen.query("Input"):
                assert _inside(field, app) or field.region.height == 0 or dialog.query(".dialog-body"), keys
            while app.screen is not app.screen_stack[0]:
                await pilot.press("escape")
                await settle(app, pilot)


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_footer_keeps_quit_help_and_palette_in_every_stage(demo_url, size):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        for key in "123456":
            await pilot.press(key)
            await settle(app, pilot)
            footer = screen_text(app)[-1]
            assert footer.startswith(" q  Quit  ?  Help  ^p  Palette "), (key, footer)
            assert len(footer) == size[0]
            # the keys that fit, each whole ("d  Ch…" is no key), then "…" when some do not (? has them)
            shown = footer.rstrip().removesuffix("…").rstrip()
            whats = {b.description for _ns, b, _on, _tip in app.screen.active_bindings.values() if b.show}
            assert shown.endswith(tuple(whats | {"Palette"})), (key, footer)
            assert "…" not in shown, (key, footer)


async def test_q_quits_from_the_picker(demo_url):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert type(app.screen).__name__ == "InvestigationPicker"
        assert app.screen.query_one("#picker-list").highlighted == 0
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0 and not app.is_running


async def test_lists_open_highlighted_so_p_pins_at_once(demo_url):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "3")
        await settle(app, pilot)
        assert app.query_one("#derived").highlighted == 0
        before = len(app.inv.observations)
        await pilot.press("p")
        await settle(app, pilot)
        assert len(app.inv.observations) == before + 1
        for selector in ("#observations", "#hypotheses"):
            assert app.query_one(selector).highlighted == 0


async def test_labels_stay_on_one_line_and_lists_take_the_room_given(demo_url, tmp_path):
    from store import open_store
    from tests.foundation.helpers import inference_capture, write_json
    from workbench.ingest import import_files

    long_label = "a very long run label " * 8
    import_files(open_store(demo_url), [write_json(tmp_path / "long.json", inference_capture(5, label=long_label))])
    heights = {}
    for size in ((80, 24), (120, 40)):
        app = WorkbenchApp(demo_url)
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            await pilot.press("enter", "2")
            await settle(app, pilot)
            runs = app.query_one("#baseline-list")
            assert runs.virtual_size.height == runs.option_count  # one row per run, however long its label
            heights[size] = runs.size.height
            runs.focus()
            runs.highlighted = runs.option_count - 1  # the long one, scrolled into view
            await settle(app, pilot)
            shown = [row for row in screen_text(app) if "a very" in row]
            # The list row (elided in the middle, its end in view) and the detail line (cut at its end).
            assert len(shown) == 2 and all("…" in row for row in shown), shown
            assert shown[0].split("…")[1].split("│")[0].strip().endswith("label")  # the label's end in view
    assert heights[(120, 40)] > heights[(80, 24)] + 4


async def test_resize_below_the_minimum_and_back_leaves_nothing_stale(demo_url):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "4")
        await settle(app, pilot)
        before = screen_text(app)
        for small in ((59, 20), (50, 15)):
            await pilot.resize_terminal(*small)
            await settle(app, pilot)
            rows = screen_text(app)
            assert f"Too small ({small[0]}×{small[1]}): need 60×20" in rows[0]
            assert not "".join(rows[1:]).strip()
        await pilot.resize_terminal(60, 20)
        await settle(app, pilot)
        at_minimum = screen_text(app)
        assert "[4 Hypothesize]" in at_minimum[1] and at_minimum[-1].startswith(" q  Quit")
        await pilot.resize_terminal(80, 24)
        await settle(app, pilot)
        assert screen_text(app) == before
        assert text_of(app.query_one("#stage-bar")).count("[") == 1
