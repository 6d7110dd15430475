"""Dialogs filled from the refusal, what a key did said on the status line, and Frame showing
what Compare uses (issue 49 items 1, 4 and 5), on a user's own refused training pair (the HTA
trace-diff traces: an A100 and a V100)."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from tests.tui.pilot import settle, text_of
from workbench.tui import offers
from workbench.tui.app import WorkbenchApp


async def keys(app, pilot, *pressed: str) -> None:
    await pilot.press(*pressed)
    await settle(app, pilot)


def fields(app) -> dict[str, Input]:
    return {field.id.removeprefix("field-"): field for field in app.screen.query(Input)}


async def refused_on_hardware(app, pilot) -> None:
    """Frame a training investigation, compare the pair, declare what the files do not say (m):
    refused on the hardware now."""
    await settle(app, pilot)
    await keys(app, pilot, "n")
    await keys(app, pilot, "down", "enter")
    await keys(app, pilot, *"Why is the test trace slower?", "enter", "enter")
    await keys(app, pilot, "2")
    await keys(app, pilot, "space", "tab", "down", "space")
    await keys(app, pilot, "c")
    await keys(app, pilot, "m")
    await pilot.press(*"llama-7b", "tab", *"pretrain", "tab", *"data parallel", "tab", *"64", "tab", *"one script")
    await keys(app, pilot, "enter")
    assert "Hardware (hardware) must match but differs" in text_of(app.query_one("#compare-banner"))


def row(app, name):
    return next(r for r in app.state.comparison.comparison().comparability.rows if r.name == name)


@pytest.mark.asyncio
async def test_change_and_accept_are_filled_from_the_refusal(own_url):
    app = WorkbenchApp(own_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await refused_on_hardware(app, pilot)
        hardware = row(app, "hardware")
        toasts = len(app._notifications)

        # d: the refused dimension, both values in full (the report shows them cut at 18 cells)
        await keys(app, pilot, "d")
        offered = fields(app)
        assert offered["dimension"].value == "hardware"
        assert offered["from"].value == hardware.baseline.value and len(hardware.baseline.value) > 18
        assert offered["to"].value == hardware.candidate.value
        assert offered["dimension"].placeholder == offers.words("training").change[0]  # the lens's own example
        await keys(app, pilot, "enter", "enter", "enter")  # the offered values only
        assert app.state.changes == {"hardware": [hardware.baseline.value, hardware.candidate.value]}
        assert row(app, "hardware").state == "changed"  # compared again with the change
        # what d did is said on the status line under the lists, never in a toast over the report
        assert "✓ intended change: hardware" in text_of(app.query_one("#run-detail"))
        assert len(app._notifications) == toasts

        # a: what still refuses, never the dimension just declared as the change
        blocking = [r.name for r in app.state.comparison.comparison().comparability.rows if r.blocks]
        await keys(app, pilot, "a")
        offered = fields(app)
        assert offered["dimension"].value == ", ".join(blocking) == "rank_count"
        await pilot.press(*"one V100 node on purpose")
        await keys(app, pilot, "enter")
        assert "COMPARABLE" in text_of(app.query_one("#compare-banner"))
        assert "✓ accepted rank_count" in text_of(app.query_one("#run-detail"))
        assert len(app._notifications) == toasts

        # Frame: the change and the acceptance in force, from the record Compare uses
        await keys(app, pilot, "1")
        frame = text_of(app.query_one("#frame-body"))
        assert f"intended change  hardware: {hardware.baseline.value} -> {hardware.candidate.value}" in frame
        assert "accepted  rank_count (one V100 node on purpose)" in frame

    # after a restart: Compare restores them from the latest comparison, and Frame says the same
    again = WorkbenchApp(own_url)
    async with again.run_test(size=(80, 24)) as pilot:
        await settle(again, pilot)
        await keys(again, pilot, "enter")
        frame = text_of(again.query_one("#frame-body"))
        assert f"intended change  hardware: {hardware.baseline.value} -> {hardware.candidate.value}" in frame, frame
        assert "accepted  rank_count (one V100 node on purpose)" in frame
        assert again.state.changes == {"hardware": [hardware.baseline.value, hardware.candidate.value]}


@pytest.mark.asyncio
async def test_d_before_a_comparison_keeps_it_for_the_next_and_says_so(own_url):
    app = WorkbenchApp(own_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await keys(app, pilot, "n")
        await keys(app, pilot, "down", "enter")
        await keys(app, pilot, *"Why?", "enter", "enter")
        await keys(app, pilot, "2", "d")
        offered = fields(app)
        assert [offered[n].value for n in ("dimension", "from", "to")] == ["", "", ""]  # no refusal: nothing to offer
        assert [offered[n].placeholder for n in ("dimension", "from", "to")] == list(offers.words("training").change)
        await pilot.press(*"framework", "tab", *"torch 2.3", "tab", *"torch 2.4")
        await keys(app, pilot, "enter")
        assert app.state.changes == {"framework": ["torch 2.3", "torch 2.4"]} and app.state.comparison is None
        assert "✓ intended change: framework (the next compare, c, uses it)" in text_of(app.query_one("#run-detail"))
        await keys(app, pilot, "1")
        assert "intended change  framework: torch 2.3 -> torch 2.4" in text_of(app.query_one("#frame-body"))


@pytest.mark.asyncio
async def test_placeholders_are_the_lenss_own_words(demo_url):
    app = WorkbenchApp(demo_url)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await keys(app, pilot, "enter")  # investigation 1: inference
        await keys(app, pilot, "4", "h")
        placeholders = [f.placeholder for f in fields(app).values()][:2]  # then the test's kind, "rerun" given
        assert placeholders == [offers.words("inference").hypothesis, offers.words("inference").test]
        assert "all-reduce" not in " ".join(placeholders)  # a training example, in an inference investigation
        await keys(app, pilot, "escape")
        for lens, down in (("inference", 0), ("training", 1)):
            await keys(app, pilot, "1", "n", *["down"] * down, "enter")
            assert fields(app)["guardrails"].placeholder == f"e.g. {offers.words(lens).guardrail}"
            assert fields(app)["question"].placeholder == offers.words(lens).question
            await keys(app, pilot, "escape")
