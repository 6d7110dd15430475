"""Charts where people look: Inspect's phase chart for each lens (the fleet view too) and the
sparklines come from ``workbench.compare.charts`` (the sweep curve from ``compare/plots.py``)
and fit 80 columns in the pane."""

from __future__ import annotations

import pytest

from tests.tui.pilot import settle, text_of
from workbench.compare import charts, render
from workbench.tui.app import WorkbenchApp


def test_one_chart_module():
    assert render.paired_bars is charts.paired_bars and render.distribution_chart is charts.distribution_chart
    assert not hasattr(charts, "xy_chart")  # the sweep curve is plotext's (compare/plots.py), drawn at render time


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "inv_id, lens, chart",
    [
        (1, "inference", "B baseline #, C candidate =; scale 0 to"),
        (2, "training", "B baseline #, C candidate =; scale 0 to"),
        (3, "fleet", "Service attainment B |"),
    ],
)
async def test_inspect_chart_fits_80_columns_for_each_lens(demo_url, inv_id, lens, chart):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_investigation(inv_id)
        await settle(app, pilot)
        await pilot.press("escape", "3")
        await settle(app, pilot)
        assert app.inv.lens == lens
        report = text_of(app.query_one("#inspect-report"))
    lines = report.splitlines()
    assert any(chart in line for line in lines)
    assert "p5..p95, [==] p25..p75, M median" in report  # the distribution chart
    assert max(len(line) for line in lines) <= 80
