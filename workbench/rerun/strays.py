"""What a rerun arm leaves behind, found and killed before the next arm starts.

Each arm runs in its own session and process group. When it has exited, what it
started may still run (``sleep 300 &``), and would measure itself into later arms. A
stray is found three ways (Linux, through ``/proc``):

- a member of the arm's process group (``sleep 300 &`` stays in it);
- a process whose environment carries the arm's token (``WB_RERUN_TOKEN``): ``setsid``
  and double forks leave the group but keep the environment;
- an orphan handed to wb: the executor makes itself a child subreaper
  (``PR_SET_CHILD_SUBREAPER``), so a descendant whose parent exits is reparented to wb,
  not to init, even when it left the group and cleared its environment.

Not covered: a descendant that clears its environment and is adopted by another
subreaper (a container runtime, systemd user services), or runs under another user.
Without ``/proc`` (macOS) only the process group is killed. No cgroup is made: wb cannot
assume a delegated cgroup tree.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import secrets
import signal
import sys
import time
from dataclasses import dataclass

TOKEN_VARIABLE = "WB_RERUN_TOKEN"
_PR_SET_CHILD_SUBREAPER = 36
_TERM_GRACE_S = 0.5
_SHOWN = 5  # strays named in the one-line report


@dataclass(frozen=True)
class Stray:
    pid: int
    command: str
    how: str  # "process group", "environment", "orphan"


def new_token() -> str:
    return secrets.token_hex(8)


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (Linux); False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def boot_ticks_now() -> int | None:
    """The current time in the clock ticks ``/proc/PID/stat`` counts start times in."""
    try:
        with open("/proc/uptime", "rb") as f:
            return int(float(f.read().split()[0]) * os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


def _stat(pid: int) -> tuple[str, str, int, int, int, int] | None:
    """(command, state, parent, process group, start ticks, session) of ``pid``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    command, _, rest = raw.partition(" (")[2].rpartition(") ")
    fields = rest.split()
    try:
        return command, fields[0], int(fields[1]), int(fields[2]), int(fields[19]), int(fields[3])
    except (IndexError, ValueError):
        return None


def _carries(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return marker in f.read(1 << 20)
    except OSError:
        return False


def find(pgid: int, token: str, since_ticks: int | None) -> list[Stray]:
    """The live processes the arm whose group is ``pgid`` left behind."""
    if not os.path.isdir("/proc/self"):
        return []
    me = os.getpid()
    marker = f"{TOKEN_VARIABLE}={token}".encode() + b"\0"
    my_session = os.getsid(0)
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        pid = int(name)
        info = _stat(pid)
        if info is None:
            continue
        command, state, parent, group, started, session = info
        if since_ticks is not None and started < since_ticks:
            continue  # older than the arm: not its doing (and a reused pid is not mistaken for it)
        if state == "Z":
            if parent == me and session != my_session:  # an orphan of an arm that exited by itself: reaped
                _reap([Stray(pid, command, "orphan")])
            continue
        if group == pgid:
            how = "process group"
        elif _carries(pid, marker):
            how = "environment"
        elif parent == me and since_ticks is not None:
            how = "orphan"
        else:
            continue
        found.append(Stray(pid, command, how))
    return found


def kill(strays: list[Stray]) -> None:
    """SIGTERM, a short grace, then SIGKILL; orphans handed to wb are reaped."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = []
        for s in strays:
            try:
                os.kill(s.pid, sig)
                alive.append(s)
            except (ProcessLookupError, PermissionError):
                pass
        if not alive or sig == signal.SIGKILL:
            break
        deadline = time.monotonic() + _TERM_GRACE_S
        while time.monotonic() < deadline and any(_running(s.pid) for s in alive):
            _reap(alive)
            time.sleep(0.02)
    time.sleep(0.02)
    _reap(strays)


def _running(pid: int) -> bool:
    info = _stat(pid)
    return info is not None and info[1] != "Z"


def _reap(strays: list[Stray]) -> None:
    for s in strays:
        try:
            os.waitpid(s.pid, os.WNOHANG)
        except ChildProcessError:  # not ours: its own parent reaps it
            pass


def sweep(pgid: int, token: str, since_ticks: int | None) -> str:
    """Find and kill what the arm left behind; '' when nothing, else one line for its record."""
    strays = find(pgid, token, since_ticks)
    try:
        os.killpg(pgid, signal.SIGKILL)  # the group, even where /proc cannot be scanned
    except (ProcessLookupError, PermissionError):
        pass
    if not strays:
        return ""
    kill(strays)
    shown = ", ".join(f"pid {s.pid} {s.command!r} ({s.how})" for s in strays[:_SHOWN])
    more = f" and {len(strays) - _SHOWN} more" if len(strays) > _SHOWN else ""
    return f"left {len(strays)} process(es) running after it exited, killed: {shown}{more}"
