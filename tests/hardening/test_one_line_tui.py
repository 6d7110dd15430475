"""Issue 28 item 9: the TUI opens an imported investigation (bundle refs like ``run/1``)."""

from __future__ import annotations

import pytest

from tests.hardening.conftest import REPO
from tests.hardening.test_refusals import wb
from tests.tui.pilot import settle

BUNDLE = REPO / "docs" / "examples" / "inference-demo.bundle.json"


@pytest.mark.asyncio
async def test_the_tui_opens_an_imported_investigation(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    from workbench.tui.app import WorkbenchApp

    store = f"sqlite:///{tmp_path / 'wb.sqlite'}"
    rc, _out, err = wb(capsys, "--store", store, "bundle", "import", str(BUNDLE))
    assert rc == 0, err
    app = WorkbenchApp(store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.inv is not None and app.inv.imported
        assert app.inv.id in app.states  # its state was made (int('run/1') failed here)
        for key in ("1", "2", "3", "4"):
            await pilot.press(key)
            await settle(app, pilot)
        assert app.return_code is None  # no crash
