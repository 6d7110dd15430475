"""`wb demo` opens the TUI with the demo's values said to be synthetic in the title;
another store's title does not say it."""

from __future__ import annotations

import pytest

from captures import SYNTHETIC_NOTICE
from tests.tui.pilot import screen_text, settle
from workbench.tui.app import WorkbenchApp

pytestmark = pytest.mark.asyncio


@pytest.mark.parametrize("demo", [True, False])
async def test_title_says_the_demo_is_synthetic(demo_url, demo):
    app = WorkbenchApp(demo_url, demo=demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")  # open the first investigation: the title keeps the notice
        await settle(app, pilot)
        title = screen_text(app)[0]
        assert "investigation 1" in title
        assert (SYNTHETIC_NOTICE in title) is demo
