"""State belongs to the investigation, and the Compare pane shows the CLI's own report."""

from __future__ import annotations

import pytest

from tests.tui.pilot import run_labels, select_only, settle, text_of
from workbench.tui.app import WorkbenchApp
from workbench.usecases.transport import Local


async def _pick(app, pilot, inv_id: int) -> None:
    """Open an investigation through the picker, by keys."""
    await pilot.press("i")
    await settle(app, pilot)
    picker = app.screen.query_one("#picker-list")
    ids = [int(o.id) for o in picker.options]
    picker.highlighted = ids.index(inv_id)
    await pilot.press("enter")
    await settle(app, pilot)
    assert app.inv.id == inv_id


@pytest.mark.slow
@pytest.mark.asyncio
async def test_state_per_investigation_across_all_three_and_back(demo_url):
    from store import open_store

    store = open_store(demo_url)
    lens_runs = {lens: {r.id for r in store.list_runs(lens)} for lens in ("inference", "training", "fleet")}
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")  # investigation 1 (inference)
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        first = app.inv.to_json()
        base = app.query_one("#baseline-list")
        cand = app.query_one("#candidate-list")
        # Opening it preselected its run sets.
        assert base.selected == set(first["baseline_runs"]) and cand.selected == set(first["candidate_runs"])
        # Change the selection and filter in investigation 1.
        await select_only(pilot, base, set(first["baseline_runs"][:2]))
        await pilot.press("f")
        for ch in "run 1":
            await pilot.press("space" if ch == " " else ch)
        await pilot.press("enter")
        await settle(app, pilot)
        assert all("run 1" in t for t in run_labels(base))

        for inv_id, lens in ((2, "training"), (3, "fleet")):
            await _pick(app, pilot, inv_id)
            await pilot.press("2")
            await settle(app, pilot)
            inv = app.inv.to_json()
            assert inv["lens"] == lens
            assert app.query_one("#run-filter").value == ""  # the other investigation's filter stays there
            shown = set(base.run_ids())
            assert shown == lens_runs[lens]  # only this lens's runs are listed, so only they can be selected
            assert base.selected == set(inv["baseline_runs"]) and cand.selected == set(inv["candidate_runs"])
            control = set(inv["comparisons"][-1]["parameters"].get("control") or [])
            assert (
                control and app.query_one("#control-list").selected == control
            )  # the A′ runs of its latest comparison
            await pilot.press("c")
            await settle(app, pilot)
            banner = text_of(app.query_one("#compare-banner"))
            assert "comparing" not in banner and ("COMPARABLE" in banner or "REFUSED" in banner), banner
            params = app.inv.comparisons[-1].parameters
            assert params.lens == lens and set(params.control) == control
            assert "control (A′, baseline again)" in text_of(app.query_one("#compare-report"))

        await _pick(app, pilot, 1)
        await pilot.press("2")
        await settle(app, pilot)
        assert app.query_one("#run-filter").value == "run 1"
        assert base.selected == set(first["baseline_runs"][:2])
        assert cand.selected == set(first["candidate_runs"])


@pytest.mark.asyncio
async def test_a_failed_comparison_resolves_the_banner(demo_url, monkeypatch):
    from workbench.tui import services

    def broken(*args, **kwargs):
        raise RuntimeError("the store went away")

    monkeypatch.setattr(services, "compare_and_store", broken)
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "2")
        await settle(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        banner = text_of(app.query_one("#compare-banner"))
        assert "FAILED" in banner and "the store went away" in banner and "comparing" not in banner
        assert app.state.banner == "failed"


@pytest.mark.asyncio
async def test_report_is_the_cli_report_fresh_and_stored(demo_url):
    """After a refusal and an acceptance, the pane shows `wb compare`'s text, reasons included;
    reopened from the store, the same text."""
    from store import open_store
    from workbench.compare import compare
    from workbench.compare.render import render_comparison

    store = open_store(demo_url)
    (other,) = [r.id for r in store.list_runs("inference") if "other hardware" in r.label]
    why = "triage of the engine change only; hardware accepted"
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "2")
        await settle(app, pilot)
        await select_only(pilot, app.query_one("#candidate-list"), {other})
        await pilot.press("c")
        await settle(app, pilot)
        assert "REFUSED" in text_of(app.query_one("#compare-banner"))
        await pilot.press("a")
        await pilot.pause()
        for ch in why:
            await pilot.press("space" if ch == " " else ch)
        await pilot.press("enter")
        await settle(app, pilot)
        banner = text_of(app.query_one("#compare-banner"))
        shown = text_of(app.query_one("#compare-report"))
        comp = app.inv.comparisons[-1]
    assert "REFUSED" not in banner and "hardware" in banner
    params = comp.parameters
    cli = render_comparison(
        compare(
            store.load_runs(comp.baseline_runs),
            store.load_runs(comp.candidate_runs),
            **params.engine_arguments(),
            control=store.load_runs(list(params.control)),
        )
    )
    assert shown == cli
    assert f"accepted: {why}" in shown

    app = WorkbenchApp(demo_url)  # a new session: the comparison comes from the store
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "2")
        await settle(app, pilot)
        assert text_of(app.query_one("#compare-report")) == cli
        assert app.state.comparison.id == comp.id
        assert "accepted with a recorded reason: hardware" in text_of(app.query_one("#compare-banner"))


def test_every_stored_demo_comparison_renders_as_the_cli_prints_it(demo_url):
    """The stored JSON, turned back into the typed comparison, draws the same report as a fresh run."""
    from store import open_store
    from workbench.compare import compare
    from workbench.compare.render import render_comparison
    from workbench.investigations import workflow as wf
    from workbench.tui import services

    store = open_store(demo_url)
    seen = 0
    for inv in wf.investigation_summaries(store):
        for comp in wf.investigation_view(store, inv.id).comparisons:
            p = comp.parameters
            fresh = compare(
                store.load_runs(comp.baseline_runs),
                store.load_runs(comp.candidate_runs),
                **p.engine_arguments(),
                control=store.load_runs(list(p.control)),
            )
            assert services.comparison_report(Local(store), comp) == render_comparison(fresh)
            seen += 1
    assert seen >= 3


@pytest.mark.asyncio
async def test_compare_pane_shows_each_selected_run_over_time(demo_url, monkeypatch):
    from workbench.tui import services

    read: list[list[int]] = []
    run_sparks = services.run_sparks
    monkeypatch.setattr(
        services, "run_sparks", lambda store, lens, ids: (read.append(ids), run_sparks(store, lens, ids))[1]
    )
    app = WorkbenchApp(demo_url)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "2")
        await settle(app, pilot)
        state = app.state
        lines = text_of(app.query_one("#compare-sparks")).strip().splitlines()
        selected = [*sorted(state.baseline), *sorted(state.candidate), *sorted(state.control)]
        assert lines[0].startswith("Over time: TTFT by request, one scale")
        assert [(line[0], int(line.split()[1])) for line in lines[2:]] == [
            *(("B", r) for r in sorted(state.baseline)),
            *(("C", r) for r in sorted(state.candidate)),
            *(("A", r) for r in sorted(state.control)),
        ]
        assert all(len(line) <= 80 for line in lines)
        assert all(any(ch in line for ch in "▁▂▃▄▅▆▇█") for line in lines[2:])
        # The sparklines follow the selection: space on the first baseline run drops its line ...
        base = app.query_one("#baseline-list")
        base.focus()
        base.highlighted = base.index_of(min(state.baseline))
        await pilot.press("space")
        await settle(app, pilot)
        shown = [int(line.split()[1]) for line in text_of(app.query_one("#compare-sparks")).strip().splitlines()[2:]]
        assert shown == selected[1:]
        # ... and again brings it back, from what was read: each run is read once.
        await pilot.press("space")
        await settle(app, pilot)
        shown = [int(line.split()[1]) for line in text_of(app.query_one("#compare-sparks")).strip().splitlines()[2:]]
        assert shown == selected
    assert sorted(r for ids in read for r in ids) == sorted(selected)


def test_sparkline_shares_one_scale_and_marks_unknown():
    import math

    from workbench.compare.charts import sparkline

    assert sparkline([1.0, 1.0, 8.0, 8.0], 4, 1.0, 8.0) == "▁▁██"
    assert sparkline([1.0, math.nan, 4.5], 3, 1.0, 8.0) == "▁?▅"
    assert (
        sparkline(list(range(100)), 10, 0.0, 99.0)[0] == "▁" and sparkline(list(range(100)), 10, 0.0, 99.0)[-1] == "█"
    )
    assert len(sparkline([2.0] * 5, 40, 0.0, 4.0)) == 5  # never stretched beyond its items
