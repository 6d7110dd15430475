"""A server that a hostile client cannot knock over, and a client a hostile server cannot:

- unauthenticated bodies of gigabytes (declared, chunked, on every kind of route) are refused
  from the headers, never read: the server's peak memory stays small (measured, generously
  bounded: no timing is asserted);
- an authenticated body over a route's limit is refused from Content-Length, or as it passes the
  limit; one that stalls or drips is cut off (408), on the use cases' routes as on uploads;
- connections that send nothing, many more than the open files allow, neither exhaust the
  server's descriptors nor lock another client out (per-client cap, head timeout), under a
  lowered RLIMIT_NOFILE;
- a store that does not exist when the server starts takes the tokens added afterwards at once;
- NUL and invalid UTF-8 in a request or a capture are bad input (422, the import's line) on both
  backends, and no error shows the database's URL, user or host;
- the client stops reading an endless answer at its limit, and reads no FIFO, device or /proc
  file.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from store import open_store
from tests.conftest import run_wb
from tests.foundation.helpers import inference_capture, write_json
from tests.server.conftest import DEMO, REPO, hermetic_env

CAPTURE = sorted((DEMO / "inference").glob("*.json"))[0]
PEAK_RSS_BOUND = 300 * 1024 * 1024


def _peak_rss(pid: int) -> int:
    """A live process's peak resident memory (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def _head(path: str, *, token: str | None = None, length: int | None = None, content_type: str = "application/json"):
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Type: {content_type}"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    lines.append(f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _answer(sock: socket.socket) -> bytes:
    """Everything the server says until it closes (or stops for the socket's timeout)."""
    parts = []
    try:
        while data := sock.recv(65536):
            parts.append(data)
    except OSError:
        pass
    return b"".join(parts)


def _flood(port: int, head: bytes, total: int, *, chunked: bool = False, source: str = "127.0.0.1") -> bytes:
    """Send ``head`` and then up to ``total`` bytes of body as fast as the socket takes them,
    stopping when the server closes; the answer's first bytes."""
    block = b"x" * (1 << 20)
    if chunked:
        block = b"%x\r\n%s\r\n" % (len(block), block)
    with socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0)) as sock:
        sock.sendall(head)
        sent = 0
        try:
            while sent < total:
                sock.sendall(block)
                sent += len(block)
        except OSError:  # the server answered and closed: what it said is waiting
            pass
        sock.settimeout(10)
        return _answer(sock)


@pytest.mark.slow
def test_unauthenticated_gigabytes_are_never_read(serve, sqlite_url):
    served = serve(sqlite_url)
    gigabytes = 2 * 1024**3
    for path in ("/api/v1/op/compare", "/api/v1/op/runs.declare", "/api/v1/captures?name=a.json", "/api/v1/op/x"):
        for chunked in (False, True):
            head = _head(path, length=None if chunked else gigabytes)
            answer = _flood(served.port, head, 512 << 20, chunked=chunked)
            assert answer.startswith((b"HTTP/1.1 401", b"HTTP/1.1 404")), (path, answer[:200])
    assert _peak_rss(served.proc.pid) < PEAK_RSS_BOUND, _peak_rss(served.proc.pid)
    with served.client(served.token("ci", "upload")) as http:  # and it still serves
        assert http.post("/api/v1/op/runs.list", json={}).json() == {"runs": []}


def test_bodies_over_a_routes_limit_are_refused_and_slow_ones_cut_off(serve, sqlite_url):
    served = serve(sqlite_url, "--idle-timeout", "0.5", "--grace", "0.5", "--min-rate", "100000")
    token = served.token("dash", "read")
    declared = _flood(served.port, _head("/api/v1/op/compare", token=token, length=2 * 1024**3), 64 << 20)
    assert declared.startswith(b"HTTP/1.1 413") and b"over the request limit of 1 MiB" in declared, declared[:300]
    chunked = _flood(served.port, _head("/api/v1/op/compare", token=token), 64 << 20, chunked=True)
    assert chunked.startswith(b"HTTP/1.1 413") and b"more than the request limit" in chunked, chunked[:300]
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:  # a drip
        sock.sendall(_head("/api/v1/op/compare", token=token, length=1000))
        try:
            for _ in range(40):
                sock.sendall(b" ")
                time.sleep(0.05)
        except OSError:
            pass
        answer = _answer(sock)
    assert answer.startswith(b"HTTP/1.1 408") and b"slower than 100,000 bytes/s" in answer, answer[:300]
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:  # a stall
        sock.sendall(_head("/api/v1/op/compare", token=token, length=1000) + b"{")
        answer = _answer(sock)
    assert answer.startswith(b"HTTP/1.1 408") and b"no data for 0.5 s" in answer, answer[:300]
    assert _peak_rss(served.proc.pid) < PEAK_RSS_BOUND


def _serve_limited(tmp_path: Path, store_url: str, nofile: int, *options: str) -> subprocess.Popen:
    env = hermetic_env(tmp_path)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    return subprocess.Popen(
        [sys.executable, "-m", "workbench", "--store", store_url, "serve", "--port", "0", *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=limit,
    )


def _port_of(proc: subprocess.Popen) -> int:
    for line in proc.stderr:  # type: ignore[union-attr]
        if "listening on http://" in line:
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
            return int(line.rsplit(":", 1)[1].split()[0])
    raise AssertionError("wb serve did not start")


def _open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _healthy(port: int, source: str) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0)) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return sock.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def test_idle_connections_neither_exhaust_descriptors_nor_lock_others_out(sqlite_url, tmp_path):
    nofile = 256
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2 * nofile:
        pytest.skip("this test opens more connections than the server's limit")
    open_store(sqlite_url).ensure_exists()
    proc = _serve_limited(tmp_path, sqlite_url, nofile, "--max-per-client", "32", "--header-timeout", "2")
    idle: list[socket.socket] = []
    try:
        port = _port_of(proc)
        for i in range(300):  # more than the server's open files allow, all from one address
            sock = socket.socket()
            sock.settimeout(5)
            try:
                sock.connect(("127.0.0.1", port))
            except OSError:
                sock.close()
                continue
            idle.append(sock)
            if i % 50 == 0:
                assert _open_fds(proc.pid) < nofile
        assert _open_fds(proc.pid) < nofile
        assert _healthy(port, "127.0.0.2")  # another client is answered at once
        spread = []
        for n in range(2, 10):  # then from many addresses: over the server's whole cap
            for _ in range(30):
                s = socket.socket()
                s.settimeout(5)
                try:
                    s.bind((f"127.0.0.{n}", 0))
                    s.connect(("127.0.0.1", port))
                    spread.append(s)
                except OSError:
                    s.close()
        assert _open_fds(proc.pid) < nofile and proc.poll() is None
        deadline = time.monotonic() + 30
        while not _healthy(port, "127.0.0.1") and time.monotonic() < deadline:  # the idle ones time out
            time.sleep(0.5)
        assert _healthy(port, "127.0.0.1") and _healthy(port, "127.0.0.20")
        closed = 0
        for sock in idle[:32]:  # the ones it held were closed by the head timeout
            try:
                closed += sock.recv(1) == b""
            except OSError:
                closed += 1
        assert closed == 32
        for s in spread:
            s.close()
    finally:
        for sock in idle:
            sock.close()
        proc.terminate()
        proc.wait(20)


def test_a_store_made_after_the_server_started_takes_new_tokens_at_once(tmp_path):
    store = tmp_path / "new" / "wb.sqlite"
    store.parent.mkdir()
    env = hermetic_env(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "--store", str(store), "serve", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        port = _port_of(proc)
        added = run_wb("--store", str(store), "token", "add", "ci", "--role", "read", env=env)
        assert added.returncode == 0, added.stderr
        token = added.stdout.strip()
        import httpx

        answer = httpx.post(
            f"http://127.0.0.1:{port}/api/v1/op/runs.list", json={}, headers={"Authorization": f"Bearer {token}"}
        )
        assert answer.status_code == 200, answer.text
        run_wb("--store", str(store), "token", "revoke", "ci", env=env)
        again = httpx.post(
            f"http://127.0.0.1:{port}/api/v1/op/runs.list", json={}, headers={"Authorization": f"Bearer {token}"}
        )
        assert again.status_code == 401  # and a revocation at the next request
    finally:
        proc.terminate()
        proc.wait(20)


@pytest.mark.store
def test_nul_and_invalid_utf8_are_bad_input_on_both_backends(serve, store_url, tmp_path):
    served = serve(store_url)
    token = served.token("ci", "upload")
    nul_label = write_json(tmp_path / "nul.json", inference_capture(3, label="engine\u0000v2"))
    bad_utf8 = tmp_path / "latin1.json"
    bad_utf8.write_bytes(
        json.dumps(inference_capture(3)).replace("Llama", "Ll\\u00e0ma").encode().replace(b"H100", b"H\xff00")
    )
    local = run_wb("--store", str(tmp_path / "local.sqlite"), "import", str(nul_label), env=served.env)
    assert local.returncode == 2 and "NUL" in local.stderr
    with served.client(token) as http:
        for path in (nul_label, bad_utf8):
            answer = http.post("/api/v1/captures", params={"name": path.name}, content=path.read_bytes())
            assert answer.status_code == 422, answer.text
            message = answer.json()["error"]["message"]
            assert message.startswith(path.name) and ("NUL" in message or "UTF-8" in message), message
        local_line = local.stderr.strip().removeprefix("wb: error: ").removeprefix(f"{tmp_path}/")
        nul_answer = http.post("/api/v1/captures", params={"name": nul_label.name}, content=nul_label.read_bytes())
        assert nul_answer.json()["error"]["message"] == local_line  # the import's one line
        for body in (
            {"runs": ["1"], "values": {"rack": "r\u00007"}},
            {"runs": ["1"], "values": {"ra\u0000ck": "r7"}},
            {"runs": ["1\u0000"], "values": {"rack": "r7"}},
        ):
            answer = http.post("/api/v1/op/runs.declare", json=body)
            assert answer.status_code == 422 and "NUL" in answer.json()["error"]["message"], answer.text
        raw = http.post(
            "/api/v1/op/runs.declare",
            content=b'{"runs": ["1"], "values": {"rack": "\xff"}}',
            headers={"Content-Type": "application/json"},
        )
        assert raw.status_code == 422, raw.text
        everything = json.dumps([a for a in served.log])
        for answer_text in (nul_answer.text, raw.text):
            assert (
                "postgres" not in answer_text and "127.0.0.1:5" not in answer_text and str(tmp_path) not in answer_text
            )
        assert http.post("/api/v1/op/runs.list", json={}).json() == {"runs": []}  # nothing written, still serving
    assert "internal error" not in everything


def test_wb_refuses_nul_in_its_own_requests_before_the_store(sqlite_url):
    run_wb("--store", sqlite_url, "import", str(CAPTURE))
    proc = run_wb("--store", sqlite_url, "declare", "1", "rack=r\x017")  # (a NUL cannot pass argv; U+0001 can)
    assert proc.returncode == 0
    from workbench.usecases.core import check_text
    from workbench.usecases.runs import Declare

    with pytest.raises(Exception, match="NUL"):
        check_text(Declare(runs=["1"], values={"rack": "a\x00b"}))


class _EndlessServer:
    """Answers every request with 200 and a body that never ends."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n[")
            block = b'"x",' * (1 << 16)
            while True:
                conn.sendall(block)
        except OSError:
            conn.close()

    def close(self) -> None:
        self.listener.close()


# ``wb`` that says its own peak memory as its last line on stderr (VmHWM: this process's, counted
# from its exec; a forked child's rusage would count its parent's pages too).
PEAK_THEN_WB = (
    "import atexit, runpy, sys; atexit.register(lambda: print('peak', [l.split()[1] for l in "
    "open('/proc/self/status') if l.startswith('VmHWM:')][0], file=sys.stderr)); "
    "sys.argv = ['wb', *sys.argv[1:]]; runpy.run_module('workbench', run_name='__main__')"
)


def test_the_client_stops_reading_an_endless_answer(tmp_path):
    server = _EndlessServer()
    env = {**hermetic_env(tmp_path), "WB_TOKEN": "wb_x"}
    try:
        proc = subprocess.run(
            [sys.executable, "-c", PEAK_THEN_WB, "--server", f"http://127.0.0.1:{server.port}", "runs"],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=300,
        )
    finally:
        server.close()
    *said, peak = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(said) == 1 and "past the client's limit of 64 MiB" in said[0], proc.stderr
    assert int(peak.split()[1]) * 1024 < PEAK_RSS_BOUND, peak


def test_push_reads_no_fifo_device_or_proc_file(tmp_path):
    fifo = tmp_path / "capture.json"
    os.mkfifo(fifo)
    env = {**hermetic_env(tmp_path), "WB_TOKEN": "wb_x"}
    for path in (fifo, Path("/dev/zero"), Path("/proc/self/status")):
        proc = run_wb("push", str(path), "--server", "http://127.0.0.1:9", env=env)
        assert proc.returncode == 2, (path, proc.stdout, proc.stderr)
        assert "regular file" in proc.stderr or "kernel interface" in proc.stderr, proc.stderr
        assert "internal error" not in proc.stderr


def test_an_error_names_no_url_however_long_its_scheme():
    """The scrubber hides every address (a store URL with its password, a link in a capture's
    text); the scheme is looked for a bounded way back, so a long run of scheme characters keeps its
    head and still loses the address."""
    from workbench.server.errors import _URL

    assert _URL.sub("(a URL)", "cannot reach postgresql+psycopg://u:secret@db/wb now") == "cannot reach (a URL) now"
    long_scheme = "a" * 200 + "://u:secret@host"
    assert "secret" not in _URL.sub("(a URL)", long_scheme)
    assert _URL.sub("(a URL)", "+a" * 1000) == "+a" * 1000
