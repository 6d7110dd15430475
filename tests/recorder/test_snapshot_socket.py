"""``wb snapshot PID``: a snapshot on request from another shell, refused for a process
without a recorder and for another user's process; the socket's directory and the
caller's uid are checked (no ptrace, no root)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.recorder import snapshot_socket

from .helpers import load
from .test_termination import _ready, _start

REPO = Path(__file__).resolve().parents[2]


def _wb(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "WB_RECORDER"}
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args], capture_output=True, text=True, cwd=REPO, env=env, timeout=60
    )


def test_wb_snapshot_asks_a_running_loop_for_a_snapshot(tmp_path):
    proc = _start(tmp_path / "snaps")
    try:
        _ready(proc)
        out = _wb("snapshot", str(proc.pid), "--wait", "20")
        assert out.returncode == 0, out.stderr
        [path] = out.stdout.split()
        doc = load(path)
        assert doc["window"]["snapshot_reason"] == "on request" and doc["trigger"] == {"kind": "on request"}
        at = doc["at_snapshot"]
        assert at["pid"] == proc.pid and at["reason"] == "on request"
        [loop] = [t for t in at["threads"] if t["workload"]]
        assert "train_until_stopped" in [f["function"] for f in loop["frames"]]
        assert oct(os.stat(path).st_mode & 0o777) == "0o600"  # nobody else can read it
        again = _wb("snapshot", str(proc.pid), "--json")
        assert again.returncode == 0 and json.loads(again.stdout)["pid"] == proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    sock = snapshot_socket.socket_path(snapshot_socket.control_dir(), proc.pid)
    assert proc.returncode == -15 and not sock.exists()  # removed on the way out, even by a default SIGTERM


def test_refused_for_a_process_without_a_recorder_and_for_no_process():
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        out = _wb("snapshot", str(sleeper.pid))
        assert out.returncode == 2 and "has no recorder listening" in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
    finally:
        sleeper.kill()
        sleeper.wait()
    out = _wb("snapshot", str(sleeper.pid))
    assert out.returncode == 2 and f"no process {sleeper.pid}" in out.stderr
    assert _wb("snapshot", "0").returncode == 2


@pytest.mark.skipif(
    os.getuid() != 0 or shutil.which("sleep") is None, reason="needs root to start another user's process"
)
def test_refused_for_another_users_process():
    other = subprocess.Popen(["sleep", "30"], user="nobody")
    try:
        out = _wb("snapshot", str(other.pid))
        assert out.returncode == 3 and "not to you" in out.stderr and "asks only your own" in out.stderr
    finally:
        other.kill()
        other.wait()


def test_the_server_refuses_a_caller_of_another_uid(tmp_path):
    asked = []
    server = snapshot_socket.ControlServer(lambda wait: asked.append(wait) or ["/x"], lambda exc, where: None)
    server.start()
    try:
        assert server.status.startswith("listening")
        server.uid = os.getuid() + 1  # as if this process were another user's: the kernel's peer uid decides
        with pytest.raises(snapshot_socket.Refused, match="refused: uid"):
            snapshot_socket.request_snapshot(os.getpid(), 1.0)
        assert asked == [] and server.refused == 1
        server.uid = os.getuid()
        assert snapshot_socket.request_snapshot(os.getpid(), 1.0) == ["/x"] and asked == [1.0]
    finally:
        server.stop()
    assert not snapshot_socket.socket_path(snapshot_socket.control_dir(), os.getpid()).exists()


@pytest.mark.skipif(
    os.getuid() != 0 or not Path("/usr/bin/python3").exists(), reason="needs root to run a client as another user"
)
def test_another_user_cannot_reach_the_socket(tmp_path, monkeypatch):
    runtime = Path("/tmp") / f"wb-ctl-{os.getpid()}"  # outside pytest's 0700 temporary tree
    runtime.mkdir(mode=0o755)
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        server = snapshot_socket.ControlServer(lambda wait: ["/x"], lambda exc, where: None)
        server.start()
        try:
            assert server.path is not None and oct(server.path.parent.stat().st_mode & 0o777) == "0o700"
            probe = (
                "import socket,sys\n"
                "s = socket.socket(socket.AF_UNIX)\n"
                "try:\n    s.connect(sys.argv[1]); print('connected')\n"
                "except PermissionError: print('denied')\n"
            )
            out = subprocess.run(
                ["/usr/bin/python3", "-c", probe, str(server.path)], capture_output=True, text=True, user="nobody"
            )
            assert out.stdout.strip() == "denied", out.stderr
        finally:
            server.stop()
    finally:
        shutil.rmtree(runtime)


def test_an_unsafe_directory_is_refused_by_server_and_client(tmp_path, monkeypatch):
    runtime = tmp_path / "run"
    runtime.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    shared = runtime / "wb-recorder"
    shared.mkdir(mode=0o700)
    os.chmod(shared, 0o755)
    assert "group or others may enter it" in snapshot_socket.unsafe(shared, create=False)
    server = snapshot_socket.ControlServer(lambda wait: [], lambda exc, where: None)
    server.start()
    assert server.status.startswith("off:") and "0755" in server.status and not list(shared.iterdir())
    with pytest.raises(snapshot_socket.Refused, match="refusing to use it"):
        snapshot_socket.request_snapshot(os.getpid(), 1.0)
    shared.rmdir()
    shared.symlink_to(tmp_path)
    assert "symlink" in snapshot_socket.unsafe(shared, create=False)
    if os.getuid() == 0:
        shared.unlink()
        shared.mkdir(mode=0o700)
        os.chown(shared, 65534, 65534)
        assert "belongs to uid 65534" in snapshot_socket.unsafe(shared, create=False)


def test_the_socket_is_the_processs_and_a_dead_processs_socket_is_swept(tmp_path, monkeypatch):
    runtime = tmp_path / "run"
    runtime.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    directory = snapshot_socket.control_dir()
    directory.mkdir(mode=0o700)
    dead = subprocess.run(["true"]).returncode  # a pid that has exited
    stale = directory / "999999999.sock"
    stale.write_text("")
    server = snapshot_socket.ControlServer(lambda wait: [], lambda exc, where: None)
    server.start()
    try:
        assert not stale.exists() and dead == 0
        conn = socket.socket(socket.AF_UNIX)
        conn.connect(str(server.path))
        assert snapshot_socket.peer(conn) == (os.getpid(), os.getuid())
        conn.close()
    finally:
        server.stop()


def test_a_forked_child_answers_on_its_own_socket_and_leaves_its_parents(tmp_path):
    from workbench.recorder import Recorder

    rec = Recorder(out_dir=tmp_path, gpu_interval_s=None, stack_hz=None, host_interval_s=None, handle_signals=False)
    try:
        parent_sock = snapshot_socket.socket_path(snapshot_socket.control_dir(), os.getpid())
        assert parent_sock.exists()
        pid = os.fork()
        if pid == 0:  # the child: no test framework from here on, only an exit status
            code = 1
            try:
                for _ in range(20):
                    with rec.step():
                        pass
                rec._seal(rec.clock())  # the child's threads and socket start at its next seal
                mine = snapshot_socket.socket_path(snapshot_socket.control_dir(), os.getpid())
                paths = snapshot_socket.request_snapshot(os.getpid(), 20.0) if mine.exists() else []
                code = 0 if len(paths) == 1 and parent_sock.exists() else 3
                rec.close()
                code = code or (4 if mine.exists() else 0)
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert parent_sock.exists()  # the child closed its own socket, not its parent's
        assert snapshot_socket.request_snapshot(os.getpid(), 20.0)
    finally:
        rec.close()
