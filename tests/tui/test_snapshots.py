"""SVG snapshots at 80x24 on the demo store: every stage pane, the picker and every dialog,
and the panes again with NO_COLOR.

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
pytestmark = pytest.mark.skipif(
    version("textual") != SNAPSHOT_TEXTUAL, reason=f"snapshots were made with textual {SNAPSHOT_TEXTUAL}"
)

# name -> (pane key, keys that open the dialog)
DIALOGS = {
    "new-lens": ("1", ("n",)),
    "new-investigation": ("1", ("n", "enter")),
    "declare": ("2", ("d",)),
    "accept": ("2", ("a",)),
    "hypothesis": ("4", ("h",)),
    "status": ("4", ("tab", "s", "enter")),
    "retract": ("4", ("x",)),
    "custom-plan": ("5", ("N",)),
    "export": ("6", ("e",)),
    "help": ("1", ("question_mark",)),
}


def _still(app: WorkbenchApp) -> WorkbenchApp:
    """No animation may be caught midway by a snapshot."""
    app.animation_level = "none"
    return app


def _opened(app: WorkbenchApp, *keys: str):
    async def run_before(pilot):
        await settle(app, pilot)
        await pilot.press("enter")  # investigation 1 (inference) from the picker
        await settle(app, pilot)
        for key in keys:
            await pilot.press(key)
            await settle(app, pilot)

    return run_before


@pytest.mark.parametrize("key", ["1", "2", "3", "4", "5", "6"])
def test_stage_pane(snap_compare, demo_url, key):
    app = _still(WorkbenchApp(demo_url))
    assert snap_compare(app, run_before=_opened(app, key), terminal_size=(80, 24))


@pytest.mark.parametrize("key", ["1", "2", "3", "4", "5", "6"])
def test_stage_pane_no_color(snap_compare, demo_url, key, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = _still(WorkbenchApp(demo_url))
    assert snap_compare(app, run_before=_opened(app, key), terminal_size=(80, 24))


@pytest.mark.parametrize("name", sorted(DIALOGS))
def test_dialog(snap_compare, demo_url, name, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", "/home/user/.local/share")  # the export dialog proposes a path there
    pane, keys = DIALOGS[name]
    app = _still(WorkbenchApp(demo_url))
    assert snap_compare(app, run_before=_opened(app, pane, *keys), terminal_size=(80, 24))


@pytest.mark.parametrize("name", sorted(DIALOGS))
def test_dialog_no_color(snap_compare, demo_url, name, monkeypatch):
    """Every dialog without colour, a form's focus on OK: drawn in reverse, Cancel not
    (tests/tui/test_focus.py checks the attributes; here is the picture)."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("XDG_DATA_HOME", "/home/user/.local/share")
    pane, keys = DIALOGS[name]
    app = _still(WorkbenchApp(demo_url))

    async def run_before(pilot):
        await _opened(app, pane, *keys)(pilot)
        for ok in app.screen.query("#ok"):
            ok.focus()
        await settle(app, pilot)

    assert snap_compare(app, run_before=run_before, terminal_size=(80, 24))


def test_picker(snap_compare, demo_url):
    app = _still(WorkbenchApp(demo_url))

    async def wait(pilot):
        await settle(app, pilot)

    assert snap_compare(app, run_before=wait, terminal_size=(80, 24))


def test_sweep_pick_dialog(snap_compare, sweep_url):
    app = _still(WorkbenchApp(sweep_url))
    assert snap_compare(app, run_before=_opened(app, "2", "w"), terminal_size=(80, 24))


def test_sweep_view(snap_compare, sweep_url):
    """Two load sweeps compared level by level, the report scrolled to its curve."""
    app = _still(WorkbenchApp(sweep_url))

    async def run_before(pilot):
        await _opened(app, "2", "w", "enter", "down", "enter")(pilot)
        report = app.query_one("#compare-report")
        line = next(i for i, text in enumerate(str(report.render()).splitlines()) if text == "Curve")
        app.query_one("#compare-scroll").scroll_to(y=line, animate=False)
        await settle(app, pilot)

    assert snap_compare(app, run_before=run_before, terminal_size=(80, 24))
