"""No Python literal reaches the screen: every pane, with each list focused in turn, and every
dialog, on the demo store at 80x24 (issue 30 item 3)."""

from __future__ import annotations

import re

import pytest

from tests.tui.pilot import screen_text, settle
from workbench.investigations.evidence_text import evidence_text, item_text
from workbench.tui.app import WorkbenchApp

LITERALS = re.compile(r"\bNone\b|\bnan\b|\bNaN\b|\bTrue\b|\bFalse\b|\[\]|\{\}|<[\w.]+ object at")


def literals_on(app, where: str) -> list[str]:
    return [f"{where} row {y}: {row.rstrip()!r}" for y, row in enumerate(screen_text(app)) if LITERALS.search(row)]


def test_evidence_text_leaves_unknown_out():
    assert item_text({"kind": "comparison", "id": 1, "metric": None}) == "comparison 1"
    assert item_text({"kind": "metric", "value": 1.23456, "unit": "ms"}) == "metric value=1.235 unit=ms"
    assert (
        evidence_text([{"kind": "comparison", "id": 1}, {"kind": "run", "id": None, "value": None}])
        == "comparison 1; run"
    )
    assert evidence_text([]) == "-"
    assert not LITERALS.search(evidence_text([{"kind": "x", "id": 2, "ok": True, "v": [], "w": {}}]))


@pytest.mark.slow
@pytest.mark.asyncio
async def test_no_python_literal_on_any_screen(demo_url):
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    found: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        found += literals_on(app, "picker")
        await pilot.press("enter")
        await settle(app, pilot)
        for key in "123456":
            await pilot.press(key)
            await settle(app, pilot)
            for turn in range(4):  # each focusable region of the pane shows its own detail line
                found += literals_on(app, f"pane {key} focus {turn}")
                await pilot.press("tab")
                await settle(app, pilot)
        for pane, dialog in (("2", "d"), ("2", "a"), ("4", "h"), ("5", "N"), ("6", "e"), ("1", "question_mark")):
            await pilot.press(pane)
            await settle(app, pilot)
            await pilot.press(dialog)
            await settle(app, pilot)
            found += literals_on(app, f"dialog {dialog}")
            await pilot.press("escape")
            await settle(app, pilot)
    assert not found, "\n".join(found)
