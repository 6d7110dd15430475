"""Issue 45 item 6: display names nobody can fake. A label that looks like another (the same
once NFKC-normalized with invisible characters removed and spaces collapsed) is refused at
import and at rename, naming both; a store that holds such labels already (made before the
check) shows each one distinguishably in `wb runs` and in the TUI's run list."""

from __future__ import annotations

import json

import pytest

from tests.hardening import inputs
from tests.hardening.test_refusals import refused, wb
from tests.tui.pilot import option_texts, settle

# The look-alikes of "cand": a soft hyphen, a tag, the Mongolian vowel separator, the
# combining grapheme joiner, a variation selector, the Hangul filler, the Braille blank, and
# their kin (zero-width space, word joiner, BOM, a bidi override, a Hangul choseong filler,
# a no-break space).
INVISIBLES = [
    "\u00ad", "\U000e0001", "\u180e", "\u034f", "\ufe0f", "\u3164", "\u2800",
    "\u200b", "\u2060", "\ufeff", "\u202e", "\u115f", "\u00a0",
]  # fmt: skip
LOOK_ALIKES = [f"cand{ch}" for ch in INVISIBLES]


@pytest.fixture
def store(tmp_path):
    return f"sqlite:///{tmp_path / 'wb.sqlite'}"


def _runs(capsys, store: str) -> dict[int, str]:
    rc, out, err = wb(capsys, "--store", store, "runs", "--json")
    assert rc == 0, err
    return {r["id"]: r["label"] for r in json.loads(out)}


def _capture(tmp_path, i: int, label: str):
    return inputs.native_capture(tmp_path / f"c{i}.json", label=label, ttft=1.0 + i)


@pytest.mark.parametrize("label", [*LOOK_ALIKES, "ｃａｎｄ", "cand ", " cand", "can  d"], ids=ascii)
def test_a_look_alike_label_is_refused_at_import_naming_both(capsys, tmp_path, store, label):
    assert (
        wb(capsys, "--store", store, "import", str(_capture(tmp_path, 0, "can d" if "  " in label else "cand")))[0] == 0
    )
    for how in ([], ["--label", label]):  # the file's own label, or one given on the command line
        path = _capture(tmp_path, 1, label)
        line = refused(capsys, "--store", store, "import", str(path), *how)
        assert f"{path}: label: label " in line and "looks like the label" in line and "of run 1" in line, line
    assert len(_runs(capsys, store)) == 1  # nothing written


def test_two_look_alike_labels_in_one_import_are_refused(capsys, tmp_path, store):
    a, b = _capture(tmp_path, 0, "cand"), _capture(tmp_path, 1, "cand\u00ad")
    line = refused(capsys, "--store", store, "import", str(a), str(b))
    assert "looks like the label 'cand' of the run from c0.json" in line
    assert _runs(capsys, store) == {}


def test_the_same_label_again_is_not_a_look_alike(capsys, tmp_path, store):
    for i in range(2):
        rc, _out, err = wb(capsys, "--store", store, "import", str(_capture(tmp_path, i, "cand")), "--label", "cand")
        assert rc == 0, err
    assert _runs(capsys, store) == {1: "cand", 2: "cand"}


@pytest.mark.parametrize("label", LOOK_ALIKES[:4] + ["ｃａｎｄ", "cand\u200b "], ids=ascii)
def test_a_look_alike_label_is_refused_at_rename_naming_both(capsys, tmp_path, store, label):
    for i, name in enumerate(("cand", "other")):
        assert wb(capsys, "--store", store, "import", str(_capture(tmp_path, i, name)))[0] == 0
    line = refused(capsys, "--store", store, "rename", "other", label)
    assert "looks like the label 'cand' of run 1" in line and "run 2 is not renamed" in line, line
    assert _runs(capsys, store) == {1: "cand", 2: "other"}


def test_a_label_of_invisible_characters_only_is_refused_at_rename(capsys, tmp_path, store):
    assert wb(capsys, "--store", store, "import", str(_capture(tmp_path, 0, "cand")))[0] == 0
    assert "the new label is empty" in refused(capsys, "--store", store, "rename", "cand", "\u200b\u3164")


@pytest.fixture
def legacy_store(capsys, tmp_path, store, monkeypatch):
    """A store that holds "cand" and its thirteen look-alikes (written before the check existed)."""
    from workbench import ingest

    monkeypatch.setattr(ingest, "refuse_look_alike_labels", lambda runs, stored: None)
    for i, label in enumerate(["cand", *LOOK_ALIKES]):
        rc, _out, err = wb(capsys, "--store", store, "import", str(_capture(tmp_path, i, label)), "--label", label)
        assert rc == 0, err
    monkeypatch.undo()
    return store


def test_wb_runs_shows_every_look_alike_distinguishably(capsys, legacy_store, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    rc, out, err = wb(capsys, "--store", legacy_store, "runs")
    assert rc == 0, err
    cells = [line.split()[2] for line in out.splitlines()[1:]]
    assert len(cells) == 14 and len(set(cells)) == 14, cells  # fourteen labels, fourteen different cells
    assert cells[0] == "cand" and cells[1:] == [
        f"cand\\u{ord(c):04x}" if ord(c) <= 0xFFFF else "cand\\U000e0001" for c in INVISIBLES
    ]
    assert all(ch not in out for ch in INVISIBLES)


@pytest.mark.asyncio
async def test_the_tui_run_list_shows_every_look_alike_distinguishably(capsys, tmp_path, legacy_store, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    from workbench.tui.app import WorkbenchApp

    rc, _out, err = wb(capsys, "--store", legacy_store, "investigate", "new", "--lens", "inference", "--question", "q?")
    assert rc == 0, err
    app = WorkbenchApp(legacy_store)
    async with app.run_test(size=(80, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter", "2")  # the investigation, its Compare stage
        await settle(app, pilot)
        rows = [text.split(maxsplit=3)[-1] for text in option_texts(app.query_one("#baseline-list"))]
    assert len(rows) == 14 and len(set(rows)) == 14 and rows[0] == "cand", rows
    assert all(ch not in "".join(rows) for ch in INVISIBLES)
