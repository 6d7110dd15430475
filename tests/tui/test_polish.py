"""What a tester found at 80×24: the way out of a refusal, the evidence dialog, the lens's
own placeholder, text that wraps at 80 columns, and an empty Compare pane that says why."""

from __future__ import annotations

import pytest

from tests.tui.pilot import screen_text, settle, text_of
from workbench.tui.app import WorkbenchApp


def _unset_model(demo_url: str) -> tuple[list[int], str]:
    """Make the demo's inference candidates lose their model: the next compare is refused
    for an unknown must-match dimension, which `wb declare` resolves. Returns the
    candidates and the declare line `wb compare` prints for it."""
    from store import open_store
    from workbench.compare import compare
    from workbench.compare.way_out import way_out
    from workbench.declare import declare_dimensions
    from workbench.investigations import workflow as wf

    store = open_store(demo_url)
    inv = wf.show_investigation(store, 1)
    base, cand = inv["baseline_runs"], inv["candidate_runs"]
    declare_dimensions(store, cand, {}, ["model"], why="a run imported without --dim")
    records = [*store.load_runs(base), *store.load_runs(cand)]
    result = compare(store.load_runs(base), store.load_runs(cand), lens="inference")
    ways = way_out(result, base, cand, ["wb", "compare"], records)
    assert ways is not None and ways["declare"]
    store.close()
    return cand, ways["declare"][0]


@pytest.mark.asyncio
async def test_a_refusal_shows_the_declare_lines_fresh_and_stored(demo_url):
    cand, declare_line = _unset_model(demo_url)
    assert declare_line.startswith(f"wb declare {' '.join(map(str, cand))} 'model=")
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "2")
        await settle(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        banner = text_of(app.query_one("#compare-banner"))
        report = text_of(app.query_one("#compare-report"))
        assert "REFUSED" in banner and "wb declare" in banner
        assert declare_line in report.splitlines()[-6:] or f"    {declare_line}" in report.splitlines()
        assert "--accept model --why" in report and "d declares the change under test" in report
        # sentences wrap at 80 columns; only the commands (to be copied whole) may be longer
        assert all(len(line) <= 80 for line in report.split("To go on", 1)[1].splitlines() if not line.startswith("    "))
        await pilot.press("a")
        await settle(app, pilot)
        assert app.screen.query_one("#field-dimension").value == "model"
        await pilot.press("escape")

    app = WorkbenchApp(demo_url)  # reopened: the stored comparison shows the same way out
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "2")
        await settle(app, pilot)
        assert f"    {declare_line}" in text_of(app.query_one("#compare-report")).splitlines()


@pytest.mark.asyncio
async def test_accepting_several_dimensions_records_each(demo_url):
    _unset_model(demo_url)
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "2")
        await settle(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        assert app.screen.query_one("#field-dimension").value == "model"
        app.screen.query_one("#field-dimension").value = "model, hardware"
        app.screen.query_one("#field-why").value = "same job script"
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.state.accepts == {"model": "same job script", "hardware": "same job script"}
        accepted = [a["dimension"] for a in app.state.comparison["result"]["accepted"]]
        assert "model" in accepted and "REFUSED" not in text_of(app.query_one("#compare-banner"))


@pytest.mark.asyncio
async def test_status_dialog_keeps_the_typed_evidence_and_names_every_kind(demo_url):
    from workbench.tui.widgets import FormScreen

    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "4")
        await settle(app, pilot)
        app.query_one("#hypotheses").focus()
        await pilot.press("s")
        await settle(app, pilot)
        await pilot.press("enter")  # supported
        await settle(app, pilot)
        for ch in "run=3":
            await pilot.press(ch)
        await pilot.press("enter", "enter")  # to the note, then submit
        await settle(app, pilot)
        assert isinstance(app.screen, FormScreen), "the dialog stays open on a wrong form"
        assert app.screen.query_one("#field-evidence").value == "run=3"
        error = text_of(app.screen.query_one("#form-error"))
        assert "'run' cannot decide a hypothesis" in error and "rerun_plan=" in error
        assert any("rerun_plan=" in row for row in screen_text(app)), "the reason is on screen at 80×24"
        app.screen.query_one("#field-evidence").value = "comparison=1"
        await pilot.press("enter")
        await settle(app, pilot)
        assert not isinstance(app.screen, FormScreen)
        hyp = app.inv["hypotheses"][0]
    assert hyp["status"] == "supported" and hyp["history"][-1]["evidence"] == [{"kind": "comparison", "id": 1}]


@pytest.mark.asyncio
@pytest.mark.parametrize("lens,words", [("inference", "TTFT"), ("training", "training step"), ("fleet", "queue waits")])
async def test_new_investigation_question_placeholder_follows_the_lens(demo_url, lens, words):
    from workbench.tui.stages.frame import LENSES

    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("n")  # from the start-up picker
        await settle(app, pilot)
        for _ in range([key for key, _label in LENSES].index(lens)):
            await pilot.press("down")
        await pilot.press("enter")
        await settle(app, pilot)
        placeholder = app.screen.query_one("#field-question").placeholder
    assert words in placeholder
    others = {"inference": "TTFT", "training": "step", "fleet": "queue"}
    assert not any(w in placeholder for name, w in others.items() if name != lens)
