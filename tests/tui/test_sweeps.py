"""The load sweep view in Compare (w): two sweeps' runs selected together and compared
level by level at matched load, as ``wb compare SWEEP --vs SWEEP`` prints it."""

from __future__ import annotations

import pytest

from tests.tui.pilot import screen_text, settle, text_of
from workbench.tui import services
from workbench.tui.app import WorkbenchApp
from workbench.usecases.transport import Local


async def _open(app, pilot, inv_id: int = 1) -> None:
    await settle(app, pilot)
    app.open_investigation(inv_id)
    await settle(app, pilot)
    await pilot.press("escape", "2")  # close the picker, show Compare
    await settle(app, pilot)


@pytest.mark.asyncio
async def test_two_sweeps_selected_together_and_compared_by_level(sweep_url):
    from store import open_store
    from workbench.compare.sweep import compare_sweeps
    from workbench.compare.plots import TUI_H, TUI_W, sweep_curve
    from workbench.compare.sweep_render import render_sweep_comparison

    store = open_store(sweep_url)
    found = {s.label: s for s in services.sweeps(Local(store))}
    assert sorted(found) == ["vllm", "vllm+batch_size", "vllm+v0_engine"]
    assert all(len(s.runs) == 7 and s.id.startswith("sw-") for s in found.values())
    app = WorkbenchApp(sweep_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(app, pilot)
        await pilot.press("w")
        await settle(app, pilot)
        assert "Baseline sweep" in "\n".join(screen_text(app))
        await pilot.press("enter")  # vllm
        await settle(app, pilot)
        await pilot.press("down", "enter")  # the candidates leave vllm out: vllm+v0_engine is second
        await settle(app, pilot)
        state = app.state
        assert state.baseline == set(found["vllm"].runs) and state.candidate == set(found["vllm+v0_engine"].runs)
        assert app.query_one("#baseline-list").selected == state.baseline  # shown selected, one run a level
        banner = text_of(app.query_one("#compare-banner"))
        assert "SWEEPS" in banner and "vllm vs vllm+v0_engine" in banner
        report = text_of(app.query_one("#compare-report"))
    # The CLI's own report on the same runs (with the investigation's declared change).
    doc = compare_sweeps(
        store.load_runs(list(found["vllm"].runs)),
        store.load_runs(list(found["vllm+v0_engine"].runs)),
        changes={k: tuple(v) for k, v in state.changes.items()},
        accepts=state.accepts,
    )
    assert report.rstrip("\n") == render_sweep_comparison(
        doc, sweep_curve(doc, width=TUI_W, height=TUI_H)
    )  # the curve as a line plot
    assert "Curve" in report and "Level 1 req/s vs 1 req/s" in report and "Saturation" in report
    assert max(len(line) for line in report.splitlines()) <= 80


@pytest.mark.asyncio
async def test_sweeps_need_an_inference_investigation_and_two_sweeps(sweep_url, demo_url):
    app = WorkbenchApp(sweep_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(app, pilot, 2)  # training
        await pilot.press("w")
        await settle(app, pilot)
        assert app.screen is app.screen_stack[0]  # no dialog
        assert "Load sweeps are inference runs" in text_of(app.query_one("#run-detail"))
    app = WorkbenchApp(demo_url)  # no sweeps in the demo store
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(app, pilot, 1)
        await pilot.press("w")
        await settle(app, pilot)
        assert "needs two load sweeps" in text_of(app.query_one("#run-detail"))
        assert app.state.banner != "sweep"
