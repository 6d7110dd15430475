"""Share: `r` writes the report of the bundle beside it (page and ticket summary) and says
where in the pane; a bundle that does not verify gets no report, and the pane says why."""

from __future__ import annotations

import json

import pytest

from tests.tui.pilot import settle, text_of
from workbench.tui.app import WorkbenchApp

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]


async def _open_share(app, pilot) -> None:
    await settle(app, pilot)
    app.screen.query_one("#picker-list").highlighted = 0
    await pilot.press("enter")
    await settle(app, pilot)
    await pilot.press("6")
    await settle(app, pilot)


async def test_r_writes_the_report_beside_the_bundle(demo_url, tmp_path):
    bundle = tmp_path / "inv1.bundle.json"
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(100, 30)) as pilot:
        await _open_share(app, pilot)
        await pilot.press("e")
        await settle(app, pilot)
        app.screen.query_one("#field-path").value = str(bundle)
        await pilot.click("#ok")
        await settle(app, pilot)
        await pilot.press("r")
        await pilot.pause()
        assert app.screen.query_one("#field-path").value == str(bundle)  # the bundle just exported
        await pilot.click("#ok")
        await settle(app, pilot)
        shown = " ".join(text_of(app.query_one("#share-result")).split())
        page, summary = tmp_path / "inv1.report.html", tmp_path / "inv1.report.md"
        assert "Report written" in shown and str(page) in shown and str(summary) in shown, shown
        assert "VERIFIED: every digest matches" in shown
        assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
        checksum = json.loads(bundle.read_text(encoding="utf-8"))["checksum"]["value"]
        assert checksum in summary.read_text(encoding="utf-8")

        doc = json.loads(bundle.read_text(encoding="utf-8"))
        doc["investigation"]["question"] = "edited after export"
        forged = tmp_path / "forged.bundle.json"
        forged.write_text(json.dumps(doc), encoding="utf-8")
        await pilot.press("r")
        await pilot.pause()
        app.screen.query_one("#field-path").value = str(forged)
        await pilot.click("#ok")
        await settle(app, pilot)
        shown = " ".join(text_of(app.query_one("#share-result")).split())
        assert "No report written" in shown and "does not verify" in shown, shown
        assert not (tmp_path / "forged.report.html").exists() and not (tmp_path / "forged.report.md").exists()
