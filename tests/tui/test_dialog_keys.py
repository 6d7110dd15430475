"""One key table for every dialog (issue 49 item 3, docs/tui.md "Dialogs"): Enter in a form's
last field submits it, Escape cancels it; Enter chooses in a list dialog and closes a
dialog that only shows text (help, a value in full)."""

from __future__ import annotations

import threading

import pytest
from textual.widgets import Input

from tests.tui.fitting import visible
from tests.tui.pilot import DIALOGS, settle, text_of
from workbench.tui import services
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets import ChoiceScreen, FormScreen

# What a stranger types into a field the dialog leaves empty, by the field's name.
TYPED = {
    "question": "Is the new engine slower?",
    "guardrails": "",
    "statement": "Prefill is slower",
    "test": "an interleaved rerun",
    "evidence": "comparison=1",
    "note": "by the comparison",
    "reason": "a typo in the text",
    "why": "on purpose",
    "dimension": "hardware",
    "from": "H100",
    "to": "A100",
    "path": "bundle.json",
}


async def _open(app, pilot, pane, keys):
    await pilot.press(pane)
    await settle(app, pilot)
    await pilot.press(*keys)
    await settle(app, pilot)


async def _to_form(app, pilot):
    """Through a list dialog (the lens, the status) to the form it opens: Enter chooses."""
    while isinstance(app.screen, ChoiceScreen):
        await pilot.press("enter")
        await settle(app, pilot)


async def _back(app, pilot):
    while app.screen is not app.screen_stack[0]:
        await pilot.press("escape")
        await settle(app, pilot)


@pytest.mark.asyncio
async def test_enter_in_the_last_field_submits_every_form(demo_url, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        submitted = []
        for pane, keys in DIALOGS:
            await _open(app, pilot, pane, keys)
            await _to_form(app, pilot)
            form = app.screen
            if not isinstance(form, FormScreen):
                await _back(app, pilot)
                continue
            inputs = list(form.query(Input))
            for field in inputs:
                name = field.id.removeprefix("field-")
                if not field.value:
                    field.value = TYPED[name]
            inputs[-1].focus()
            await pilot.pause()
            await pilot.press("enter")
            await settle(app, pilot, rounds=4)
            assert app.screen is not form, f"{keys}: Enter in the last field left {form.title_text!r} open"
            submitted.append(form.title_text)
            await _back(app, pilot)  # a form that opens another (the lens) leaves it here
            if app.inv is None or app.inv.id != 1:
                app.open_investigation(1)
                await settle(app, pilot)
        assert len(submitted) >= 9, submitted


@pytest.mark.asyncio
async def test_escape_cancels_and_enter_closes_what_only_shows_text(demo_url):
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        for pane, keys in DIALOGS:
            await _open(app, pilot, pane, keys)
            dialog = app.screen
            assert dialog is not app.screen_stack[0], keys
            await pilot.press("escape")
            await settle(app, pilot)
            assert app.screen is not dialog, f"{keys}: escape left it open"
            await _back(app, pilot)
        for pane, keys in (("1", ("question_mark",)), ("2", ("v",))):
            await _open(app, pilot, pane, keys)
            shown = app.screen
            assert visible(app, "enter or escape closes")
            await pilot.press("enter")
            await settle(app, pilot)
            assert app.screen is not shown, keys


@pytest.mark.asyncio
async def test_tab_reaches_the_buttons_and_enter_presses_them(demo_url):
    """A dialog opened by a key (its later keys are the dialog's, tests/tui/test_dialog_input.py)
    still moves Tab through its fields and then OK and Cancel: Enter on Cancel cancels."""
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        await _open(app, pilot, "4", ("h",))
        dialog = app.screen
        order = []
        for _ in range(5):
            order.append(app.focused.id)
            await pilot.press("tab")
            await settle(app, pilot)
        assert order == ["field-statement", "field-test", "field-test_kind", "ok", "cancel"], order
        await pilot.press("shift+tab", "enter")  # back on Cancel: Enter cancels
        await settle(app, pilot)
        assert app.screen is not dialog and len(app.inv.hypotheses) == 1
        await _open(app, pilot, "4", ("h",))
        await pilot.press(*"Prefill is slower", "tab", *"a rerun", "tab", "tab")  # its kind: rerun, as given
        await settle(app, pilot)
        assert app.focused.id == "ok"
        await pilot.press("enter")  # on OK: submits
        await settle(app, pilot)
        assert len(app.inv.hypotheses) == 2 and app.inv.hypotheses[-1].statement == "Prefill is slower"


@pytest.mark.asyncio
async def test_enter_in_the_export_dialog_is_answered_at_once(demo_url, tmp_path, monkeypatch):
    """The export and its recheck take a while on a real store: Enter's effect is on the pane
    at once (the dialog gone, "Exporting …"), not only when the recheck is done."""
    release = threading.Event()
    real = services.export_bundle

    def slow_export(*args, **kwargs):
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(services, "export_bundle", slow_export)
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        await _open(app, pilot, "6", ("e",))
        app.screen.query_one("#field-path").value = str(tmp_path / "inv.bundle.json")
        await pilot.press("tab", "enter")  # the last field
        for _ in range(5):
            await pilot.pause()
        assert not isinstance(app.screen, FormScreen)
        assert "Exporting to" in text_of(app.query_one("#share-result"))  # while the export still runs
        release.set()
        await settle(app, pilot)
        assert "Recheck of the written file" in text_of(app.query_one("#share-result"))
