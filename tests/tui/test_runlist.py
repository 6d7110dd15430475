"""Run lists for real stores (issue 30 item 5): grouped by label prefix, each row the id and
what tells the run from its neighbours, the `/` filter, and Verify's runs folded under their
plan (`t` lists them) so that `End` lands on a run a person imported."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.foundation.helpers import inference_capture, write_json
from tests.tui.pilot import option_texts, settle, text_of
from workbench.tui.app import WorkbenchApp
from workbench.tui.runlist import Row, group, matches, plan_of, run_rows, split_labels

DEMO = [
    "engine v0.8.2 run 1",
    "engine v0.8.2 run 2",
    "engine v0.8.2 run 1 (A′ control)",
    "engine v0.8.3 run 1",
    "engine v0.8.3 run 2",
    "engine v0.8.3 on 1x A100 (other hardware)",
]


@dataclass
class R:
    id: int
    label: str
    origin: str = "import"


def test_a_row_keeps_what_differs_from_its_neighbours():
    assert split_labels(DEMO) == [
        ("engine v0.8.2 run", "1"),
        ("engine v0.8.2 run", "2"),
        ("engine v0.8.2 run", "1 (A′ control)"),
        ("engine v0.8.3 run", "1"),
        ("engine v0.8.3 run", "2"),
        ("engine v0.8.3", "on 1x A100 (other hardware)"),
    ]
    # Equal labels keep their last word; a lone label is whole.
    assert split_labels(["same run", "same run"]) == [("same", "run"), ("same", "run")]
    assert split_labels(["window A1"]) == [("", "window A1")]


def test_rows_are_headed_by_the_shared_prefix():
    rows = group([R(i, label) for i, label in enumerate(DEMO, start=1)])
    assert [(r.text, r.run_id) for r in rows] == [
        ("engine v0.8.2 run …", None),
        ("1", 1),
        ("2", 2),
        ("1 (A′ control)", 3),
        ("engine v0.8.3 run …", None),
        ("1", 4),
        ("2", 5),
        ("engine v0.8.3 …", None),
        ("on 1x A100 (other hardware)", 6),
    ]


def test_verify_runs_fold_under_their_plan_and_the_filter_reads_whole_labels():
    runs = [
        R(1, "engine v0.8.2 run 1"),
        R(2, "engine v0.8.2 run 2"),
        *[R(10 + i, f"cpu-inference-1 e1 r{i // 3 + 1} {arm}", "rerun") for i, arm in enumerate(["A", "B", "A′"] * 2)],
    ]
    assert plan_of(runs[2]) == "cpu-inference-1" and plan_of(runs[0]) is None
    folded = run_rows(runs)
    assert [r.run_id for r in folded if r.is_run] == [1, 2]
    assert folded[-1] == Row("cpu-inference-1", folded=6) and folded[-1].shown() == "▸ cpu-inference-1: 6 runs"
    listed = run_rows(runs, plan_runs=True)
    assert [r.run_id for r in listed if r.is_run] == [1, 2, 10, 11, 12, 13, 14, 15]
    assert Row("cpu-inference-1 e1 r2 …") in listed and Row("A′", 15) in listed
    assert [r.run_id for r in run_rows(runs, "RUN 2") if r.is_run] == [2]  # id and whole label, any case
    assert [r.run_id for r in run_rows(runs, "r2 b", plan_runs=True) if r.is_run] == [14]
    assert matches(runs[0], "") and matches(runs[0], " 1 ") and not matches(runs[0], "v0.8.3")


# -- in the app --------------------------------------------------------------------


@pytest.fixture
def plan_runs_url(demo_url, tmp_path):
    """The demo store with six runs a Verify plan made (labelled as the rerun executor does)."""
    from store import open_store
    from workbench.ingest import import_files

    store = open_store(demo_url)
    paths = [
        write_json(tmp_path / f"r{i}.json", inference_capture(4, label=f"cpu-inference-1 e1 r{i // 3 + 1} {arm}"))
        for i, arm in enumerate(["A", "B", "A′"] * 2)
    ]
    import_files(store, paths, origin="rerun")
    store.close()
    return demo_url


async def _compare(app, pilot):
    await settle(app, pilot)
    await pilot.press("enter", "2")  # investigation 1 (inference), Compare
    await settle(app, pilot)
    return app.query_one("#baseline-list")


@pytest.mark.asyncio
async def test_end_lands_on_a_run_and_t_lists_the_plans_runs(plan_runs_url):
    app = WorkbenchApp(plan_runs_url)
    async with app.run_test(size=(80, 24)) as pilot:
        runs = await _compare(app, pilot)
        imported = runs.run_ids()
        assert max(imported) == 46 and len(imported) == 16  # the demo's runs; the plan's are folded
        assert option_texts(runs)[-1].startswith("▸ cpu-in") and option_texts(runs)[-1].endswith(": 6 runs")
        assert option_texts(runs)[0] == "engine v0.8.2 run …"  # a heading ...
        # ... then the id, and what differs after as many shared words as fit: never a bare "1 1"
        assert runs.highlighted == 1 and option_texts(runs)[1].split()[1:] == ["1", "…v0.8.2", "run", "1"]
        await pilot.press("end")
        await settle(app, pilot)
        assert runs.get_option_at_index(runs.highlighted).id == "46"  # not the folded plan, not a heading
        await pilot.press("home", "down")
        await settle(app, pilot)
        assert runs.get_option_at_index(runs.highlighted).id == "2"  # arrows skip headings too
        assert "2: engine v0.8.2 run 2" in text_of(app.query_one("#run-detail"))  # the whole label
        await pilot.press("t")
        await settle(app, pilot)
        assert len(runs.run_ids()) == 22 and any(t.startswith("cpu-inference-1 e1 r2") for t in option_texts(runs))
        await pilot.press("end")
        await settle(app, pilot)
        assert runs.get_option_at_index(runs.highlighted).id == str(max(runs.run_ids()))
        await pilot.press("t")
        await settle(app, pilot)
        assert len(runs.run_ids()) == 16 and runs.highlighted is not None


@pytest.mark.asyncio
async def test_slash_filters_and_the_selection_survives_folding(plan_runs_url):
    app = WorkbenchApp(plan_runs_url)
    async with app.run_test(size=(80, 24)) as pilot:
        runs = await _compare(app, pilot)
        selected = set(runs.selected)
        await pilot.press("t", "end", "space", "t")  # select a plan run, fold the plan again
        await settle(app, pilot)
        assert len(runs.selected) == len(selected) + 1  # folded from view, not from the selection
        await pilot.press("slash")
        for ch in "v0.8.3":
            await pilot.press(ch)
        await pilot.press("enter")
        await settle(app, pilot)
        assert sorted(runs.run_ids()) == [11, 12, 13, 14, 15, 46]
        assert all(runs.label_of(i).startswith("engine v0.8.3") for i in runs.run_ids())
        assert app.focused is runs


def test_a_row_names_its_run_when_its_heading_is_out_of_sight():
    from workbench.tui.widgets import row_text

    label = "engine v0.8.2 run 1"
    assert row_text(label, "1", 30) == label  # room enough: the whole label
    assert row_text(label, "1", 16) == "…v0.8.2 run 1"  # the rest after whole shared words, "…" first
    assert row_text(label, "1", 8) == "…run 1"
    assert row_text("vLLM sweep seed 2689448468", "2689448468", 8) == "2689…468"  # a long rest: elided in its middle
