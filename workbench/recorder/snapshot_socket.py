"""``wb snapshot PID``: a snapshot on request from outside the process, with no ptrace and no root.

Each process with a recorder listens on a Unix socket ``<dir>/<pid>.sock``, where ``<dir>``
is ``$XDG_RUNTIME_DIR/wb-recorder`` (the user's own runtime directory) or, without one,
``<tmp>/wb-recorder-<uid>``. Three checks keep other users out:

1. the directory must be the user's own with mode 0700: it is created so, and a directory
   that exists with another owner, group or other permissions, or as a symlink, is refused
   (no socket is made; ``stats()["control"]`` says why), so nobody else can reach the socket;
2. the server reads each caller's uid from the kernel (``SO_PEERCRED``) and answers a
   different uid with a refusal, taking nothing;
3. the client checks the directory the same way and that the process answering is the one
   it asked (pid and uid from ``SO_PEERCRED``).

Snapshots are written with mode 0600 (``mkstemp``), so another user cannot read one either.
One JSON line each way: ``{"wait_s": S}`` and ``{"ok": true, "paths": [...]}`` or
``{"ok": false, "error": "..."}``. The server thread blocks in ``accept``: no wake-ups while idle.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

_MAX_REQUEST = 4096
_MAX_WAIT_S = 600.0
_SUN_PATH_MAX = 107  # sockaddr_un.sun_path, less its terminating NUL
_CRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


class Refused(Exception):
    """A request that was refused (another user's process, an unsafe directory): one line for the user."""


class NoRecorder(Refused):
    """No such process, or no recorder listening in it."""


def control_dir() -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        return Path(runtime) / "wb-recorder"
    return Path(tempfile.gettempdir()) / f"wb-recorder-{os.getuid()}"


def unsafe(directory: Path, *, create: bool) -> str | None:
    """Why ``directory`` may not hold the control sockets (``None``: it may). With
    ``create``, a missing one is made, mode 0700."""
    if create:
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return "does not exist"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory (a symlink or a file)"
    if st.st_uid != os.getuid():
        return f"belongs to uid {st.st_uid}, not to this user (uid {os.getuid()})"
    if st.st_mode & 0o077:
        return f"has mode {stat.S_IMODE(st.st_mode):04o}: group or others may enter it (0700 needed)"
    return None


def socket_path(directory: Path, pid: int) -> Path:
    return directory / f"{pid}.sock"


def peer(conn: socket.socket) -> tuple[int, int] | None:
    """The connected process's (pid, uid), from the kernel; ``None`` where the platform has no SO_PEERCRED."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    pid, uid, _ = _CRED.unpack(conn.getsockopt(socket.SOL_SOCKET, option, _CRED.size))
    return pid, uid


def _read_line(conn: socket.socket, limit: int) -> bytes:
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
        if len(data) > limit:
            raise ValueError(f"a message longer than {limit} bytes")
    return data.split(b"\n", 1)[0]


def _send(conn: socket.socket, doc: dict[str, Any]) -> None:
    conn.sendall(json.dumps(doc).encode() + b"\n")


class ControlServer:
    """The process's control socket (one per process, whatever the number of recorders).

    ``answer(wait_s)`` takes the snapshots and returns their paths (the recorders')."""

    def __init__(self, answer: Callable[[float], list[str]], on_fault: Callable[[BaseException, str], None]) -> None:
        self.answer = answer
        self.on_fault = on_fault
        self.status = "not started"
        self.path: Path | None = None
        self.served = 0
        self.refused = 0
        self.pid = os.getpid()
        self.uid = os.getuid()  # the only caller answered
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        directory = control_dir()
        why = unsafe(directory, create=True)
        if why is not None:
            self.status = f"off: {directory} {why}"
            return
        path = socket_path(directory, os.getpid())
        if len(os.fsencode(path)) > _SUN_PATH_MAX:
            self.status = f"off: {path} is longer than a Unix socket path may be"
            return
        _sweep(directory)
        try:
            path.unlink()  # a socket left by an earlier process with this pid
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(str(path))
            os.chmod(path, 0o600)
            sock.listen(8)
        except OSError:
            sock.close()
            raise
        self._sock, self.path = sock, path
        self.status = f"listening on {path}"
        self._thread = threading.Thread(target=self._serve, name="wb-recorder-control", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        sock = self._sock
        while sock is not None:
            try:
                conn, _ = sock.accept()
            except OSError:  # closed: the recorder stopped
                return
            try:
                with conn:
                    self._handle(conn)
            except Exception as exc:  # noqa: BLE001 - one bad request, counted
                self.on_fault(exc, "control request")

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(5.0)
        who = peer(conn)
        if who is not None and who[1] != self.uid:
            self.refused += 1
            _send(conn, {"ok": False, "error": f"refused: uid {who[1]} is not this process's user"})
            return
        try:
            request = json.loads(_read_line(conn, _MAX_REQUEST) or b"{}")
            wait = min(_MAX_WAIT_S, max(0.0, float(request.get("wait_s", 30.0))))
        except (ValueError, TypeError, AttributeError) as exc:
            _send(conn, {"ok": False, "error": f"bad request: {exc}"[:200]})
            return
        conn.settimeout(wait + 5.0)
        paths = self.answer(wait)
        self.served += 1
        if paths:
            _send(conn, {"ok": True, "pid": os.getpid(), "paths": paths})
        else:
            _send(conn, {"ok": False, "error": f"no snapshot written within {wait:g} s (see the recorder's faults)"})

    def stop(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        if self.path is not None and os.getpid() == self.pid:  # a forked child leaves its parent's socket
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
        if self.status.startswith("listening"):
            self.status = "stopped"

    def forget(self) -> None:
        """In a forked child: close the inherited socket, leave the parent's file alone."""
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()
        self.path = None
        self.status = "not started"


def _sweep(directory: Path) -> None:
    """Remove sockets of processes that no longer exist (left by a process killed outright)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        stem, dot, ext = name.partition(".")
        if ext != "sock" or not stem.isdigit():
            continue
        try:
            os.kill(int(stem), 0)
        except ProcessLookupError:
            try:
                os.unlink(directory / name)
            except OSError:
                pass
        except OSError:
            pass


# -- the client (``wb snapshot``) ---------------------------------------------------------------


def _owner(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def check_process(pid: int) -> None:
    """Refuse a process that does not exist or belongs to another user."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        raise NoRecorder(f"no process {pid}") from None
    except PermissionError:
        raise Refused(f"process {pid} belongs to another user: wb snapshot asks only your own processes") from None
    owner = _owner(pid)
    if owner is not None and owner != os.getuid():  # root may signal anyone: the owner decides
        raise Refused(
            f"process {pid} belongs to uid {owner}, not to you (uid {os.getuid()}): wb snapshot asks only your own "
            "processes"
        )


def request_snapshot(pid: int, wait_s: float) -> list[str]:
    """Ask the recorder(s) in process ``pid`` for a snapshot; the paths written."""
    check_process(pid)
    directory = control_dir()
    why = unsafe(directory, create=False)
    if why == "does not exist":
        raise NoRecorder(f"process {pid} has no recorder listening (no {directory})")
    if why is not None:
        raise Refused(f"{directory} {why}: refusing to use it")
    path = socket_path(directory, pid)
    if not path.exists():
        raise NoRecorder(
            f"process {pid} has no recorder listening (no {path}; a recorder with control=True, the default, makes one)"
        )
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(5.0)
    try:
        try:
            conn.connect(str(path))
        except OSError as exc:
            raise NoRecorder(f"process {pid} has no recorder answering on {path} ({exc.strerror or exc})") from None
        who = peer(conn)
        if who is not None and (who[0] != pid or who[1] != os.getuid()):
            raise Refused(f"{path} is answered by process {who[0]} of uid {who[1]}, not by process {pid}: refused")
        try:
            _send(conn, {"wait_s": wait_s})
        except (BrokenPipeError, ConnectionResetError):
            pass  # a refusal comes before the request is read: it is waiting to be read
        conn.settimeout(wait_s + 10.0)
        try:
            reply = json.loads(_read_line(conn, 1 << 20) or b"{}")
        except TimeoutError:
            raise Refused(f"process {pid} did not answer within {wait_s + 10:g} s") from None
        except ConnectionResetError:
            raise Refused(f"process {pid} closed the connection without an answer") from None
    finally:
        conn.close()
    if not isinstance(reply, dict) or not reply.get("ok"):
        error = reply.get("error") if isinstance(reply, dict) else None
        raise Refused(f"process {pid}: {error or 'no answer'}")
    return [str(p) for p in reply.get("paths") or []]
