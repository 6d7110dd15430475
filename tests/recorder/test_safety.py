"""Safe in production: recorder failures never reach the workload; thread- and
fork-safe; disabled cleanly by an environment variable; light to import."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from workbench.recorder import Recorder, TriggerRule

from .helpers import load, record_steps

REPO = Path(__file__).resolve().parents[2]


def test_import_is_light_and_recording_loads_nothing_heavy(tmp_path):
    code = (
        "import sys\n"
        "import workbench.recorder as r\n"
        "rec = r.Recorder(gpu_interval_s=None)\n"
        "for i in range(100):\n"
        "    with rec.step():\n"
        "        with rec.phase('input'): pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "    ('textual', 'sqlmodel', 'sqlalchemy', 'scipy', 'store', 'pynvml', 'cupy', 'numpy', 'rich'))\n"
        "print(heavy)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("WB_RECORDER", "WB_STORE")}
    env["WB_RECORDER_DIR"] = str(tmp_path)  # a slow step on a busy machine may snapshot: not into the repo
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_broken_clock_never_reaches_the_workload(make_recorder, clock):
    rec = make_recorder()

    def broken() -> int:
        raise OSError("clock gone")

    rec._set_clock(broken)
    done = 0
    for _ in range(10):
        with rec.step():
            with rec.phase("input"):
                done += 1
    assert done == 10
    stats = rec.stats()
    assert stats["faults"] == 20 and stats["fault_places"] == {"clock": 20}
    assert "clock gone" in stats["last_fault"]


def test_a_failing_ring_and_a_failing_snapshot_are_counted(make_recorder, clock, monkeypatch):
    rec = make_recorder(trigger=TriggerRule(slower_than_ms=50.0, k_median=None))

    def explode(row):
        raise MemoryError("no room")

    monkeypatch.setattr(rec._spans, "append", explode)
    with rec.step():
        clock.advance_ms(1)
    rec.value("loss", 1.0)
    rec.record_step(clock.now, clock.now + 1)
    assert rec.stats()["faults"] == 3
    monkeypatch.undo()

    def no_take(*a, **k):
        raise RuntimeError("take failed")

    monkeypatch.setattr(rec._spans, "view", no_take)
    with rec.step():
        clock.advance_ms(100)  # slow: the trigger's snapshot fails inside the recorder
    assert rec.snapshot("x") is None
    stats = rec.stats()
    assert stats["fault_places"]["snapshot"] == 2
    assert stats["in_flight"] == 0  # a failed incident gives its slot back


def test_unwritable_directory_and_bad_store_are_faults_not_exceptions(make_recorder, clock, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    rec = make_recorder(out_dir=blocker / "snaps")
    record_steps(rec, clock, [5.0] * 3)
    assert rec.snapshot("x") is None
    assert rec.stats()["fault_places"] == {"snapshot write": 1}

    rec2 = make_recorder(store_url=f"sqlite:///{blocker}/no/such/dir/wb.sqlite")
    record_steps(rec2, clock, [5.0] * 3)
    path = rec2.snapshot("x")
    assert path is not None and path.exists()  # the file is kept for a manual import
    assert rec2.stats()["fault_places"] == {"store import": 1}


def test_the_workloads_own_exception_propagates_unchanged(make_recorder, clock):
    rec = make_recorder()

    class WorkloadError(Exception):
        pass

    with pytest.raises(WorkloadError):
        with rec.step():
            with rec.phase("compute"):
                raise WorkloadError
    assert rec.stats()["faults"] == 0
    rec.snapshot("x")


def test_bad_names_and_too_many_names_are_contained(make_recorder, clock):
    rec = make_recorder(max_names=8)
    with rec.step():
        with rec.phase(["unhashable"]):  # type: ignore[arg-type]
            pass
        for i in range(20):
            with rec.phase(f"p{i}"):
                clock.advance_ms(1)
        rec.value("loss", "not a number")  # type: ignore[arg-type]
    stats = rec.stats()
    assert stats["names_dropped"] >= 12
    assert stats["fault_places"] == {"phase": 1, "value": 1}
    doc = load(rec.snapshot("x"))
    # "ok" and p0..p5 fill 7 of the 8 names; "other" is the 8th and takes p6..p19.
    assert doc["samples"][0]["other_ms"] == pytest.approx(14.0)


def test_disabled_by_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("WB_RECORDER", "off")
    before = threading.active_count()
    rec = Recorder(out_dir=tmp_path, gpu_interval_s=0.01)
    with rec.step() as step:
        with rec.phase("input"):
            step.value("tokens", 3)
        with step.phase("x"):
            pass
    with rec.request() as req:
        req.value("ok", 1)
    rec.record_step(0, 1)
    rec.mark("m")
    assert rec.snapshot("x") is None
    rec.boundary("b")
    rec.close()
    assert rec.enabled is False and rec.stats() == {"enabled": False}
    assert threading.active_count() == before
    assert not any(tmp_path.iterdir())


def test_many_threads_record_requests_concurrently(make_recorder):
    rec = Recorder(gpu_interval_s=None, lens="inference", trigger=None, out_dir=make_recorder().config.out_dir)
    errors = []

    def serve(worker: int) -> None:
        try:
            for _ in range(1500):
                with rec.request() as req:
                    with req.phase("prefill"):
                        pass
                    req.value("prompt_tokens", worker)
        except Exception as exc:  # noqa: BLE001  # pragma: no cover - would fail the test
            errors.append(exc)

    threads = [threading.Thread(target=serve, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    doc = load(rec.snapshot("x"))
    rec.close()
    samples = doc["samples"]
    assert len(samples) == 8 * 1500
    assert len({s["id"] for s in samples}) == len(samples)
    assert all("prefill_ms" in s for s in samples)
    assert sorted({s["prompt_tokens"] for s in samples}) == list(range(8))
    assert rec.stats()["faults"] == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_child_records_on_its_own(make_recorder, clock, tmp_path):
    rec = make_recorder(dimensions={"model": "m"})
    record_steps(rec, clock, [5.0] * 10)
    rec.snapshot("parent before fork")  # the writer thread exists now
    child_dir = tmp_path / "child"
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            record_steps(rec, clock, [7.0] * 4)
            rec.config.__dict__["out_dir"] = child_dir  # frozen dataclass: test-only redirect
            path = rec.snapshot("child")
            doc = load(path)
            ok = (
                [s["step_ms"] for s in doc["samples"]] == [7.0] * 4
                and doc["recorder"]["forked_from_pid"] == os.getppid()
                and rec.stats()["faults"] == 0
            )
            code = 0 if ok else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert len(list(child_dir.glob("*.json"))) == 1
    record_steps(rec, clock, [5.0] * 2)  # the parent is unaffected
    doc = load(rec.snapshot("parent after fork"))
    assert len(doc["samples"]) == 12


def test_pending_snapshot_is_finished_at_exit(tmp_path):
    code = (
        "from workbench.recorder import Recorder\n"
        f"rec = Recorder(out_dir={str(tmp_path)!r}, gpu_interval_s=None)\n"
        "for i in range(50):\n"
        "    with rec.step(): pass\n"
        "rec.snapshot('at exit', wait=False)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("WB_RECORDER", "WB_STORE")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    [path] = tmp_path.glob("*.json")
    assert len(load(path)["samples"]) == 50
