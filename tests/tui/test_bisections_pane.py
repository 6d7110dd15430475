"""Verify lists bisections after the rerun plans; highlighting one shows its report."""

from __future__ import annotations

import pytest

from tests.tui.pilot import settle, text_of
from workbench.tui.app import WorkbenchApp

pytestmark = pytest.mark.asyncio


def _stored_bisection(url: str) -> None:
    from store import open_store
    from store.bisect import Bisection
    from workbench.bisect.bisection import Spec

    c = lambda rev, status, **kw: {"rev": rev * 40, "title": f"change {rev}", "status": status, **kw}  # noqa: E731
    state = {
        "candidates": [
            c("a", "good"),
            c("b", "untested"),
            c("c", "bad", ratio=1.05, ci95=[1.03, 1.07], against="a" * 40),
        ],
        "lo": 0,
        "hi": 2,
        "reference": 0,
        "endpoint": {"ratio": 1.05, "ci95": [1.03, 1.07], "step": 0},
        "splits": [],
        "steps": [
            {
                "step": 1,
                "endpoint": True,
                "reference": 0,
                "candidate": 2,
                "rev": "c" * 40,
                "against": "a" * 40,
                "verdict": "REGRESSION",
                "ratio": 1.05,
                "ci95": [1.03, 1.07],
                "rounds_used": 5,
            }
        ],
        "current": None,
        "result": None,
    }
    with open_store(url).session() as s:
        spec = Spec(name="engine-v082-v083", bench=["sh", "bench.sh"], workdir="/nonexistent").to_json()
        s.add(Bisection(name="engine-v082-v083", status="bisecting", spec=spec, state=state))


async def test_verify_lists_a_bisection_and_shows_its_range_and_steps(demo_url):
    _stored_bisection(demo_url)
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("5")
        await settle(app, pilot)
        plans = app.query_one("#plans")
        last = plans.option_count - 1
        assert "bisect engine-v082-v083  [bisecting, 1 steps, 1 open]" in str(plans.get_option_at_index(last).prompt)
        plans.highlighted = last
        await settle(app, pilot)
        detail = text_of(app.query_one("#plan-detail"))
        assert "open range: aaaaaaaaaaaa (last good) .. cccccccccccc (first bad)" in detail, detail
        assert "step 1: cccccccccccc vs aaaaaaaaaaaa: REGRESSION θ 1.050 [1.030, 1.070]" in detail
        assert "wb bisect resume engine-v082-v083" in detail
        await pilot.press("r")  # not a plan: nothing runs
        await settle(app, pilot)
        assert not app.query_one("#stage-verify").running
