"""The plotext plots in the TUI at 80×24: the Compare sweep report draws its curve as a
line plot, the Inspect report ends with the phase over time and, for multi-rank
training runs, each rank's step time; every plot line fits the report region."""

from __future__ import annotations

import pytest

from tests.tui.pilot import screen_text, settle, text_of
from workbench.compare.plots import TUI_W
from workbench.tui.app import WorkbenchApp


def _plot_lines(report: str, start: str) -> list[str]:
    lines = report.split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    return lines[first:]


async def _scroll_to(app, pilot, scroll_id: str, report: str, needle: str) -> list[str]:
    """Scroll the report region so that the line starting with ``needle`` is its top row; the screen then."""
    row = next(i for i, line in enumerate(report.split("\n")) if line.startswith(needle))
    app.query_one(f"#{scroll_id}").scroll_to(y=row, animate=False)
    await settle(app, pilot)
    return screen_text(app)


@pytest.mark.asyncio
async def test_sweep_report_draws_the_curve(sweep_url):
    app = WorkbenchApp(sweep_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_investigation(1)
        await settle(app, pilot)
        await pilot.press("escape", "2", "w")
        await settle(app, pilot)
        await pilot.press("enter")  # vllm
        await settle(app, pilot)
        await pilot.press("down", "enter")  # vllm+v0_engine
        await settle(app, pilot)
        report = text_of(app.query_one("#compare-report"))
        curve = _plot_lines(report, "ttft_p95 by achieved req/s")
        curve = curve[: next(i for i, line in enumerate(curve) if line.startswith("Level "))]
        assert any("┌" in line for line in curve) and any("└" in line for line in curve)
        assert "o baseline vllm" in "\n".join(curve) and "achieved req/s" in "\n".join(curve)
        assert max(len(line) for line in curve) <= TUI_W
        screen = await _scroll_to(app, pilot, report_scroll(app, "#compare-report"), report, "ttft_p95 by achieved")
        assert any("┌" in line for line in screen)  # the plot is on screen at 80×24, not only in the text
        assert all("\x1b" not in line for line in screen)


def report_scroll(app, report_id: str) -> str:
    return app.query_one(report_id).parent.id


@pytest.mark.asyncio
async def test_inspect_report_ends_with_the_plots(demo_url):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_investigation(2)  # training: eight ranks a run
        await settle(app, pilot)
        await pilot.press("escape", "3")
        await settle(app, pilot)
        report = text_of(app.query_one("#inspect-report"))
        drawn = _plot_lines(report, "Plots")
        text = "\n".join(drawn)
        assert "step_time over step" in text and "Step time per rank" in text
        assert "o baseline (5 runs); x candidate (5 runs)" in text and "o baseline (8 ranks)" in text
        assert sum("┌" in line for line in drawn) == 2
        assert max(len(line) for line in drawn) <= TUI_W
        screen = await _scroll_to(app, pilot, "inspect-scroll", report, "Step time per rank")
        assert any("┌" in line for line in screen) and any("Step time per rank" in line for line in screen)
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_investigation(1)  # inference: one process, no ranks
        await settle(app, pilot)
        await pilot.press("escape", "3")
        await settle(app, pilot)
        text = "\n".join(_plot_lines(text_of(app.query_one("#inspect-report")), "Plots"))
        assert "ttft over request order" in text and "Step time per rank" not in text
