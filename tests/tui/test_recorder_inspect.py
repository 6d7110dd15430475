"""The Inspect pane at 80x24 shows a flight recorder's host side: the frames that gained
most samples in the incident, CPU and memory around the trigger, GC pauses."""

from __future__ import annotations

import pytest

from tests.recorder.synthetic import capture, write
from tests.tui.pilot import settle, text_of
from workbench.tui.app import WorkbenchApp

pytestmark = pytest.mark.asyncio


def _recorder_investigation(tmp_path) -> str:
    from store import open_store
    from workbench.ingest import import_files
    from workbench.inputs import ImportOptions
    from workbench.investigations import workflow as wf

    url = f"sqlite:///{tmp_path / 'rec.sqlite'}"
    store = open_store(url)
    paths = [
        write(tmp_path / "normal.json", capture(incident=False)),
        write(tmp_path / "slow.json", capture(incident=True, stall_function="wait_for_storage", gc_in_slow=False)),
    ]
    import_files(store, paths, ImportOptions())
    inv = wf.new_investigation(store, lens="training", question="Why was step 39 slow?", baseline=[1], candidate=[2])
    wf.store_comparison(store, inv.id, [1], [2], accepts={"window": "an incident against the normal window"})
    store.close()
    return url


async def test_inspect_pane_shows_the_moved_frames_at_80_columns(tmp_path):
    app = WorkbenchApp(_recorder_investigation(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#picker-list").highlighted = 0
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        lines = text_of(app.query_one("#inspect-report")).splitlines()
    host = lines[lines.index("host (flight recorder; observation, not cause)") :]
    assert any(line.strip().startswith("wait_for_storage (loop.py:20)") for line in host)
    assert any(line.startswith("  cpu slow spans") for line in host)
    assert all(len(line) <= 80 for line in lines)
