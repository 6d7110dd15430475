"""A real ``wb serve`` on a loopback port, in a subprocess, for the API tests.

``serve(store_url, *options)`` starts one (``--port 0``: the port it prints), waits for
``/healthz``, drains its log (one line per request, kept for the tests) and stops it at
the end of the test. Tokens are made in the store before or while it runs, as
``wb token add`` would.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from store import open_store
from store.tokens import add_token

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "captures" / "demo"
START_TIMEOUT_S = 60


@dataclass
class Served:
    url: str
    store_url: str
    proc: subprocess.Popen
    env: dict[str, str]
    log: list[str] = field(default_factory=list)

    def token(self, name: str, role: str) -> str:
        st = open_store(self.store_url)
        try:
            return add_token(st, name, role)
        finally:
            st.close()

    def client(self, token: str | None = None, **kwargs) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60.0, **kwargs)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)


def hermetic_env(tmp_path: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
    }
    for name in ("WB_STORE", "WB_SERVER", "WB_TOKEN", "WB_LENS_EXTENSIONS"):
        env.pop(name, None)
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def start_server(store_url: str, tmp_path: Path, *options: str) -> Served:
    env = hermetic_env(tmp_path)
    open_store(store_url).ensure_exists()  # a SQLite store exists before the server opens it
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "--store", store_url, "serve", "--port", "0", *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    found = threading.Event()
    address: list[str] = []

    def drain() -> None:
        for line in proc.stderr:  # type: ignore[union-attr]
            lines.append(line.rstrip("\n"))
            m = re.search(r"listening on (http://\S+)", line)
            if m and not address:
                address.append(m.group(1))
                found.set()
        found.set()

    threading.Thread(target=drain, daemon=True).start()
    if not found.wait(START_TIMEOUT_S) or not address:
        proc.kill()
        raise RuntimeError("wb serve did not start:\n" + "\n".join(lines[-20:]))
    served = Served(address[0], store_url, proc, env, lines)
    assert httpx.get(f"{served.url}/healthz", timeout=10).status_code == 200
    return served


@pytest.fixture
def serve(tmp_path):
    started: list[Served] = []

    def make(store_url: str, *options: str) -> Served:
        served = start_server(store_url, tmp_path, *options)
        started.append(served)
        return served

    yield make
    for served in started:
        served.stop()


def wait_for_log(served: Served, pattern: str, timeout_s: float = 10.0) -> str:
    """The first log line matching ``pattern`` (the log is written after the answer)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for line in list(served.log):
            if re.search(pattern, line):
                return line
        time.sleep(0.05)
    raise AssertionError(f"no log line matches {pattern!r}:\n" + "\n".join(served.log[-10:]))


def _slow(app, delay_s: float):
    """The application answering every request ``delay_s`` late (a slow server)."""
    import asyncio

    async def slow(scope, receive, send):
        if scope["type"] == "http":
            await asyncio.sleep(delay_s)
        await app(scope, receive, send)

    return slow


class InProcess:
    """``wb serve``'s application under uvicorn in a thread of this process, on a loopback port
    (for tests where the process boundary is not the point: many commands, in-process ``wb``)."""

    def __init__(self, store_url: str, **config) -> None:
        import uvicorn

        from workbench.server.app import create_app
        from workbench.server.config import ServerConfig
        from workbench.server.guard import ConnectionGuard

        delay_s = config.pop("delay_s", 0.0)
        settings = ServerConfig(store_url=store_url, max_connections=config.pop("max_connections", 128), **config)
        guard = ConnectionGuard(
            max_connections=settings.max_connections,
            max_per_client=settings.max_per_client,
            header_timeout_s=settings.header_timeout_s,
        )
        self.server = uvicorn.Server(
            uvicorn.Config(
                _slow(create_app(settings), delay_s) if delay_s else create_app(settings),
                host="127.0.0.1",
                port=0,
                http=guard.protocol(),
                log_level="warning",
                access_log=False,
            )
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the in-process server did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.store_url = store_url

    def token(self, name: str, role: str) -> str:
        st = open_store(self.store_url)
        try:
            return add_token(st, name, role)
        finally:
            st.close()

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(20)


@pytest.fixture
def in_process():
    started: list[InProcess] = []

    def make(store_url: str, **config) -> InProcess:
        server = InProcess(store_url, **config)
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


def wb_here(*args: str) -> tuple[int, str, str]:
    """``wb args...`` in this process (the environment as it is): exit code, stdout, stderr."""
    import contextlib
    import io

    from workbench.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()
