"""The workbench against a server (``wb --server URL``, or ``WB_SERVER``): the picker lists the
server's investigations and every pane draws what it draws on the store itself, through the same
use cases; a slow server never blocks the screen ("waiting for the server" in the title bar while
it answers), and a refused token is one line in the title bar, not a crash. The picker and a pane
against the server are SVG snapshots beside the others.

Regenerate the snapshots with ``pytest tests/tui/test_served.py --snapshot-update``.
"""

from __future__ import annotations

from importlib.metadata import version

import pytest

from tests.server.conftest import InProcess
from tests.tui.pilot import screen_text, settle
from workbench.tui.app import WorkbenchApp

SNAPSHOT_TEXTUAL = "8.2.8"
SHOWN_AS = "http://wb.internal:8321"  # the title bar's name for the server (its port changes each run)


@pytest.fixture
def served(demo_url, monkeypatch):
    server = InProcess(demo_url)
    monkeypatch.setenv("WB_TOKEN", server.token("laptop", "upload"))
    yield server
    server.stop()


def _against(server: InProcess) -> WorkbenchApp:
    app = WorkbenchApp(server_url=server.url)
    app.server_label = SHOWN_AS
    app.animation_level = "none"
    return app


async def _walk(app: WorkbenchApp) -> dict[str, list[str]]:
    """Each stage's screen below the title bar, investigation 1 open."""
    screens = {}
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(app, pilot)
        screens["picker"] = screen_text(app)[1:]
        await pilot.press("enter")  # investigation 1 from the picker
        await settle(app, pilot)
        for key in ("1", "2", "3", "4", "5", "6"):
            await pilot.press(key)
            await settle(app, pilot)
            screens[key] = screen_text(app)[1:]
    return screens


@pytest.mark.asyncio
@pytest.mark.slow
async def test_every_pane_draws_what_it_draws_on_the_store(served, demo_url):
    local = await _walk(WorkbenchApp(demo_url))
    remote = await _walk(_against(served))
    assert remote.keys() == local.keys()
    for stage in local:
        assert remote[stage] == local[stage], stage
    assert any("investigation" in line for line in remote["picker"])


@pytest.mark.asyncio
async def test_a_slow_server_shows_a_waiting_line_and_never_blocks(demo_url, monkeypatch):
    server = InProcess(demo_url, delay_s=1.5)
    monkeypatch.setenv("WB_TOKEN", server.token("laptop", "read"))
    try:
        app = _against(server)
        async with app.run_test(size=(100, 32)) as pilot:
            seen = []
            for _ in range(200):  # the screen keeps answering while the server takes its time
                await pilot.pause(0.05)
                seen.append(screen_text(app)[0])
                await pilot.press("question_mark")  # help opens and closes: keys are not held up
                await pilot.press("escape")
                if "waiting for the server (listing investigations)" in seen[-1]:
                    break
            assert "waiting for the server (listing investigations)" in seen[-1], seen[-1]
            await settle(app, pilot)
            assert "waiting for the server" not in screen_text(app)[0]
    finally:
        server.stop()


@pytest.mark.asyncio
async def test_a_refused_token_is_one_line_in_the_title_bar(served, monkeypatch):
    monkeypatch.setenv("WB_TOKEN", "wb_not-a-token")
    app = _against(served)
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(app, pilot)
        title = screen_text(app)[0]
        assert "server refused (401): unknown or revoked token" in title, title
        assert app.is_running  # not a crash


@pytest.mark.skipif(version("textual") != SNAPSHOT_TEXTUAL, reason=f"snapshots made with textual {SNAPSHOT_TEXTUAL}")
@pytest.mark.parametrize("keys", [(), ("enter", "2")], ids=["picker", "compare"])
def test_against_a_server_snapshot(snap_compare, served, keys):
    app = _against(served)

    async def run_before(pilot):
        await settle(app, pilot)
        for key in keys:
            await pilot.press(key)
            await settle(app, pilot)

    assert snap_compare(app, run_before=run_before, terminal_size=(80, 24))


def test_wb_with_a_server_and_no_command_opens_the_workbench_on_it(monkeypatch):
    from tests.server.conftest import wb_here

    opened = {}
    monkeypatch.setattr("workbench.cli.launch_tui", lambda **kw: opened.update(kw))
    code, _out, err = wb_here("--server", "http://127.0.0.1:9")
    assert code == 0 and opened["server_url"] == "http://127.0.0.1:9", err
    monkeypatch.setenv("WB_SERVER", "http://127.0.0.1:8")
    opened.clear()
    assert wb_here()[0] == 0 and opened["server_url"] == "http://127.0.0.1:8"
