"""Lens-specific behaviour lives on the lens: ``workbench.compare`` asks the lens
(attributes and methods of ``lenses.base.Lens``) and never switches on its name."""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from lenses import LENS_NAMES, builtin_lens
from lenses.base import Lens
from lenses.fleet import read_window
from lenses.training import per_step
from tests.lenses.test_lenses import NAN, fleet

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compare"))
from factories import training_run

from workbench.compare import compare

ROOT = Path(__file__).resolve().parents[2]
# ``lens.name ==``, ``c.lens.name != ...``, ``lens.name in (...)``, ``{...}[lens.name]``: a switch on the name;
# ``run.lens == "inference"``, ``lens not in ("a", ...)``: a switch on a lens word; ``getattr(lens, ...)``: a
# capability probed instead of declared on ``lenses.base.Lens``.
NAME_SWITCH = re.compile(
    r"\blens\.name\s*(==|!=|\bin\b|\bnot in\b|\])"
    r"|\b(\w+\.)?lens(_name)?\s*(==|!=)\s*[\"']"
    r"|\b(\w+\.)?lens(_name)?\s+(not\s+)?in\s*[(\[{]\s*[\"']"
    r"|\bgetattr\(\s*[\w.]*lens\b"
)
# Where a lens word is the subject itself, not a behaviour to ask a lens for (the list only shrinks).
WORDS_NOT_LENSES = {
    "workbench/compare/sweep.py": "a load sweep is inference runs by definition (formats/load_sweep.py marks them)",
    "workbench/tui/stages/compare.py": "the sweeps action says up front that sweeps are inference runs",
    "workbench/importers/mapped.py": "a mapped file is built into the named lens's record shape",
    "workbench/formats/record_map.py": "a fleet map's `name` column is the job name (text), not a number",
    "workbench/recorder/config.py": "the recorder loads no lens: its lens is a word of its config",
    "workbench/recorder/capture.py": "the recorder loads no lens: a request or a step is what it times",
    "workbench/recorder/recorder.py": "the recorder loads no lens: a request or a step is what it watches",
}


def test_no_switch_on_a_lens_name_outside_lenses():
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sorted((ROOT / "workbench").rglob("*.py"))
        if path.relative_to(ROOT).as_posix() not in WORDS_NOT_LENSES
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if NAME_SWITCH.search(line)
    ]
    assert not found, "ask the lens (a Lens attribute or method) instead:\n" + "\n".join(found)
    listed = [p for p in WORDS_NOT_LENSES if not NAME_SWITCH.search((ROOT / p).read_text(encoding="utf-8"))]
    assert listed == [], "no longer switches on a lens word: drop it from WORDS_NOT_LENSES"


def test_the_scan_catches_a_switch():
    for line in (
        'if lens.name == "fleet":',
        'fleet = c.lens.name != "fleet"',
        'if lens.name in ("a", "b"):',
        'unit = {"training": "ms", "fleet": "s"}[lens.name]',
        'dur = samples.get("step_ms") if run.lens == "training" else samples.get("e2e_ms")',
        "if state.lens != 'inference':",
        'if self.lens not in ("training", "inference"):',
        'with_metric = getattr(the_lens, "with_metric", None)',
        "getattr(lens, name)",
    ):
        assert NAME_SWITCH.search(line), line
    for line in ("title = lens.name.title()", "others = [r for r in runs if r.lens != lens]", "lenses = 3"):
        assert not NAME_SWITCH.search(line), line


def test_builtin_lenses_declare_their_behaviour():
    inf, tr, fl = (builtin_lens(n) for n in LENS_NAMES)
    assert (inf.phase_sentences, tr.phase_sentences, fl.phase_sentences) == ("each", "one", "one")
    assert (inf.locates_by_stage, tr.locates_by_stage, fl.locates_by_stage) == (True, False, False)
    assert (inf.runs_are_windows, tr.runs_are_windows, fl.runs_are_windows) == (False, False, True)
    assert (inf.primary_censored, tr.primary_censored, fl.primary_censored) == (False, False, True)
    assert (inf.throughput_from_primary, tr.throughput_from_primary, fl.throughput_from_primary) == (False, True, False)
    assert fl.work_note and not inf.work_note and not tr.work_note
    assert (inf.span_column, tr.span_column, fl.span_column) == ("e2e_ms", "step_ms", None)  # a recorder's slow span
    assert tr.with_metric("ttft_p99") is None and fl.with_metric("ttft_p99") is None  # --metric: inference only
    assert inf.with_metric("ttft_p99").primary.name == "ttft_p99"
    assert [(x.item_measure.name, x.item_measure.unit, x.item_order) for x in (inf, tr, fl)] == [
        ("ttft", "ms", "request order"),
        ("step_time", "ms", "step"),
        ("queue_wait", "s", "job start time"),
    ]
    # a stage is what locates a change: the inference phases all carry one
    assert all(p.stage for p in inf.phases) and not any(p.stage for p in tr.phases)


def test_base_defaults_are_those_of_a_plain_item_lens():
    lens = replace(builtin_lens("training"))
    base = Lens.__dataclass_fields__
    assert base["phase_sentences"].default == "one"
    assert not any(
        base[f].default for f in ("locates_by_stage", "runs_are_windows", "primary_censored", "throughput_from_primary")
    )
    assert (base["item_measure"].default, base["item_order"].default) == (None, "item order")
    r = training_run("r", steps=3, ranks=2)
    assert Lens.item_series(lens, r).keys() == lens.phase_values(r).keys()  # the default: the phases
    assert np.isnan(Lens.window_work(lens, r)) and Lens.censored_values(lens, r).size == 0


def test_training_series_is_per_step_primary_first():
    lens, r = builtin_lens("training"), training_run("r", steps=4, ranks=2)
    s = lens.item_series(r)
    assert list(s) == ["step_time", "input", "compute", "communication", "checkpoint"]
    assert np.array_equal(s["step_time"], per_step(r, "step_ms", "mean")) and s["step_time"].size == 4


def test_fleet_window_work_censoring_and_queue_waits():
    lens = builtin_lens("fleet")
    r = fleet(
        [
            # gpus submit eligible start end
            (2, 0, 100, 300, 500),  # wait 200, starts second
            (4, 0, 10, 40, 540),  # wait 30, starts first
            (1, 0, NAN, 50, 60),  # eligible unknown: no wait
            (8, 800, 900, NAN, NAN),  # still waiting at the end (1000): at least 100
            (1, 0, 0, 1200, 1300),  # starts after the window: waiting at its end, at least 1000
        ]
    )
    assert lens.window_work(r) == read_window(r).gpu_hours > 0
    assert sorted(lens.censored_values(r).tolist()) == [100.0, 1000.0]
    assert lens.item_series(r)["queue_wait"].tolist() == [30.0, 200.0]


def test_inference_series_starts_with_ttft():
    lens = builtin_lens("inference")
    r = fleet([(1, 0, 0, 1, 2)])  # any run: the inference lens reads its own columns
    r.tables["samples"] = {"ttft_ms": np.array([5.0, 7.0]), "queue_ms": np.array([1.0, 2.0])}
    s = lens.item_series(r)
    assert list(s) == ["ttft", "queue"] and s["ttft"].tolist() == [5.0, 7.0]


def pair(**kw):
    base = [training_run(f"b{i}", seed=i, run_id=i) for i in range(1, 6)]
    cand = [
        training_run(f"c{i}", seed=50 + i, comm=265, run_id=50 + i, framework="PyTorch 2.4-rc") for i in range(1, 6)
    ]
    return base, cand


@pytest.mark.parametrize("sentences", ["one", "each"])
def test_compare_asks_the_lens_how_to_speak_of_phases(sentences):
    base, cand = pair()
    lens = replace(builtin_lens("training"), phase_sentences=sentences)
    obs = [o["text"] for o in compare(base, cand, lens=lens, changes={"framework": None}).to_json()["observations"]]
    if sentences == "one":
        assert obs[0].startswith("Compute stayed at 260 ms") and obs[0].endswith(
            "communication grew from 115 ms to 265 ms."
        )
    else:
        assert any(t.startswith("Communication time grew from 115 ms to 265 ms") for t in obs)
        assert any("took the same time" in t for t in obs)


def test_compare_asks_the_lens_for_the_throughput_conversion():
    base, cand = pair()
    lens = builtin_lens("training")
    work = compare(base, cand, lens=lens, changes={"framework": None}).to_json()["work"]
    assert work["throughput"]["from_time_pct"] == pytest.approx(100 * (420 / 570 - 1), abs=0.3)
    work = compare(
        base, cand, lens=replace(lens, throughput_from_primary=False), changes={"framework": None}
    ).to_json()["work"]
    assert "from_time_pct" not in work["throughput"]


def test_window_metrics_come_from_the_lens():
    from lenses.fleet import WINDOW_METRICS

    fl = builtin_lens("fleet")
    assert [(m.name, m.title, m.unit, not m.lower_is_better) for m in fl.window_metric_specs] == list(WINDOW_METRICS)
    assert builtin_lens("training").window_metric_specs == ()


def test_a_lens_without_phases_is_not_taken_for_a_fleet_window():
    base, cand = pair()
    lens = replace(builtin_lens("training"), phases=())
    doc = compare(base, cand, lens=lens, changes={"framework": None}).to_json()
    assert doc["phases"] == [] and doc["primary"]["candidate"] == pytest.approx(570, abs=1)
