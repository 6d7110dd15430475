"""SVG snapshots of every stage pane at 80x24 on the demo store.

Regenerate after an intended change with ``pytest tests/tui/test_snapshots.py --snapshot-update``
and review ``snapshot_report.html``. Snapshots depend on the Textual version; they were made
with the versions pinned in ``.ci/constraints.txt`` and are skipped under any other.
"""

from __future__ import annotations

from importlib.metadata import version

import pytest

from tests.tui.pilot import settle
from workbench.tui.app import WorkbenchApp

SNAPSHOT_TEXTUAL = "8.2.8"
pytestmark = pytest.mark.skipif(version("textual") != SNAPSHOT_TEXTUAL, reason=f"snapshots were made with textual {SNAPSHOT_TEXTUAL}")


def _still(app: WorkbenchApp) -> WorkbenchApp:
    """The tab underline animates on a stage switch; a snapshot must not catch it midway."""
    app.animation_level = "none"
    return app


@pytest.mark.parametrize("key", ["1", "2", "3", "4", "5", "6"])
def test_stage_pane(snap_compare, demo_url, key):
    app = _still(WorkbenchApp(demo_url))

    async def open_stage(pilot):
        await settle(app, pilot)
        await pilot.press("enter")  # investigation 1 (inference) from the picker
        await settle(app, pilot)
        await pilot.press(key)
        await settle(app, pilot)

    assert snap_compare(app, run_before=open_stage, terminal_size=(80, 24))


def test_picker(snap_compare, demo_url):
    app = _still(WorkbenchApp(demo_url))

    async def wait(pilot):
        await settle(app, pilot)

    assert snap_compare(app, run_before=wait, terminal_size=(80, 24))
