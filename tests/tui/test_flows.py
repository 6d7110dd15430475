"""Each stage's main flow, driven by keys at 80x24 on the demo store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.foundation.helpers import inference_capture, write_json
from tests.tui.pilot import option_texts, select_only, settle, text_of
from workbench.tui.app import WorkbenchApp
from workbench.tui.stages.compare import CompareStage

pytestmark = pytest.mark.asyncio


async def _open(app, pilot, inv: int = 1) -> None:
    await settle(app, pilot)
    picker = app.screen.query_one("#picker-list")
    picker.highlighted = inv - 1
    await pilot.press("enter")
    await settle(app, pilot)


async def test_picker_then_frame(demo_url):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        texts = option_texts(app.screen.query_one("#picker-list"))
        assert len(texts) == 3 and "inference" in texts[0] and "training" in texts[1] and "fleet" in texts[2]
        await _open(app, pilot, 2)
        assert app.inv.lens == "training"
        body = text_of(app.query_one("#frame-body"))
        assert "framework" in body and "PyTorch" in body
        await pilot.press("?")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        for key, stage in zip("123456", ("frame", "compare", "inspect", "hypothesize", "verify", "share")):
            await pilot.press(key)
            await pilot.pause()
            assert app.stage == stage


async def test_refused_comparison_shows_reason_and_accepts(demo_url):
    from store import open_store

    # The demo carries a run on other hardware: its example of a pair the lens refuses.
    (new_id,) = [r.id for r in open_store(demo_url).list_runs("inference") if "other hardware" in r.label]

    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(app, pilot, 1)
        await pilot.press("2")
        await settle(app, pilot)
        await select_only(pilot, app.query_one("#candidate-list"), {new_id})
        await pilot.press("c")
        await settle(app, pilot)
        banner = text_of(app.query_one("#compare-banner"))
        assert "REFUSED" in banner and "hardware" in banner
        await pilot.press("a")
        await pilot.pause()
        dialog = app.screen
        assert dialog.query_one("#field-dimension").value == "hardware"
        dialog.query_one("#field-why").value = "checking the engine only; hardware difference accepted for triage"
        await pilot.click("#ok")
        await settle(app, pilot)
        banner = text_of(app.query_one("#compare-banner"))
        assert "REFUSED" not in banner, banner
        comp = app.inv.comparisons[-1]
        assert comp.parameters.accepts == {
            "hardware": "checking the engine only; hardware difference accepted for triage"
        }


async def test_pin_observation_reaches_hypothesize_and_bundle(demo_url, tmp_path):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(app, pilot, 1)
        # retract one pinned observation first so that pinning it again is a new pin
        await pilot.press("4")
        await settle(app, pilot)
        before = [o for o in app.inv.observations if o.kind == "observation"]
        await pilot.press("3")
        await settle(app, pilot)
        derived = app.query_one("#derived")
        assert derived.option_count >= 3
        derived.highlighted = 0
        await pilot.press("p")
        await settle(app, pilot)
        after = [o for o in app.inv.observations if o.kind == "observation"]
        assert len(after) == len(before) + 1
        pinned = after[-1]
        assert pinned.evidence[0]["kind"] == "comparison"
        await pilot.press("4")
        await settle(app, pilot)
        texts = option_texts(app.query_one("#observations"))
        assert any(pinned.text in t for t in texts)
        assert not any(pinned.text in t for t in option_texts(app.query_one("#hypotheses")))
        await pilot.press("6")
        await pilot.press("e")
        await settle(app, pilot)  # the dialog opens once the bundle's sizes are measured
        proposed = app.screen.query_one("#field-path").value
        assert Path(proposed).is_relative_to(tmp_path / "xdg" / "wb"), proposed  # the data directory, not the cwd
        assert app.screen.query_one("#field-embed").value == "yes"  # the demo's samples are small
        path = tmp_path / "out.bundle.json"
        app.screen.query_one("#field-path").value = str(path)
        await pilot.click("#ok")
        await settle(app, pilot)
        shown = text_of(app.query_one("#share-result"))
        assert "checksum sha256:" in shown and "samples embedded" in shown
        assert "--recompute): VALID" in " ".join(shown.split()), shown  # the written file was rechecked
        bundle = json.loads(path.read_text())
        assert pinned.text in json.dumps(bundle["observations"], ensure_ascii=False)
        await pilot.press("v")
        await pilot.pause()
        await pilot.click("#ok")
        await settle(app, pilot)
        assert "VALID" in text_of(app.query_one("#share-result"))


async def test_hypothesis_add_and_status(demo_url):
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(app, pilot, 2)
        await pilot.press("4")
        await settle(app, pilot)
        n = len(app.inv.hypotheses)
        await pilot.press("h")
        await pilot.pause()
        app.screen.query_one("#field-statement").value = "NCCL 2.21 picks a slower all-reduce algorithm"
        app.screen.query_one("#field-test").value = "rerun with NCCL_ALGO=Ring on both sides, 10 rounds"
        await pilot.click("#ok")
        await settle(app, pilot)
        assert len(app.inv.hypotheses) == n + 1
        hyp = app.query_one("#hypotheses")
        hyp.focus()
        hyp.highlighted = n
        await pilot.press("s")
        await pilot.pause()
        app.screen.query_one("OptionList").highlighted = 2  # undetermined
        await pilot.press("enter")
        await pilot.pause()
        app.screen.query_one("#field-note").value = "the rerun could not pin the algorithm"
        await pilot.click("#ok")
        await settle(app, pilot)
        assert app.inv.hypotheses[-1].status == "undetermined"
        assert any("[UNDETERMINED]" in t for t in option_texts(hyp))


async def test_hostile_label_displays_literally(demo_url, tmp_path):
    from store import open_store
    from workbench.ingest import import_files

    hostile = "[bold red]boom[/] [link=http://evil.example]x[/link] \x1b[31mred\x1b[0m"
    doc = inference_capture(5, label=hostile)
    import_files(open_store(demo_url), [write_json(tmp_path / "hostile.json", doc)])
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(app, pilot, 1)
        await pilot.press("2")
        await settle(app, pilot)
        runs = app.query_one("#baseline-list")
        run_id = next(i for i in runs.run_ids() if "boom" in runs.label_of(i))
        row = str(runs.get_option_at_index(runs.index_of(run_id)).prompt)  # elided in the middle to the list's width
        assert row.startswith(f"[ ] {run_id} [bold") and "\x1b" not in row
        runs.focus()
        runs.highlighted = runs.index_of(run_id)
        await pilot.press("v")  # the label whole
        await settle(app, pilot)
        shown = text_of(app.screen.query_one("#detail-text"))
        assert "[bold red]boom[/]" in shown and "[link=http://evil.example]" in shown
        assert "\x1b" not in shown and "\\x1b[31m" in shown


async def test_a_run_on_two_sides_is_refused_by_the_one_run_set_check(demo_url):
    """The TUI's selection goes through workbench.compare.run_sets.check_run_sets, as wb compare does."""
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(app, pilot, 1)
        await pilot.press("2")
        await settle(app, pilot)
        before = len(app.inv.comparisons)
        both = min(app.query_one(CompareStage).state.baseline)  # a baseline run, put on the candidate side too
        await select_only(pilot, app.query_one("#candidate-list"), {both})
        await pilot.press("c")
        await settle(app, pilot)
        said = text_of(app.query_one("#run-detail"))  # on the status line, not a toast over the report
        assert f"run {both} is named in the baseline and in the candidate" in said, said
        assert len(app.inv.comparisons) == before
