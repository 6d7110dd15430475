"""The recorder's ``server=`` destination: a snapshot written by the writer thread is
uploaded to a real server; with the server unreachable the file is kept and the fault
counted, and the workload's thread never waits on either."""

from __future__ import annotations

import socket

from tests.recorder.helpers import FakeClock, record_steps
from workbench.recorder import Recorder

DIMS = {
    "model": "toy",
    "objective": "regression",
    "hardware": "1x test CPU",
    "topology": "single process",
    "rank_count": 1,
    "effective_batch": 32,
}


def _recorder(tmp_path, server: str) -> tuple[Recorder, FakeClock]:
    clock = FakeClock()
    rec = Recorder(
        clock=clock,
        wall_clock=lambda: 1_796_000_000.0,
        out_dir=tmp_path / "snapshots",
        gpu_interval_s=None,
        dimensions=DIMS,
        label="node-7",
        server=server,
    )
    return rec, clock


def test_snapshots_are_uploaded_from_the_writer_thread(serve, sqlite_url, tmp_path, monkeypatch):
    served = serve(sqlite_url)
    monkeypatch.setenv("WB_TOKEN", served.token("node-7", "upload"))
    monkeypatch.delenv("WB_STORE", raising=False)
    rec, clock = _recorder(tmp_path, served.url)
    try:
        record_steps(rec, clock, [10.0, 12.0, 11.0])
        path = rec.snapshot("on demand")
    finally:
        rec.close()
    assert path is not None and path.exists()  # the local file is kept either way
    assert rec.stats()["faults"] == 0, rec.stats()["last_fault"]
    with served.client(served.token("reader", "read")) as http:
        [run] = http.post("/api/v1/op/runs.list", json={}).json()["runs"]
    assert run["label"] == "node-7: on demand" and run["origin"] == "upload" and run["samples"] == 3


def test_an_unreachable_server_keeps_the_file_and_counts_a_fault(tmp_path, monkeypatch):
    monkeypatch.delenv("WB_STORE", raising=False)
    monkeypatch.setattr("workbench.recorder.upload.time.sleep", lambda _s: None)  # no back-off pauses in the test
    with socket.socket() as sock:  # a loopback port with nothing listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    rec, clock = _recorder(tmp_path, f"http://127.0.0.1:{port}")
    try:
        record_steps(rec, clock, [10.0, 11.0])
        path = rec.snapshot("on demand")
    finally:
        rec.close()
    assert path is not None and path.exists()
    stats = rec.stats()
    assert stats["faults"] == 1 and stats["last_fault"].startswith("server upload: ConnectError")
