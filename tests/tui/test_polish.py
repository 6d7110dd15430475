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
    inv = wf.investigation_view(store, 1).to_json()
    base, cand = inv["baseline_runs"], inv["candidate_runs"]
    declare_dimensions(store, cand, {}, ["model"], why="a run imported without --dim")
    records = [*store.load_runs(base), *store.load_runs(cand)]
    result = compare(store.load_runs(base), store.load_runs(cand), lens="inference")
    ways = way_out(result, base, cand, ["wb", "compare"], records)
    assert ways is not None and ways.declare
    store.close()
    return cand, ways.declare[0]


def _unwrapped(report: str) -> list[str]:
    """The report's lines with shell continuations (`` \\`` and a deeper indent) joined."""
    import re

    return re.sub(r" \\\n +", " ", report).splitlines()


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
        assert f"    {declare_line}" in _unwrapped(report)
        assert all(len(line) <= 80 for line in report.split("To go on", 1)[1].splitlines())
        assert "--accept model --why" in report and "d declares the change under test" in report
        await pilot.press("a")
        await settle(app, pilot)
        assert app.screen.query_one("#field-dimension").value == "model"
        await pilot.press("escape")

    app = WorkbenchApp(demo_url)  # reopened: the stored comparison shows the same way out
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "2")
        await settle(app, pilot)
        assert f"    {declare_line}" in _unwrapped(text_of(app.query_one("#compare-report")))


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
        accepted = [a.dimension for a in app.state.comparison.comparison().accepted]
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
        # The comparison that suggested the hypothesis is not its test (a rerun): the store refuses
        # it (the workflow's one line is shown as the worker's error) and nothing is written.
        app.screen.query_one("#field-evidence").value = "comparison=1"
        await pilot.press("enter")
        await settle(app, pilot)
        assert not isinstance(app.screen, FormScreen)
        said = " ".join(str(n.message) for n in app._notifications)
        hyp = app.inv.hypotheses[0]
    assert hyp.status == "open" and "its test is a rerun" in said


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


def _rows_after(rows: list[str], start: str) -> list[str]:
    i = next(i for i, row in enumerate(rows) if start in row)
    return rows[i:]


@pytest.mark.asyncio
async def test_share_intro_wraps_at_the_pane_width_not_mid_sentence(demo_url):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "6")
        await settle(app, pilot)
        rows = _rows_after(screen_text(app), "An evidence bundle is JSON")
    paragraph = [row.rstrip() for row in rows[: next(i for i, row in enumerate(rows) if not row.strip())]]
    assert len(paragraph) >= 3 and all(len(row) >= 60 for row in paragraph[:-1]), paragraph  # full rows, no hard breaks
    assert "captures' provenance" in " ".join(row.strip() for row in paragraph)


@pytest.mark.asyncio
async def test_inspect_fleet_chart_labels_are_whole_at_80_columns(demo_url):
    from lenses.fleet import WINDOW_METRICS

    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("i")
        await settle(app, pilot)
        app.screen.query_one("#picker-list").highlighted = 2
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.inv.lens == "fleet"
        await pilot.press("3")
        await settle(app, pilot)
        lines = text_of(app.query_one("#inspect-report")).splitlines()
    chart = lines[lines.index("Window metrics") :]
    shown = [title for _name, title, _unit, _better in WINDOW_METRICS if title in chart]
    assert "Mean wait incl. waiting (≥)" in shown and "Median wait (Kaplan–Meier)" in shown
    assert all(len(line) <= 80 for line in lines)


@pytest.mark.asyncio
async def test_frame_question_wraps_under_itself(demo_url):
    from store import open_store
    from workbench.investigations import workflow as wf

    question = (
        "Did the scheduler change in the new engine release raise the p95 time to first token "
        "for long prompts under the production request mix at peak load?"
    )
    store = open_store(demo_url)
    inv = wf.new_investigation(store, lens="inference", question=question).to_json()
    store.close()
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape")  # the start-up picker
        app.open_investigation(inv["id"])
        await settle(app, pilot)
        rows = _rows_after(screen_text(app), "question")
    column = rows[0].index("Did the")
    following = rows[1 : next(i for i, row in enumerate(rows) if "guardrails" in row)]
    assert following and all(row[:column].strip() == "" and row[column] != " " for row in following)
    assert " ".join([rows[0][column:].strip(), *(row.strip() for row in following)]) == question


@pytest.mark.asyncio
async def test_compare_on_a_users_store_says_what_to_do(tmp_path):
    """No investigation open: the empty lists come with what fills them; an investigation
    of a lens with no runs says so, and what to do."""
    from pathlib import Path

    import captures
    from store import open_store
    from workbench.ingest import import_files
    from workbench.investigations import workflow as wf

    url = f"sqlite:///{tmp_path / 'user.sqlite'}"
    demo = Path(captures.__file__).parent / "demo" / "inference"
    store = open_store(url)
    import_files(store, [demo / "baseline-1.json", demo / "candidate-1.json"])
    store.close()
    app = WorkbenchApp(url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape", "2")  # close the start-up picker, go to Compare
        await settle(app, pilot)
        banner = text_of(app.query_one("#compare-banner"))
        assert "No investigation open" in banner and "i to pick" in banner and "n to create" in banner
        assert any("press i to pick" in row.lower() for row in screen_text(app))
        await pilot.press("1")
        assert "No investigation open" in text_of(app.query_one("#frame-body"))

    store = open_store(url)
    inv = wf.new_investigation(store, lens="training", question="Did the step time grow?").to_json()
    store.close()
    app = WorkbenchApp(url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape")
        app.open_investigation(inv["id"])
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        assert "No training runs in this store" in text_of(app.query_one("#run-detail"))


def test_long_commands_wrap_into_lines_a_shell_reads_back_as_one():
    import shlex

    from workbench.tui.services import shell_lines

    command = (
        "wb compare 1 2 3 4 5 --vs 11 12 13 14 15 --control 6 7 8 9 10 --change 'engine_revision=v0.8.2:v0.8.3' "
        "--accept model,hardware --why 'it'\"'\"'s the same job script -- really'"
    )
    lines = shell_lines(command, 4)
    assert len(lines) > 1 and all(len(line) <= 80 for line in lines)
    assert all(line.endswith(" \\") for line in lines[:-1]) and all(line.startswith("      --") for line in lines[1:])
    assert shlex.split(" ".join(line.removesuffix(" \\").strip() for line in lines)) == shlex.split(command)
    assert shell_lines("wb declare 1 x=y", 4) == ["    wb declare 1 x=y"]
