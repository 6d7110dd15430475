"""The clients against a real server: ``wb push`` prints ``wb import``'s lines, ``wb
--server URL runs|show|compare|bundle export`` prints byte for byte what the local
command prints on the same store, and a lost connection is retried without importing
anything twice."""

from __future__ import annotations

import json
import socket
import threading

import pytest

from tests.conftest import run_wb
from tests.server.conftest import DEMO
from workbench.usecases.remote import HttpClient

BASE = ["1", "2", "3", "4", "5"]
CAND = ["11", "12", "13", "14", "15"]


def _both(served, token, *args):
    local = run_wb("--store", served.store_url, *args, env={**served.env, "COLUMNS": "100"})
    remote = run_wb("--server", served.url, *args, env={**served.env, "COLUMNS": "100", "WB_TOKEN": token})
    return local, remote


@pytest.mark.slow
@pytest.mark.store
def test_push_then_the_remote_commands_print_what_the_local_ones_print(serve, store_url, tmp_path):
    served = serve(store_url)
    upload = served.token("ci", "upload")
    read = served.token("laptop", "read")
    pushed = run_wb("push", str(DEMO / "inference"), "--server", served.url, env={**served.env, "WB_TOKEN": upload})
    assert pushed.returncode == 0, pushed.stderr
    imported = run_wb(
        "--store",
        str(tmp_path / "local.sqlite"),
        "import",
        *map(str, sorted((DEMO / "inference").glob("*.json"))),
        env=served.env,
    )
    assert pushed.stdout == imported.stdout  # the same per-file lines, the same run ids
    again = run_wb("push", str(DEMO / "inference"), "--server", served.url, env={**served.env, "WB_TOKEN": upload})
    said = " ".join(again.stderr.split())  # Rich wraps stderr at its width
    assert again.returncode == 0 and "already imported (capture 1, runs 1)" in said and "nothing new imported" in said

    cases = [
        ("runs",),
        ("runs", "--lens", "training"),
        ("show", "3"),
        ("runs", "--json"),
        ("show", "3", "--json"),
        ("compare", *BASE, "--vs", *CAND, "--change", "engine_revision=v0.8.2:v0.8.3"),
        (
            "compare",
            *BASE,
            "--vs",
            *CAND,
            "--control",
            "6",
            "7",
            "8",
            "9",
            "10",
            "--change",
            "engine_revision=v0.8.2:v0.8.3",
        ),
        ("compare", *BASE, "--vs", *CAND, "--change", "engine_revision=v0.8.2:v0.8.3", "--json"),
        ("inspect", *BASE, "--vs", *CAND, "--change", "engine_revision=v0.8.2:v0.8.3"),
        (
            "inspect",
            *BASE,
            "--vs",
            *CAND,
            "--change",
            "engine_revision=v0.8.2:v0.8.3",
            "--windows",
            "4",
            "--top",
            "3",
            "--json",
        ),
        ("inspect", *BASE, "--vs", *CAND, "--change", "engine_revision=v0.8.2:v0.8.3", "--metric", "e2e_p99", "--json"),
    ]
    for args in cases:
        local, remote = _both(served, read, *args)
        assert local.returncode == remote.returncode == 0, (args, local.stderr, remote.stderr)
        assert remote.stdout == local.stdout, args
        assert remote.stdout.strip()
    local, remote = _both(served, read, "show", "nope")
    assert local.returncode == remote.returncode == 2 and "nope" in remote.stderr


@pytest.mark.slow
def test_a_refused_comparison_prints_the_same_way_out_and_exit_code(serve, sqlite_url):
    served = serve(sqlite_url)
    upload = served.token("ci", "upload")
    pushed = run_wb(
        "push",
        str(DEMO / "inference"),
        str(DEMO / "not-comparable"),
        "--server",
        served.url,
        env={**served.env, "WB_TOKEN": upload},
    )
    assert pushed.returncode == 0, pushed.stderr
    args = ("compare", *BASE, "--vs", "16", "--fail-on", "refused")  # H100 runs against an A100 one
    local, remote = _both(served, upload, *args)
    assert local.returncode == remote.returncode == 3, (local.stdout, local.stderr)
    assert remote.stdout == local.stdout and "wb compare 1 2 3 4 5 --vs 16" in local.stdout
    local, remote = _both(served, upload, "inspect", *BASE, "--vs", "16")
    assert local.returncode == remote.returncode == 3 and remote.stdout == local.stdout and "wb inspect" in local.stdout
    local, remote = _both(served, upload, "inspect", *BASE, "--vs", "16", "--metric", "ttft_p99")
    assert local.returncode == remote.returncode == 3 and remote.stdout == local.stdout, (local.stderr, remote.stderr)
    assert "wb inspect 1 2 3 4 5 --vs 16 --metric ttft_p99" in local.stdout


@pytest.mark.slow
def test_bundle_export_from_the_server_verifies_offline(serve, sqlite_url, tmp_path):
    served = serve(sqlite_url)
    upload = served.token("ci", "upload")
    env = {**served.env, "WB_TOKEN": upload}
    assert run_wb("push", str(DEMO / "inference"), "--server", served.url, env=env).returncode == 0
    inv = json.loads(
        run_wb(
            "--store",
            sqlite_url,
            "investigate",
            "new",
            "--lens",
            "inference",
            "--question",
            "ship?",
            "--change",
            "engine_revision=v0.8.2:v0.8.3",
            "--json",
            env=served.env,
        ).stdout
    )
    stored = run_wb(
        "--store", sqlite_url, "investigate", "compare", str(inv["id"]), *BASE, "--vs", *CAND, env=served.env
    )
    assert stored.returncode == 0, stored.stderr
    out = tmp_path / "served.bundle.json"
    remote = run_wb("--server", served.url, "bundle", "export", str(inv["id"]), "-o", str(out), "--json", env=env)
    assert remote.returncode == 0, remote.stderr
    local_out = tmp_path / "local.bundle.json"
    local = run_wb(
        "--store", sqlite_url, "bundle", "export", str(inv["id"]), "-o", str(local_out), "--json", env=served.env
    )
    for digest in ("recipe_sha256", "results_sha256"):  # (the checksum covers the export's time too)
        assert json.loads(remote.stdout)[digest] == json.loads(local.stdout)[digest]
    verify = run_wb("evidence", "verify", str(out), env={k: v for k, v in served.env.items() if k != "WB_TOKEN"})
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_an_explicit_server_with_a_local_only_command_is_refused(tmp_path):
    proc = run_wb("--server", "http://127.0.0.1:9", "import", str(tmp_path))
    assert proc.returncode == 2 and "works on a local store" in proc.stderr


class _DropFirstAnswer:
    """A loopback proxy that relays the first request to the server, waits for its
    answer and closes the client's connection without passing it on (a connection lost
    after the server acted); later connections are relayed whole."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._relay, args=(client, self.connections == 1), daemon=True).start()

    def _relay(self, client: socket.socket, drop: bool) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.target), timeout=30)
        client.settimeout(30)

        def pump(src: socket.socket, dst: socket.socket | None) -> None:
            try:
                while data := src.recv(65536):
                    if dst is not None:
                        dst.sendall(data)
                    elif drop:  # the answer arrived: lose it
                        client.close()
                        return
            except OSError:
                pass
            finally:
                for s in (src, dst):
                    try:
                        if s is not None:
                            s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
        pump(upstream, None if drop else client)

    def close(self) -> None:
        self.listener.close()


@pytest.mark.slow
def test_an_upload_whose_answer_was_lost_is_retried_and_imported_once(serve, sqlite_url):
    served = serve(sqlite_url)
    token = served.token("ci", "upload")
    proxy = _DropFirstAnswer(served.port)
    try:
        with HttpClient(f"http://127.0.0.1:{proxy.port}", token, backoff_s=0.05) as client:
            report = client.upload(sorted((DEMO / "inference").glob("*.json"))[0])
    finally:
        proxy.close()
    assert proxy.connections >= 2  # the first answer was lost, the retry got one
    assert report["imported"] == [] and "already imported" in report["skipped"][0]["reason"]
    runs = json.loads(run_wb("--store", sqlite_url, "runs", "--json", env=served.env).stdout)
    assert len(runs) == 1
