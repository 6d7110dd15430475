"""The host streams: sampled stacks (interned, bounded), CPU and memory, GC pauses, and
snapshots that say what they hold (incident or steady, sampler settings, what was dropped)."""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
import time
from pathlib import Path

import msgspec
import pytest

from workbench.errors import BadInput
from workbench.importers.native import read_capture
from workbench.recorder import TriggerRule
from workbench.recorder.capture import iter_json
from workbench.recorder.host import GC_FRAME, GcWatcher, StackTables
from workbench.recorder.records import Capture

from .helpers import assert_no_nan, load, record_steps

LINUX = sys.platform.startswith("linux")


def waiting_in_a_named_function(ready: threading.Event, stop: threading.Event) -> None:
    ready.set()
    stop.wait(10)


@pytest.fixture
def worker():
    """A workload thread parked in ``waiting_in_a_named_function``."""
    ready, stop = threading.Event(), threading.Event()
    t = threading.Thread(target=waiting_in_a_named_function, args=(ready, stop), name="loader")
    t.start()
    ready.wait(5)
    yield t
    stop.set()
    t.join(5)


def _host_recorder(make_recorder, **fields):
    fields.setdefault("stack_hz", 100.0)
    fields.setdefault("host_interval_s", 0.25)
    return make_recorder(start_threads=False, **fields)


def test_stacks_are_interned_and_bounded():
    tables = StackTables(max_frames=64, max_stacks=4, max_depth=3)

    def inner():
        return sys._getframe()

    def outer():
        return inner()

    a = tables.stack_of(outer())
    b = tables.stack_of(outer())
    assert a == b  # the same stack, interned once
    names = [tables.frames[f][0] for f in tables.stacks[a]]
    assert names == ["inner", "outer", "test_stacks_are_interned_and_bounded"]  # innermost first, 3 deep
    assert tables.truncated == 2  # the outer frames beyond max_depth were cut, and counted
    for i in range(5):  # new stacks until the table is full: then the overflow stack, counted
        ns: dict = {"sys": sys}
        exec(f"def f{i}():\n    return sys._getframe()", ns)
        tables.stack_of(ns[f"f{i}"]())
    assert len(tables.stacks) == 4 and tables.stacks_over_limit > 0


def test_a_thread_is_sampled_in_its_named_function_and_the_recorders_threads_are_not(make_recorder, clock, worker):
    rec = _host_recorder(make_recorder)
    sampler = rec._host_sampler
    for _ in range(3):
        clock.advance_ms(10)
        sampler.sample_stacks(rec._now())
    fake_own = threading.Thread(target=lambda: time.sleep(0.2), name="wb-recorder-test")
    fake_own.start()
    sampler.sample_stacks(rec._now())
    fake_own.join()
    doc = load(rec.snapshot("x"))
    host = doc["host"]
    names = {t["name"] for t in host["threads"]}
    assert "loader" in names and "wb-recorder-test" not in names
    loader = next(t["id"] for t in host["threads"] if t["name"] == "loader")
    stacks, frames = host["stacks"]["stacks"], host["stacks"]["frames"]
    rows = [r for r in host["stacks"]["rows"] if r[1] == loader]
    assert len(rows) == 4
    on_stack = [frames[f][0] for f in stacks[rows[0][2]]]
    assert on_stack[0] == "wait" and "waiting_in_a_named_function" in on_stack  # innermost first
    assert on_stack[-1] == "_bootstrap"
    assert host["stacks"]["rate_hz"] == 100.0 and "unknown" in host["stacks"]["gil"]
    assert doc["recorder"]["config"]["stack_hz"] == 100.0 and doc["recorder"]["config"]["max_depth"] == 48
    assert set(host["stacks"]["dropped"]) >= {
        "evicted_rows",
        "stacks_over_limit",
        "frames_over_limit",
        "truncated_stacks",
    }
    assert_no_nan(doc)


@pytest.mark.skipif(not LINUX, reason="/proc is Linux")
def test_cpu_and_memory_rows_for_the_process_and_each_thread(make_recorder, clock, worker):
    rec = _host_recorder(make_recorder)
    sampler = rec._host_sampler
    sampler.sample_stacks(rec._now())  # the threads get their slots
    for _ in range(3):
        clock.advance_ms(250)
        sampler.sample_host(rec._now())
        sum(i * i for i in range(20000))
    doc = load(rec.snapshot("x"))
    cpu = doc["host"]["cpu"]
    fields = cpu["fields"]
    rows = [dict(zip(fields, r)) for r in cpu["rows"]]
    process = [r for r in rows if r["thread"] == -1]
    assert len(process) == 3
    assert process[0]["rss_bytes"] > 1 << 20 and process[-1]["cpu_user_s"] >= process[0]["cpu_user_s"]
    assert all(isinstance(r["voluntary_switches"], int) for r in process)
    threads = [r for r in rows if r["thread"] >= 0]
    ids = {t["name"]: t["id"] for t in doc["host"]["threads"]}
    # Every live workload thread has its rows (a thread of another test may have ended since).
    assert ids["loader"] in {r["thread"] for r in threads} <= set(ids.values())
    assert all(r["rss_bytes"] is None for r in threads)  # per-thread RSS does not exist: unknown, not zero
    # Its own budget line, apart from the spans and the GPU samples.
    assert doc["recorder"]["cpu"]["max_bytes"] == 2 << 20 and doc["recorder"]["stacks"]["max_bytes"] == 4 << 20


def test_gc_pauses_are_recorded_and_the_callback_goes_with_the_recorder(make_recorder):
    rec = make_recorder()
    watcher = rec._gc_watch
    assert watcher._callback in gc.callbacks
    gc.collect()
    doc = load(rec.snapshot("x"))
    section = doc["host"]["gc"]
    assert section["status"] == "watched" and section["pauses_seen"] >= 1
    row = dict(zip(section["fields"], section["rows"][-1]))
    assert row["generation"] == 2 and row["duration_ms"] >= 0
    rec.close()
    assert watcher._callback not in gc.callbacks


def test_a_sample_inside_the_gc_callback_is_the_collectors():
    tables = StackTables(max_frames=64, max_stacks=64, max_depth=8)
    seen = []
    # A ring whose append samples the stack it is called from: inside the GC callback.
    watcher = GcWatcher(
        ring=type("R", (), {"append": lambda self, row: seen.append(tables.stack_of(sys._getframe()))})(),
        clock_ns=time.perf_counter_ns,
        on_fault=lambda exc, where: None,
    )
    assert tables._frame_ids[id(GcWatcher._callback.__code__)] == 1
    assert tables.frames[1][0] == GC_FRAME
    watcher._callback("start", {"generation": 0})
    watcher._callback("stop", {"generation": 0, "collected": 0, "uncollectable": 0})
    [sid] = seen
    assert GC_FRAME in [tables.frames[f][0] for f in tables.stacks[sid]]


def test_an_incident_snapshot_is_an_incident_window_and_a_boundary_is_steady(make_recorder, clock):
    rec = make_recorder(trigger=TriggerRule(k_median=4.0, cooldown_s=0.0), incident_window_s=0.2)
    record_steps(rec, clock, [10.0] * 40)
    rec.boundary("epoch 1")
    record_steps(rec, clock, [10.0] * 10 + [500.0])
    rec.close()
    docs = [load(p) for p in rec.stats()["snapshot_paths"]]
    boundary, incident = docs
    assert boundary["window"]["kind"] == "steady" and "trigger_rule" not in boundary["window"]
    window = incident["window"]
    assert window["kind"] == "incident"
    assert (
        window["threshold_ms"] == pytest.approx(40.0) and window["threshold_ms"] == incident["trigger"]["threshold_ms"]
    )
    assert window["trigger_rule"] == incident["trigger"]["rule"]
    assert read_capture(Path(rec.stats()["snapshot_paths"][1])).window_kind == "incident"


def test_a_snapshot_with_a_host_section_decodes_to_records_and_back(make_recorder, clock, worker):
    rec = _host_recorder(make_recorder)
    sampler = rec._host_sampler
    for _ in range(3):
        clock.advance_ms(10)
        sampler.sample_stacks(rec._now())
        sampler.sample_host(rec._now())
    record_steps(rec, clock, [10.0] * 5)
    gc.collect()
    path = rec.snapshot("x")
    raw = path.read_bytes()
    capture = msgspec.convert(json.loads(raw), Capture)
    assert "".join(iter_json(capture, chunk=4)).encode() == raw
    assert capture.host.stacks.status == "not started" and len(capture.host.stacks.rows) >= 3


def test_the_importer_keeps_the_host_section_as_tables(make_recorder, clock, worker):
    rec = _host_recorder(make_recorder)
    sampler = rec._host_sampler
    for _ in range(4):
        clock.advance_ms(10)
        sampler.sample_stacks(rec._now())
    sampler.sample_host(rec._now())
    record_steps(rec, clock, [10.0] * 5)
    run = read_capture(rec.snapshot("x"))
    samples = run.tables["host_stack_samples"]
    assert len(samples["t"]) >= 4 and set(samples) == {"t", "thread", "stack"}
    assert "waiting_in_a_named_function" in run.tables["host_frames"]["function"].tolist()
    assert run.meta["host"]["stacks"]["rate_hz"] == 100.0
    assert "host" not in run.meta.get("extra", {})  # the bulk is in tables, not metadata
    assert run.sample_count == 5


@pytest.mark.parametrize(
    "edit, where",
    [
        (lambda h: h["stacks"]["rows"].append([1.0, 0, 999]), "host.stacks.rows["),
        (lambda h: h["stacks"]["stacks"].append([999]), "host.stacks.stacks["),
        (lambda h: h["stacks"]["rows"].append([1.0, 0]), "host.stacks.rows["),
        (lambda h: h["stacks"]["rows"].append(["x", 0, 0]), "host.stacks.rows["),
        (lambda h: h["threads"].append({"id": 7, "name": "x"}), "host.threads["),
        (lambda h: h["gc"].update(fields=["when"]), "host.gc.fields"),
        (lambda h: h.update(stacks=[]), "host.stacks"),
    ],
)
def test_a_bad_host_section_names_the_file_and_the_place(make_recorder, clock, worker, tmp_path, edit, where):
    rec = _host_recorder(make_recorder)
    rec._host_sampler.sample_stacks(rec._now())
    gc.collect()
    record_steps(rec, clock, [10.0] * 3)
    doc = load(rec.snapshot("x"))
    edit(doc["host"])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(BadInput) as info:
        read_capture(bad)
    assert "bad.json" in str(info.value) and where in str(info.value)


def test_off_streams_say_so_and_cost_no_thread(make_recorder):
    before = threading.active_count()
    # (the hang watchdog is a thread of its own: off here, test_hangs.py)
    rec = make_recorder(stack_hz=None, host_interval_s=None, gc_pauses=False, watch_hangs=False)
    assert threading.active_count() == before and rec._host_sampler is None
    doc = load(rec.snapshot("x"))
    assert "host" not in doc and "stacks" not in doc["recorder"]["config"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_keeps_one_gc_watcher_of_its_own(make_recorder):
    rec = make_recorder()
    parent_cb = rec._gc_watch._callback
    pid = os.fork()
    if pid == 0:  # the child: the parent's callback is gone, its own is in
        ok = parent_cb not in gc.callbacks and rec._gc_watch._callback in gc.callbacks
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


@pytest.mark.parametrize(
    "fields", [{"stack_hz": 0}, {"stack_hz": 5000}, {"host_interval_s": 0.001}, {"max_depth": 0}, {"max_stacks": 1}]
)
def test_sampler_settings_are_checked_at_construction(fields):
    from workbench.recorder import RecorderConfig

    with pytest.raises(ValueError):
        RecorderConfig(**fields)
