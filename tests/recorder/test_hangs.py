"""The hang watchdog: a step that never ends is snapshotted while it is open (with every
thread's stack and the open phase), once, and again when it ends; the threshold is fixed
or derived from the history; the watchdog runs on its own thread."""

from __future__ import annotations

import threading
import time

import pytest

from workbench.recorder import Recorder
from workbench.recorder.config import RecorderConfig
from workbench.recorder.trigger import HangRule

from .helpers import load


def _steps(rec, clock, n, ms=10.0):
    for _ in range(n):
        with rec.step():
            with rec.phase("input"):
                clock.advance_ms(ms / 2)
            with rec.phase("compute"):
                clock.advance_ms(ms / 2)
        clock.advance_ms(0.01)


def _wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _paths(rec, reason):
    return [p for p in rec.stats()["snapshot_paths"] if p.endswith(f"-{reason}.json")]


def test_an_open_step_past_the_threshold_is_snapshotted_once_and_again_when_it_ends(make_recorder, clock):
    rec = make_recorder(hang_after_s=0.3, start_threads=False)  # the test drives the watchdog's checks
    dog = rec._watchdog
    _steps(rec, clock, 40)
    step = rec.step().__enter__()
    with rec.phase("input"):
        clock.advance_ms(5)
    phase = rec.phase("allreduce").__enter__()
    clock.advance_ms(200)
    dog.check(clock.now)
    assert dog.hangs == 0  # 205 ms open: not yet
    clock.advance_ms(200)
    dog.check(clock.now)
    assert dog.hangs == 1
    _wait_for(lambda: _paths(rec, "hang"))
    doc = load(_paths(rec, "hang")[0])
    assert doc["window"]["kind"] == "incident" and doc["window"]["snapshot_reason"] == "hang"
    assert doc["window"]["incident_seq"] == 40 and doc["window"]["threshold_ms"] == 300.0
    trig = doc["trigger"]
    assert trig["kind"] == "hang" and trig["span"] == "step" and trig["seq"] == 40
    assert trig["open_ms"] == pytest.approx(405.0) and trig["phase"] == "allreduce"
    assert trig["phase_open_ms"] == pytest.approx(400.0)
    at = doc["at_snapshot"]
    assert at["open_span"]["seq"] == 40 and at["open_span"]["open_s"] == pytest.approx(0.405)
    assert at["open_span"]["phases_done"] == [["input", pytest.approx(5.0)]]
    assert at["open_phase"]["name"] == "allreduce" and at["last_closed_seq"] == 39
    assert len(doc["samples"]) == 40  # the retained window: every closed step, not the open one
    # The test's own thread holds the open step: it is marked, its stack innermost first.
    [mine] = [t for t in at["threads"] if t["workload"]]
    assert mine["name"] == threading.current_thread().name
    assert mine["frames"][0]["function"].startswith("test_an_open_step_past_the_threshold")
    for _ in range(5):  # still open: no second hang snapshot
        clock.advance_ms(100)
        dog.check(clock.now)
    assert dog.hangs == 1
    phase.__exit__(None, None, None)
    clock.advance_ms(10)
    step.__exit__(None, None, None)
    dog.check(clock.now)
    _wait_for(lambda: _paths(rec, "hang-ended"))
    ended = load(_paths(rec, "hang-ended")[0])
    assert ended["trigger"]["kind"] == "hang ended" and ended["trigger"]["duration_ms"] == pytest.approx(915.0)
    assert ended["samples"][-1]["step"] == 40 and ended["samples"][-1]["step_ms"] == pytest.approx(915.0)
    kinds = [e["kind"] for e in ended["recorder"]["events"]]
    assert kinds.count("hang") == 1 and kinds.count("hang ended") == 1


def test_a_step_that_ended_is_never_a_hang_however_long_the_loop_waits_after_it(make_recorder, clock):
    rec = make_recorder(hang_after_s=0.3, start_threads=False)
    _steps(rec, clock, 5)
    clock.advance_ms(10_000)  # evaluation, a checkpoint: outside any step
    rec._watchdog.check(clock.now)
    rec._watchdog.check(clock.now)
    assert rec._watchdog.hangs == 0 and rec.stats()["snapshots_written"] == 0


def test_hangs_are_budgeted(make_recorder, clock):
    rec = make_recorder(hang_after_s=0.1, max_hangs=1, start_threads=False)
    dog = rec._watchdog
    for _ in range(2):
        with rec.step():
            clock.advance_ms(200)
            dog.check(clock.now)
        dog.check(clock.now)  # the end is seen
    assert dog.hangs == 1 and dog.suppressed == 1
    assert rec.stats()["watchdog"]["suppressed"] == 1


def test_the_default_threshold_is_k_times_the_median_with_a_floor(make_recorder, clock, monkeypatch):
    rule = HangRule()
    assert (rule.k, rule.floor_s) == (10.0, 60.0)
    assert rule.threshold_s(None) == 60.0
    assert rule.threshold_s(2e9) == 60.0  # 10 x 2 s is under the floor
    assert rule.threshold_s(30e9) == 300.0
    monkeypatch.delenv("WB_RECORDER_HANG_AFTER_S", raising=False)
    rec = make_recorder(start_threads=False)
    dog = rec._watchdog
    assert dog.threshold_ns(0) == 60e9 and "at least 60 s" in rec.stats()["watchdog"]["rule"]
    _steps(rec, clock, 64, ms=9_000.0)  # the trigger's median: 9 s
    assert dog.threshold_ns(0) == pytest.approx(90e9)
    assert "median 9e+03 ms" in dog.describe(0)
    assert rec.stats()["config"]["hang_rule"].startswith("open longer than 10x")


def test_the_threshold_from_the_environment_and_off(monkeypatch):
    monkeypatch.setenv("WB_RECORDER_HANG_AFTER_S", "2.5")
    assert RecorderConfig().resolved_hang_after_s() == 2.5
    assert RecorderConfig(hang_after_s=1.0).resolved_hang_after_s() == 1.0  # the argument wins
    monkeypatch.setenv("WB_RECORDER_HANG_AFTER_S", "off")
    assert RecorderConfig().resolved_hang_after_s() is False
    monkeypatch.setenv("WB_RECORDER_HANG_AFTER_S", "soon")  # not a number: derived, never raised
    assert RecorderConfig().resolved_hang_after_s() is None
    assert RecorderConfig(watch_hangs=False).resolved_hang_after_s() is False
    with pytest.raises(ValueError):
        RecorderConfig(hang_after_s=0)


def test_watch_hangs_off_means_no_watchdog(make_recorder):
    rec = make_recorder(watch_hangs=False)
    assert rec._watchdog is None and "watchdog" not in rec.stats()
    assert rec.stats()["config"]["hang_rule"] == "off"


def stuck_in_storage_read(out_dir, seen: list) -> None:
    """Blocks (in a named function) until the recorder has written the hang snapshot."""
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        found = sorted(out_dir.glob("*-hang.json"))
        if found:
            seen.extend(found)
            return
        time.sleep(0.02)


def test_a_loop_that_hangs_in_a_named_function_is_snapshotted_while_it_hangs(tmp_path, monkeypatch):
    monkeypatch.delenv("WB_RECORDER", raising=False)
    out = tmp_path / "snaps"
    rec = Recorder(
        out_dir=out, hang_after_s=0.3, gpu_interval_s=None, stack_hz=None, handle_signals=False, control=False
    )
    seen: list = []
    try:
        for i in range(40):
            with rec.step():
                with rec.phase("input"):
                    if i == 32:
                        stuck_in_storage_read(out, seen)
                with rec.phase("compute"):
                    pass
        assert seen, "no hang snapshot appeared while the step was open"
        _wait_for(lambda: _paths(rec, "hang-ended"))
    finally:
        rec.close()
    doc = load(seen[0])
    at = doc["at_snapshot"]
    assert at["open_span"]["seq"] == 32 and at["open_phase"]["name"] == "input"
    [loop] = [t for t in at["threads"] if t["workload"]]
    innermost = next(f for f in loop["frames"] if not f.get("stdlib"))
    assert innermost["function"] == "stuck_in_storage_read" and innermost["file"].endswith("test_hangs.py")
    assert "opens and closes the spans" in at["workload_how"]
    stats = rec.stats()["watchdog"]
    assert stats["hangs"] == 1 and stats["status"] == "stopped" and stats["cpu_s"] >= 0


def test_the_watchdog_runs_on_its_own_thread(make_recorder):
    rec = make_recorder(hang_after_s=5.0)
    names = {t.name for t in threading.enumerate()}
    assert "wb-recorder-watchdog" in names
    assert rec._watchdog.period_s() == 1.0  # a quarter of 5 s, at most 1 s
    rec.close()
    assert rec.stats()["watchdog"]["status"] == "stopped"
