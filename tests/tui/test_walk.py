"""A stranger's walk (issue 30 item 8): a whole investigation on a user's own imported
traces, by keys only, at 80×24, in three terminal settings.

The store holds nothing but the HTA trace-diff pair of ``tests/data`` (a control trace on
an A100, a test trace on a V100), imported as a user would. The walk: open the workbench,
frame an investigation, compare (refused: the traces do not say the model, objective,
topology or batch), declare what is missing from the refusal (``m``), compare again,
declare the GPU as the change under test (``d``, its values as offered) and accept the rank
count that comes with it (``a``, as offered, with a reason), inspect, pin an observation, write a hypothesis,
make and run a Verify plan, mark the hypothesis from its result, export, and recheck the
bundle (``--recompute`` re-derives every comparison, including the one made before the
declarations). Every stage's screen is an SVG snapshot in ``__snapshots__/test_walk/``
where the screen is the same on every run; the stages that show timings, seeds, the
checkout's paths or a checksum are checked by their text instead (the text of every stage
is written to ``$WB_WALK_SCREENS/TERMINAL/`` when that is set, for the issue's note).

Regenerate after an intended change with ``pytest tests/tui/test_walk.py --snapshot-update``.
"""

from __future__ import annotations

import os
import shutil
from importlib.metadata import version
from pathlib import Path

import pytest
from pytest_textual_snapshot import SVGImageExtension

from tests.tui.pilot import screen_text, settle, text_of
from tests.tui.test_focus import drawn_styles
from workbench.tui.app import WorkbenchApp
from workbench.tui.stages.hypothesize import STATUSES

SNAPSHOT_TEXTUAL = "8.2.8"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        version("textual") != SNAPSHOT_TEXTUAL, reason=f"snapshots were made with textual {SNAPSHOT_TEXTUAL}"
    ),
]

TERMINALS = {
    "xterm-256color": {"TERM": "xterm-256color"},
    "screen": {"TERM": "screen"},
    "no-color": {"TERM": "xterm-256color", "NO_COLOR": "1"},
}
# Stages whose screen shows what changes from run to run (seeds, timings, this checkout's
# paths, a checksum): checked by their text, not kept as a picture.
# A busy machine can blur the rerun's +5 % (INCONCLUSIVE): the status follows the verdict.
VOLATILE = {"plan", "ran", "evidence-dialog", "marked", "export-dialog", "exported", "rechecked"}
STATUS_OF = {"REGRESSION": "supported", "INCONCLUSIVE": "undetermined"}  # else refuted: the step was not slower


class Walk:
    """The screens of one walk, stage by stage: text (with any toast) and the SVG."""

    def __init__(self, app: WorkbenchApp, pilot, terminal: str) -> None:
        self.app, self.pilot, self.terminal = app, pilot, terminal
        self.texts: dict[str, str] = {}
        self.svgs: dict[str, str] = {}

    async def keys(self, *keys: str, rounds: int = 3) -> None:
        await self.pilot.press(*keys)
        await settle(self.app, self.pilot, rounds=rounds)

    async def type(self, text: str) -> None:
        await self.pilot.press(*text)

    def stage(self, name: str) -> str:
        text = "\n".join(line.rstrip() for line in screen_text(self.app))
        self.texts[name] = text
        self.app.clear_notifications()  # a toast's timeout is no part of the picture
        self.svgs[name] = self.app.export_screenshot(title=self.app.title)
        folder = os.environ.get("WB_WALK_SCREENS")
        if folder:
            out = Path(folder) / self.terminal
            out.mkdir(parents=True, exist_ok=True)
            (out / f"{len(self.texts):02d}-{name}.txt").write_text(text + "\n")
        return text


async def focus_is_seen(w: Walk) -> None:
    """Tab to a dialog's OK: it is drawn apart from Cancel, in reverse video, whatever the
    terminal (under NO_COLOR the attribute is all there is); then back to where it was."""
    ok, cancel = w.app.screen.query_one("#ok"), w.app.screen.query_one("#cancel")
    tabs = 0
    while w.app.focused is not ok and tabs < 6:
        await w.keys("tab")
        tabs += 1
    assert w.app.focused is ok
    mine, theirs = drawn_styles(w.app, ok.region), drawn_styles(w.app, cancel.region)
    assert mine != theirs and all(reverse for _b, reverse, *_ in mine), (mine, theirs)
    await w.keys(*["shift+tab"] * tabs)


async def walk(w: Walk) -> None:
    app = w.app
    await settle(app, w.pilot)
    assert "No investigations yet" in w.stage("open")

    # frame: n in the picker, the training lens, the question; guardrails left to the lens
    await w.keys("n")
    await w.keys("down", "enter")
    await w.type("Why is the test trace slower?")
    assert "New training investigation" in w.stage("new-investigation")
    await focus_is_seen(w)  # on OK: it looks focused, Cancel does not (NO_COLOR too)
    await w.keys("enter", "enter")
    assert app.inv is not None and app.inv.lens == "training" and "Why is the test trace slower?" in w.stage("frame")

    # compare: control as baseline, test as candidate; refused for what the files do not say
    await w.keys("2")
    await w.keys("space", "tab", "down", "space")
    await w.keys("c")
    refused = w.stage("refused")
    assert "REFUSED" in refused and "Model (model) must match but is unknown" in refused
    assert "m makes its wb declare" in refused

    # declare what is missing, from the refusal: its own wb declare line, one field a value
    await w.keys("m")
    dialog = w.stage("declare-dialog")
    assert "Declare what the files do not say" in dialog and "effective_batch (runs 1, 2)" in dialog
    for value in ("llama-7b", "pretrain", "data parallel", "64"):
        await w.type(value)
        await w.pilot.press("tab")
    await w.type("one job script for both traces")
    await w.keys("enter")
    declared = w.stage("declared")
    assert "Hardware (hardware) must match but differs" in declared, declared  # compared again: only the GPU is left
    report = text_of(app.query_one("#compare-report")).splitlines()
    assert any(
        line.split()[:5] == ["*", "model", "same", "llama-7b", "llama-7b"] and "declared" in line for line in report
    )

    # the GPU differs on purpose: it is the change under test. d offers it from the refusal, both
    # values in full (the report cuts them), so the offered values are taken as they are
    gpu = next(r for r in app.state.comparison.comparison().comparability.rows if r.name == "hardware")
    await w.keys("d")
    assert "Declare the intended change" in w.stage("change-dialog")
    offered = [app.screen.query_one(f"#field-{name}").value for name in ("dimension", "from", "to")]
    assert offered == ["hardware", gpu.baseline.value, gpu.candidate.value], offered
    await w.keys("enter", "enter", "enter")
    changed = w.stage("changed")
    assert "✓ intended change: hardware" in changed and "Rank count (rank_count) must match" in changed, changed

    # the rank count came with the GPU: a offers what still refuses, not the declared change
    await w.keys("a")
    assert "Accept refused dimensions" in w.stage("accept-dialog")
    assert app.screen.query_one("#field-dimension").value == "rank_count"
    await focus_is_seen(w)
    await w.type("the test trace ran on one V100 on purpose")
    await w.keys("enter")
    compared = w.stage("compared")
    assert "COMPARABLE" in compared and "mean step time: 75.5 ms → 100 ms" in compared, compared

    # inspect, and pin the first derived observation
    await w.keys("3")
    assert "Derived observations" in w.stage("inspect")
    await w.keys("p")
    assert "✓ pinned" in w.stage("pinned")

    # a hypothesis with the test that decides it
    await w.keys("4")
    await w.keys("h")
    await w.type("A step that does 5 % more host work is slower")
    await w.pilot.press("tab")
    await w.type("interleaved A/B/A′ rerun of the bundled CPU workload")
    await w.pilot.press("tab")  # its kind: rerun, as the dialog gives it
    assert "New hypothesis" in w.stage("hypothesis-dialog")
    await w.keys("enter")
    assert "[OPEN] A step that does 5 % more host work is slower" in w.stage("hypothesis")

    # Verify: the one-key plan, then run it
    await w.keys("5")
    assert "No rerun plans yet" in w.stage("verify")
    await w.keys("n")
    assert "plan 1 saved: press r to run it" in w.stage("plan")
    await w.keys("r", rounds=4)
    ran = w.stage("ran")
    assert "[training, complete]" in ran and "Verdict: " in ran, ran
    verdict = ran.split("Verdict: ", 1)[1].split()[0]  # REGRESSION for +5 %, unless a busy machine blurs it

    # mark the hypothesis from the plan's result: the status its verdict says, in the status list's order
    status = STATUS_OF.get(verdict, "refuted")
    await w.keys("4")
    await w.keys("tab", "s")
    assert "Status of hypothesis 1" in w.stage("status-choice")
    await w.keys(*["down"] * [name for name, _label in STATUSES].index(status), "enter")  # in the dialog's order
    await w.type("rerun_plan=1")
    await w.pilot.press("tab")
    await w.type(f"the interleaved rerun says {verdict}")
    assert "Evidence that decided it" in w.stage("evidence-dialog")
    await w.keys("enter")
    assert f"[{status.upper()}] A step that does 5 % more host work is slower" in w.stage("marked")

    # share: export with the samples, rechecked by wb evidence verify --recompute
    await w.keys("6")
    await w.keys("e")
    dialog = w.stage("export-dialog")
    assert "Embed samples" in dialog and "yes" in dialog
    await w.keys("enter", "enter")
    exported = text_of(app.query_one("#share-result"))
    assert "samples embedded" in exported and "VALID" in exported and "MISMATCH" not in exported, exported
    assert "comparison/1" in exported  # made before the declarations, and re-derived as it was made
    w.stage("exported")
    await w.keys("v")
    await w.keys("enter")
    rechecked = text_of(app.query_one("#share-result"))
    assert rechecked.startswith("VALID") and "MISMATCH" not in rechecked, rechecked
    w.stage("rechecked")

    await w.keys("1")  # the end: the investigation's frame, with what the walk made of it
    end = w.stage("end")
    assert "intended change  hardware: NVIDIA A100" in end and "accepted  rank_count" in end, end
    assert "comparisons  4" in end and "observations  1" in end and "hypotheses  1" in end, end


@pytest.mark.parametrize("terminal", sorted(TERMINALS))
def test_strangers_walk(snap_compare, snapshot, _own_store_master, tmp_path, monkeypatch, terminal):
    for name, value in TERMINALS[terminal].items():
        monkeypatch.setenv(name, value)  # Textual reads NO_COLOR (and Rich TERM) when the app is made
    if "NO_COLOR" not in TERMINALS[terminal]:
        monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "own.sqlite"
    shutil.copy(_own_store_master, target)
    app = WorkbenchApp(f"sqlite:///{target}")
    app.animation_level = "none"  # no animation caught midway
    assert app.no_color == ("NO_COLOR" in TERMINALS[terminal])
    walked: list[Walk] = []
    failed: list[BaseException] = []

    async def run_before(pilot) -> None:
        w = Walk(app, pilot, terminal)
        walked.append(w)
        try:
            await walk(w)
        except BaseException as exc:  # noqa: BLE001 - raised below, with its own message, not as a missing screenshot
            failed.append(exc)

    matches = snap_compare(app, run_before=run_before, terminal_size=(80, 24))  # the last stage, as the plugin takes it
    if failed:
        raise failed[0]
    assert matches, "the walk's last stage differs from its snapshot"
    pictures = snapshot.use_extension(SVGImageExtension)
    for name, svg in walked[0].svgs.items():
        if name not in VOLATILE | {"end"}:
            assert pictures(name=name) == svg, f"stage {name} differs from its snapshot"


@pytest.mark.asyncio
async def test_declare_missing_waits_for_every_value_and_nothing_else(_own_store_master, tmp_path):
    """m: a value left empty keeps the dialog open on that field, nothing declared; m on a
    comparison that was compared says there is nothing missing."""
    from store import open_store

    target = tmp_path / "own.sqlite"
    shutil.copy(_own_store_master, target)
    app = WorkbenchApp(f"sqlite:///{target}")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        for keys in (
            ("n",),
            ("down", "enter"),
            (*"Why slower?", "enter", "enter"),
            ("2",),
            ("space", "tab", "down", "space"),
            ("c",),
            ("m",),
        ):
            await pilot.press(*keys)
            await settle(app, pilot)
        await pilot.press(*"llama-7b", "tab", "tab", *"dp", "tab", *"64", "tab", *"same script", "enter")
        await settle(app, pilot)
        dialog = app.screen
        assert "every value must be said" in text_of(dialog.query_one("#form-error"))
        assert app.focused is dialog.query_one("#field-d0-objective")  # the field at fault
        assert dialog.query_one("#field-d0-model").value == "llama-7b"  # what was typed stays
        assert not open_store(f"sqlite:///{target}").load_run(1, tables=[]).dimensions.get("model")
        await pilot.press(*"pretrain", "enter", "enter", "enter", "enter")
        await settle(app, pilot)
        assert "Hardware (hardware) must match but differs" in text_of(app.query_one("#compare-banner"))
        assert open_store(f"sqlite:///{target}").load_run(2, tables=[]).dimensions["objective"].value == "pretrain"
        await pilot.press("a", *"another GPU", "enter")
        await settle(app, pilot)
        assert "COMPARABLE" in text_of(app.query_one("#compare-banner"))
        await pilot.press("m")
        await settle(app, pilot)
        assert type(app.screen).__name__ != "FormScreen"
        assert "Nothing is missing" in text_of(app.query_one("#run-detail"))  # on the status line, not a toast
