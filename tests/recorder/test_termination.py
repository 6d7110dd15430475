"""On SIGTERM and SIGINT the recorder writes a termination snapshot, then the process ends
exactly as it would have without it (exit status, KeyboardInterrupt, an application's
handler still called); a recorder made off the main thread says it cannot install handlers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.recorder import termination

from .helpers import load

LOOP = Path(__file__).with_name("running_loop.py")
REPO = Path(__file__).resolve().parents[2]


def _start(out: Path, *flags: str, recorder: bool = True) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("WB_RECORDER", "WB_STORE")}
    if not recorder:
        env["WB_RECORDER"] = "off"
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, str(LOOP), str(out), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
    )
    return proc


def _ready(proc: subprocess.Popen) -> None:
    for _ in range(5):
        line = proc.stdout.readline()
        if line.strip() == "ready":
            return
        assert line, proc.stderr.read()
    raise AssertionError("the loop never became ready")


def _stop(procs: list[subprocess.Popen], sig: int) -> list[int]:
    for p in procs:
        _ready(p)
    for p in procs:
        p.send_signal(sig)
    return [p.wait(timeout=60) for p in procs]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_writes_a_termination_snapshot_and_the_process_ends_as_without_the_recorder(tmp_path, sig):
    with_rec, without = _start(tmp_path / "rec"), _start(tmp_path / "bare", recorder=False)
    codes = _stop([with_rec, without], sig)
    assert codes[0] == codes[1] == -sig  # died of the signal (Ctrl-C: KeyboardInterrupt, then SIGINT)
    if sig == signal.SIGINT:
        assert "KeyboardInterrupt" in with_rec.stderr.read()
    [path] = (tmp_path / "rec").glob("*-termination.json")
    doc = load(path)
    at = doc["at_snapshot"]
    assert at["reason"] == f"signal {signal.Signals(sig).name}" and doc["trigger"]["kind"] == "termination"
    assert len(doc["samples"]) >= 20
    [loop] = [t for t in at["threads"] if t["workload"]]
    names = [f["function"] for f in loop["frames"]]
    assert "train_until_stopped" in names and "_handler" not in names  # the interrupted frame, not the handler's
    assert not list((tmp_path / "rec").glob(".wb-snapshot-*"))  # nothing half-written


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_an_application_handler_is_chained_not_replaced(tmp_path, sig):
    with_rec, without = (
        _start(tmp_path / "rec", "--app-handler"),
        _start(tmp_path / "bare", "--app-handler", recorder=False),
    )
    codes = _stop([with_rec, without], sig)
    assert codes[0] == codes[1] == 7  # the application's handler decided: sys.exit(7)
    name = signal.Signals(sig).name
    assert (tmp_path / "rec" / f"app-handler-{name}").exists()
    assert len(list((tmp_path / "rec").glob("*-termination.json"))) == 1  # the exit adds none: already taken


def test_a_recorder_made_off_the_main_thread_says_it_cannot_install_handlers(tmp_path):
    proc = _start(tmp_path / "rec", "--recorder-in-thread")
    said = proc.stdout.readline()
    assert said.startswith("not installed") and "main thread" in said
    _ready(proc)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == -signal.SIGTERM
    assert not list((tmp_path / "rec").glob("*-termination.json"))


def test_an_uncaught_exception_leaves_an_exit_snapshot(tmp_path):
    code = (
        "from workbench.recorder import Recorder\n"
        f"rec = Recorder(out_dir={str(tmp_path)!r}, gpu_interval_s=None, stack_hz=None)\n"
        "for i in range(30):\n"
        "    with rec.step():\n"
        "        if i == 29: raise ValueError('bad batch')\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("WB_RECORDER", "WB_STORE")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env, timeout=60)
    assert out.returncode == 1 and "ValueError: bad batch" in out.stderr
    [path] = tmp_path.glob("*-termination.json")
    doc = load(path)
    assert doc["at_snapshot"]["reason"] == "exit: uncaught ValueError"
    assert doc["samples"][-1]["ok"] is False  # the step that raised


def test_handlers_are_put_back_when_the_last_recorder_closes(make_recorder):
    before = signal.getsignal(signal.SIGTERM)
    rec = make_recorder(handle_signals=True)
    assert rec.stats()["signals"].startswith("installed: SIGTERM, SIGINT")
    assert signal.getsignal(signal.SIGTERM) is termination._handler
    rec.close()
    assert signal.getsignal(signal.SIGTERM) == before


def test_an_ignored_signal_is_left_alone(make_recorder):
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        rec = make_recorder(handle_signals=True)
        assert "SIGINT ignored by the application, left alone" in rec.stats()["signals"]
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        rec.close()
    finally:
        signal.signal(signal.SIGINT, before)
