"""Reading host samples back: the frames that gained most samples in the slow window, CPU
and memory around the trigger, GC pauses over slow spans (wb show, wb inspect, the TUI)."""

from __future__ import annotations

import json

import msgspec
import pytest

from tests.conftest import run_wb
from workbench.compare.host_activity import HostReport, between, render_host, within_run
from workbench.importers.native import read_capture

from .synthetic import capture, write


def _run(tmp_path, name, **kw):
    return read_capture(write(tmp_path / f"{name}.json", capture(**kw)))


def test_the_stalled_function_is_the_top_moved_frame_within_the_incident(tmp_path):
    report = within_run(_run(tmp_path, "inc", incident=True, stall_function="wait_for_storage"))
    assert report.slow.startswith("1 span(s) at or above 100 ms") and report.slow_samples == 50
    assert report.normal_samples == 39
    top = report.moved[0]
    assert top.function == "wait_for_storage" and top.slow_self == 1.0 and top.normal_self == 0.0
    # train_step lost samples: it is not listed as a frame that gained.
    assert all(m.function != "train_step" for m in report.moved)
    slow, before = report.cpu
    assert slow.name == "slow spans" and slow.cpu_cores == pytest.approx(0.0, abs=0.05)  # the CPU idled
    assert before.cpu_cores == pytest.approx(1.0, abs=0.05)  # busy before the stall
    assert slow.threads == {"MainThread": pytest.approx(0.0, abs=1e-6)}
    assert slow.rss_end_bytes == 51 << 20


def test_gc_pauses_that_overlap_the_slow_spans(tmp_path):
    report = within_run(_run(tmp_path, "inc", incident=True, gc_in_slow=True))
    gc = report.gc
    assert (
        gc.pauses == 10
        and gc.pause_ms == pytest.approx(200.0, abs=0.01)
        and gc.slow_ms == pytest.approx(500.0, abs=0.01)
    )
    assert gc.normal_pause_ms == pytest.approx(0.2 * 4, abs=0.01) and gc.generations == {"0": 10}
    assert report.moved[0].function == "(garbage collection)"
    lines = render_host(report)
    assert any("gc: 10 pause(s) overlap the slow spans, 200.0 ms of 500.0 ms (40%)" in line for line in lines)


def test_a_steady_window_has_no_slow_window_and_says_so(tmp_path):
    report = within_run(_run(tmp_path, "normal", incident=False))
    assert report.normal_samples == 0 and report.moved[0].function == "train_step"
    assert report.gc is msgspec.UNSET  # no slow spans for pauses to overlap
    assert any("no trigger threshold" in n for n in report.notes)
    assert "hottest frames (no normal window)" in "\n".join(render_host(report))


def test_between_sides_the_candidates_slow_spans_against_the_baseline(tmp_path):
    base = _run(tmp_path, "normal", incident=False)
    cand = _run(tmp_path, "inc", incident=True, stall_function="wait_for_storage")
    report = between([base], [cand])
    assert report.moved[0].function == "wait_for_storage"
    assert report.normal_samples == 40 and report.slow_samples == 50
    assert HostReport.from_json(report.to_json()) == report
    assert (
        between(
            [base],
            [
                read_capture(
                    write(tmp_path / "plain.json", {k: v for k, v in capture(incident=True).items() if k != "host"})
                )
            ],
        )
        is None
    )


def test_the_lines_fit_80_columns_and_capture_strings_are_made_safe(tmp_path):
    evil = "read\x1b[31m_[bold]batch" + "x" * 120
    report = within_run(_run(tmp_path, "inc", incident=True, stall_function=evil))
    lines = render_host(report)
    assert all(len(line) <= 80 for line in lines)
    assert not any("\x1b" in line for line in lines) and any("read\\x1b[31m_[bold]batch" in line for line in lines)


@pytest.mark.store
def test_wb_show_and_inspect_print_the_host_side(tmp_path, sqlite_url):
    paths = [
        write(tmp_path / "a.json", capture(incident=False)),
        write(tmp_path / "b.json", capture(incident=True, stall_function="wait_for_storage")),
    ]
    assert run_wb("--store", sqlite_url, "import", *map(str, paths)).returncode == 0
    out = run_wb("--store", sqlite_url, "show", "2")
    assert out.returncode == 0, out.stderr
    assert (
        "host (flight recorder; observation, not cause)" in out.stdout and "wait_for_storage (loop.py:20)" in out.stdout
    )
    refused = run_wb("--store", sqlite_url, "inspect", "1", "--vs", "2", "--json")
    assert refused.returncode == 3 and "host_activity" not in json.loads(refused.stdout)  # steady vs incident: refused
    out = run_wb(
        "--store", sqlite_url, "inspect", "1", "--vs", "2", "--accept", "window", "--why", "incident vs normal"
    )
    assert out.returncode == 0, out.stderr
    assert "frames that gained most samples" in out.stdout and "wait_for_storage" in out.stdout
