"""Inspect data and the ASCII charts; reports of odd runs (empty, hostile strings)."""

from __future__ import annotations

import json
import math

import pytest

from factories import fleet_run, inference_run, training_run
from store.records import Dimension, RunRecord
from workbench.compare import compare, inspect
from workbench.compare.charts import box_line, distribution_chart, paired_bars
from workbench.compare.render import render_comparison, render_inspect


def test_operations_that_moved_most_come_first():
    base = [training_run(f"b{i}", seed=i, run_id=i) for i in (1, 2)]
    cand = [training_run(f"c{i}", seed=9 + i, comm=265, run_id=10 + i) for i in (1, 2)]
    ops = inspect(base, cand).operations
    assert ops[0].name == "ncclAllReduce" and ops[0].kind == "collective"
    assert ops[0].baseline_ms_per_step == pytest.approx(115 * 0.9)
    assert ops[0].delta_ms == pytest.approx(150 * 0.9)
    assert {o.name for o in ops[1:]} == {"gemm_bf16", "adam_step"}
    assert all(o.delta_ms == pytest.approx(0) for o in ops[1:])


def test_no_operations_table_is_said_not_hidden():
    result = inspect([inference_run("b", run_id=1)], [inference_run("c", run_id=2)])
    assert result.operations is None
    assert "the runs carry no operations table" in render_inspect(result)


def test_over_time_shows_when_the_change_appears():
    base = [inference_run("b", run_id=1, n=400)]
    cand = inference_run("c", run_id=2, n=400)
    cand.samples["queue_ms"][200:] += 100.0  # the second half of the run slowed down
    result = inspect(base, [cand], windows=4)
    queue = next(m for m in result.over_time.metrics if m.name == "queue")
    ratios = [c / b for b, c in zip(queue.baseline, queue.candidate)]
    assert ratios[0] == pytest.approx(1, abs=0.05) and ratios[1] == pytest.approx(1, abs=0.05)
    assert ratios[2] > 3 and ratios[3] > 3
    assert result.over_time.by == "request order"


def test_distributions_are_pooled_and_labelled_descriptive():
    result = inspect(
        [inference_run("b", run_id=1, n=100), inference_run("b2", run_id=3, n=100)],
        [inference_run("c", run_id=2, n=100)],
    )
    queue = next(d for d in result.distributions if d.name == "queue")
    assert queue.pooled is True and queue.baseline.n == 200 and queue.candidate.n == 100
    assert "descriptive, not an interval" in render_inspect(result)
    json.dumps(result.to_json(), allow_nan=False)


def test_fleet_inspect_orders_waits_by_start():
    result = inspect([fleet_run("A", run_id=1)], [fleet_run("B", waits=tuple(range(10, 30)), run_id=2)], windows=2)
    m = result.over_time.metrics[0]
    assert m.name == "queue_wait" and m.candidate[0] < m.candidate[1]


def test_refused_inspect_has_no_detail():
    result = inspect([inference_run("b", run_id=1)], [inference_run("c", run_id=2, model="other")])
    assert not result.comparison.comparable
    assert result.distributions == () and result.operations is None
    assert "REFUSED" in render_inspect(result)


def test_paired_bars_share_one_scale_and_show_unknown():
    text = paired_bars([("queue", 40.0, 160.0), ("prefill", 70.0, math.nan)], "ms", width=60)
    lines = text.splitlines()
    assert all(len(line) <= 60 for line in lines)
    bar = lambda line: line.split("|", 1)[1].count("#") + line.split("|", 1)[1].count("=")  # noqa: E731
    assert bar(lines[1]) == pytest.approx(4 * bar(lines[0]), abs=1)
    assert "?" in lines[3] and lines[3].endswith("unknown")


def test_a_window_with_no_mean_reads_unknown_not_a_crash():
    """A window mean is ``float | None`` (None: how JSON carries an unknown one); the chart and the
    report say unknown, never 0 and never a TypeError."""
    import msgspec

    text = paired_bars([("queue 1/2", 3.0, None), ("queue 2/2", None, 4.0)], "ms", width=60)
    assert text.count("unknown") == 2 and "?" in text
    assert "not recorded on either side" in paired_bars([("q", None, None)], "ms")
    result = inspect([inference_run("b", run_id=1, n=400)], [inference_run("c", run_id=2, n=400)], windows=4)
    first = result.over_time.metrics[0]
    holed = msgspec.structs.replace(first, baseline=(None, *first.baseline[1:]))
    over_time = msgspec.structs.replace(result.over_time, metrics=(holed, *result.over_time.metrics[1:]))
    report = render_inspect(msgspec.structs.replace(result, over_time=over_time))
    assert f"{first.name} 1/4" in report and "unknown" in report


def test_box_line_marks_quantiles():
    stats = {"p5": 0.0, "p25": 2.5, "p50": 5.0, "p75": 7.5, "p95": 10.0}
    line = box_line(stats, 0.0, 10.0, 11)
    assert line[0] == "|" and line[-1] == "|" and line[5] == "M" and "[" in line and "]" in line
    assert box_line({"p5": math.nan}, 0, 1, 5) == "?    "


def test_distribution_chart_fits_the_width():
    s = {"p5": 1.0, "p25": 2.0, "p50": 3.0, "p75": 4.0, "p95": 5.0}
    text = distribution_chart([("a very long measure name", s, s)], "ms", width=80)
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("lens_run", [inference_run, training_run, fleet_run])
def test_runs_without_samples_give_unknown_not_zero(lens_run):
    full = lens_run("b", run_id=1)
    empty = RunRecord(
        lens=full.lens,
        label="empty",
        dimensions=dict(full.dimensions),
        window=dict(full.window),
        meta=dict(full.meta),
        id=2,
    )
    from lenses import builtin_lens

    accepts = {d: "testing an empty run" for d in builtin_lens(full.lens).must_match}
    result = compare([full], [empty], accepts=accepts)
    doc = result.to_json()
    json.dumps(doc, allow_nan=False)
    assert doc["comparable"]
    assert doc["primary"]["candidate"] is None and doc["primary"]["delta"] is None
    assert doc["primary"]["effect"]["verdict"] is None
    assert "unknown" in render_comparison(result)


def test_hostile_strings_are_shown_not_interpreted():
    b = inference_run("b\x1b[2J[bold red]boom[/]", run_id=None)
    c = inference_run("c", run_id=2, engine_revision="v1\x1b]0;pwned\x07")
    b.dimensions["note"] = Dimension("[link=http://x]click[/link]\r\nfake line")
    text = render_comparison(compare([b], [c]))
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert "\\x1b" in text
    assert "fake line" not in text.split("\n")[0]
    assert all(not line.startswith("fake line") for line in text.splitlines())


def test_over_time_with_too_few_items_says_so():
    result = inspect([training_run("b", steps=3, run_id=1)], [training_run("c", steps=3, run_id=2)], windows=8)
    assert result.over_time.metrics == ()
    assert "too few items per run for 8 windows (the shortest run has 3)" in render_inspect(result)
