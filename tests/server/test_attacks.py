"""Hostile callers against a real server: missing, malformed, forged and revoked tokens, a
read token uploading, path-like names and labels, an oversized body (the budget lowered
for the test with --max-upload; bench/server_load.py --big sends the 2 GB one), a slow
drip and a stall (cut off with 408), and a bad capture (wb import's line, as JSON)."""

from __future__ import annotations

import socket
from pathlib import Path

from store.tokens import digest
from tests.conftest import run_wb
from tests.foundation.helpers import inference_capture, write_json
from tests.server.conftest import DEMO

CAPTURE = sorted((DEMO / "inference").glob("*.json"))[0]


def _upload(http, name, body, **params):
    return http.post("/api/v1/captures", params={"name": name, **params}, content=body)


def _raw(served, head: bytes, body_parts=(), pause_s: float = 0.0, timeout_s: float = 30.0) -> bytes:
    """A request written by hand on a socket (bounded: the socket's timeout); the answer's bytes."""
    import time

    with socket.create_connection(("127.0.0.1", served.port), timeout=timeout_s) as sock:
        sock.sendall(head)
        try:
            for part in body_parts:
                time.sleep(pause_s)
                sock.sendall(part)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed: read what it said
        chunks = []
        try:
            while data := sock.recv(65536):
                chunks.append(data)
        except ConnectionResetError:
            pass
    return b"".join(chunks)


def _head(token: str, length: int | None, name: str = "big.json") -> bytes:
    lines = [
        f"POST /api/v1/captures?name={name} HTTP/1.1",
        "Host: 127.0.0.1",
        f"Authorization: Bearer {token}",
        "Content-Type: application/octet-stream",
    ]
    lines.append(f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_tokens_missing_malformed_forged_revoked_and_too_weak(serve, sqlite_url):
    served = serve(sqlite_url)
    upload = served.token("ci", "upload")
    read = served.token("dash", "read")
    with served.client() as http:
        assert http.get("/healthz").status_code == 200  # the one open endpoint
        for headers in (
            {},
            {"Authorization": "Basic abc"},
            {"Authorization": "Bearer"},
            {"Authorization": f"Bearer {upload[:-2]}xx"},
            {"Authorization": "Bearer " + "a" * 5000},
        ):
            answer = http.post("/api/v1/op/runs.list", json={}, headers=headers)
            assert answer.status_code == 401, (headers, answer.text)
            assert answer.headers["www-authenticate"].startswith("Bearer")
            assert set(answer.json()) == {"error"} and answer.json()["error"]["status"] == 401
            assert upload not in answer.text and digest(upload) not in answer.text
        assert http.get("/api/v1/openapi.json").status_code == 401
        for op in ("runs.show", "bundles.export", "compare", "runs.declare", "tokens.add"):
            assert http.post(f"/api/v1/op/{op}", json={"baseline": ["1"], "candidate": ["2"]}).status_code == 401
        assert _upload(http, "a.json", CAPTURE.read_bytes()).status_code == 401
    with served.client(read) as http:
        answer = _upload(http, CAPTURE.name, CAPTURE.read_bytes())
        assert answer.status_code == 403 and "role 'read'" in answer.json()["error"]["message"]
        assert read not in answer.text
        assert http.post("/api/v1/op/runs.declare", json={"runs": ["1"], "values": {"a": "b"}}).status_code == 403
        assert http.post("/api/v1/op/tokens.list", json={}).status_code == 403  # tokens are the admin's
        assert http.post("/api/v1/op/runs.list", json={}).json()["runs"] == []  # nothing was written
    with served.client(upload) as http:
        assert http.post("/api/v1/op/runs.list", json={}).status_code == 200
        proc = run_wb("--store", sqlite_url, "token", "revoke", "ci", env=served.env)
        assert proc.returncode == 0, proc.stderr
        answer = http.post("/api/v1/op/runs.list", json={})  # the next request after the revocation
        assert answer.status_code == 401 and "unknown or revoked" in answer.json()["error"]["message"]
    assert not any(upload in line or read in line for line in served.log)  # the log names tokens, never shows them


def test_path_like_names_are_refused_and_labels_are_only_text(serve, sqlite_url, tmp_path):
    served = serve(sqlite_url)
    token = served.token("ci", "upload")
    body = CAPTURE.read_bytes()
    with served.client(token) as http:
        for name in (
            "../../escape.json",
            "/etc/passwd",
            "a/b.json",
            "..",
            ".hidden.json",
            "a\\b.json",
            "x\x00.json",
            "",
        ):
            answer = _upload(http, name, body)
            assert answer.status_code == 422, (name, answer.text)
        label = "../../../../tmp/owned [bold red]x[/]"
        answer = _upload(http, "ok.json", body, label=label)
        assert answer.status_code == 201, answer.text
        assert (
            http.post("/api/v1/op/runs.list", json={}).json()["runs"][0]["label"] == label
        )  # stored as the text it is
    assert not (tmp_path / "escape.json").exists() and not Path("/tmp/owned [bold red]x[/]").exists()


def test_an_oversized_body_is_refused_before_it_is_read(serve, sqlite_url):
    served = serve(sqlite_url, "--max-upload", "4096")
    token = served.token("ci", "upload")
    # A declared 2 GB: refused from the header, with nothing of the body sent.
    answer = _raw(served, _head(token, 2 * 1024**3))
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"over the upload limit of 4,096 bytes" in answer
    # No length declared: counted as it comes, refused once past the budget.
    chunk = b"x" * 1024
    parts = [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * 16 + [b"0\r\n\r\n"]
    answer = _raw(served, _head(token, None), parts)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    with served.client(token) as http:
        assert http.post("/api/v1/op/runs.list", json={}).json()["runs"] == []


def test_a_slow_drip_and_a_stall_are_cut_off(serve, sqlite_url):
    served = serve(sqlite_url, "--idle-timeout", "0.5", "--grace", "0.5", "--min-rate", "100000")
    token = served.token("ci", "upload")
    drip = _raw(served, _head(token, 1000), [b"x"] * 40, pause_s=0.05)  # 20 bytes a second, under the rate
    assert drip.startswith(b"HTTP/1.1 408"), drip[:200]
    assert b"slower than 100,000 bytes/s" in drip
    stall = _raw(served, _head(token, 1000), [b"x" * 10])  # then nothing
    assert stall.startswith(b"HTTP/1.1 408") and b"no data for 0.5 s" in stall, stall[:200]
    with served.client(token) as http:
        assert http.post("/api/v1/op/runs.list", json={}).json()["runs"] == []


def test_bad_captures_get_wb_imports_line_as_json(serve, sqlite_url, tmp_path):
    served = serve(sqlite_url)
    token = served.token("ci", "upload")
    bad = write_json(tmp_path / "nan.json", inference_capture(3))
    bad.write_text(bad.read_text().replace('"queue_ms": 40.0', '"queue_ms": NaN', 1))
    local = run_wb("--store", str(tmp_path / "local.sqlite"), "import", str(bad), env=served.env)
    assert local.returncode == 2
    with served.client(token) as http:
        answer = _upload(http, bad.name, bad.read_bytes())
        assert answer.status_code == 422, answer.text
        message = answer.json()["error"]["message"]
        assert local.stderr.strip() == f"wb: error: {str(bad.parent)}/{message}", (local.stderr, message)
        assert "wb-upload-" not in message
        unknown = _upload(http, "noise.bin", b"\x00\x01 not a capture")
        assert unknown.status_code == 422 and unknown.json()["error"]["message"].startswith("noise.bin")
        assert http.post("/api/v1/op/runs.list", json={}).json()["runs"] == []
