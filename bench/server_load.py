"""Benchmark: N clients x U uploads, and R readers comparing and inspecting, against a real
``wb serve`` on loopback, with a ``kill -9`` of the server in the middle, and a check that
nothing acknowledged was lost or stored twice.

In one run:

- the anchor: ``import_files`` of the same captures in this process, one at a time, into a
  fresh store (what the server does per upload, without HTTP);
- the load: ``--clients`` threads, each uploading ``--uploads`` distinct captures through
  ``workbench.usecases.remote.HttpClient`` (retries and all) and comparing two of its runs every
  ``--compare-every`` uploads; and ``--readers`` threads, each running ``--reads`` use cases
  through ``Remote`` (``wb --server``'s transport), a comparison and an inspection in turn, of
  the demo's inference runs (imported first);
- ``--kill-at F``: once a share F of the uploads is acknowledged the server gets SIGKILL
  and is started again on the same port; the clients' retries carry on (an upload in
  flight is either committed, and "already imported" on the retry, or not, and imported);
- the check: every upload the server acknowledged (by SHA-256) is in the store, each with
  its runs, after the restart; no capture or run is stored twice; the store passes SQLite's
  integrity check.

Prints throughput, p50/p95/p99 latency of uploads, comparisons and inspections (the kill's
stall is in the tail), the server's peak RSS, the ratio of the p50 upload to the anchor, and
the check. ``--big`` also sends a
2 GiB body (chunked, no length: the server counts it and refuses it past the 1 GiB budget
with 413) and one declaring 2 GiB (refused from the header), with the server's peak RSS.

    .venv/bin/python bench/server_load.py [--clients 50] [--uploads 20] [--readers 20] [--reads 10]
        [--kill-at 0.5] [--big]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from store import open_store  # noqa: E402
from store.tokens import add_token  # noqa: E402
from workbench.ingest import import_files  # noqa: E402
from workbench.usecases.comparisons import Compare, Inspect  # noqa: E402
from workbench.usecases.failures import ServedError  # noqa: E402
from workbench.usecases.remote import HttpClient, Remote  # noqa: E402

DEMO = REPO / "captures" / "demo" / "inference"

DIMS = {"model": "Llama 3.1 8B", "hardware": "1x H100 SXM5 80GB", "request_mix": "512 prompt / 128 output tokens"}


def capture(client: int, i: int, n: int = 200) -> dict:
    """A distinct inference capture (its own label and values: its own SHA-256)."""
    return {
        "format": "workbench.capture/1",
        "lens": "inference",
        "label": f"client {client} upload {i}",
        "recorded_at": "2026-11-29T10:00:00Z",
        "dimensions": DIMS,
        "window": {"kind": "steady", "warmup_excluded": 2},
        "work": {"unit": "tokens", "amount": 128 * n},
        "quality": {"error_rate": 0.0},
        "samples": [
            {
                "id": f"r-{j:04d}",
                "prompt_tokens": 512,
                "output_tokens": 128,
                "queue_ms": 40.0 + (j * 7 + i) % 13,
                "prefill_ms": 69.0 + client * 0.01,
                "decode_ms": 90.0,
                "ttft_ms": 110.0 + (j + i) % 17,
                "ok": True,
            }
            for j in range(n)
        ],
    }


class Server:
    def __init__(self, store_url: str, env: dict, port: int = 0, *options: str) -> None:
        self.store_url, self.env, self.options = store_url, env, options
        self.port = port
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "workbench",
                "--store",
                self.store_url,
                "serve",
                "--port",
                str(self.port),
                *self.options,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
        )
        for line in self.proc.stderr:  # type: ignore[union-attr]
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        else:
            raise SystemExit("wb serve did not start")
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()  # drain the log

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def peak_rss_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def anchor(files: list[Path], tmp: Path) -> float:
    """Median seconds of one in-process import into a fresh store (no HTTP, no server)."""
    st = open_store(f"sqlite:///{tmp / 'anchor.sqlite'}")
    times = []
    for path in files:
        t0 = time.perf_counter()
        import_files(st, [path])
        times.append(time.perf_counter() - t0)
    st.close()
    return statistics.median(times)


def big_bodies(server: Server, token: str) -> None:
    head = (
        "POST /api/v1/captures?name=big.json HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
        + token
        + "\r\nContent-Type: application/octet-stream\r\n"
    )
    for kind in ("declared", "chunked"):
        t0 = time.perf_counter()
        sent = 0
        with socket.create_connection(("127.0.0.1", server.port), timeout=120) as sock:
            if kind == "declared":
                sock.sendall((head + f"Content-Length: {2 << 30}\r\n\r\n").encode())
            else:
                sock.sendall((head + "Transfer-Encoding: chunked\r\n\r\n").encode())
                block = b"0" * (1 << 20)
                frame = b"%x\r\n%s\r\n" % (len(block), block)
                try:
                    while sent < (2 << 30):
                        sock.sendall(frame)
                        sent += len(block)
                except (BrokenPipeError, ConnectionResetError):
                    pass
            answer = b""
            try:
                while data := sock.recv(65536):
                    answer += data
            except ConnectionResetError:
                pass
        status = answer.split(b"\r\n", 1)[0].decode(errors="replace")
        print(
            f"2 GiB body ({kind}): {status!r} after {sent / (1 << 20):,.0f} MiB sent, {time.perf_counter() - t0:.1f} "
            f"s; "
            f"server peak RSS {server.peak_rss_mib():.0f} MiB"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--uploads", type=int, default=20)
    ap.add_argument("--readers", type=int, default=20, help="threads running comparisons and inspections")
    ap.add_argument("--reads", type=int, default=10, help="use cases each reader runs")
    ap.add_argument("--compare-every", type=int, default=5)
    ap.add_argument(
        "--kill-at", type=float, default=0.5, help="share of uploads acknowledged before kill -9 (0: no kill)"
    )
    ap.add_argument("--store", help="a store URL (default: a fresh SQLite file); PostgreSQL for a team's setup")
    ap.add_argument("--big", action="store_true", help="also send the 2 GiB bodies")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="wb-server-load-"))
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_DATA_HOME": str(tmp / "xdg")}
    env.pop("WB_SERVER", None)
    store_url = args.store or f"sqlite:///{tmp / 'served.sqlite'}"
    files: dict[int, list[Path]] = {}
    for c in range(args.clients):
        files[c] = []
        for i in range(args.uploads):
            path = tmp / "captures" / f"c{c:02d}-u{i:03d}.json"
            path.parent.mkdir(exist_ok=True)
            path.write_text(json.dumps(capture(c, i)))
            files[c].append(path)
    anchor_s = anchor([files[0][i] for i in range(min(20, args.uploads))], tmp)
    st = open_store(store_url)
    st.ensure_exists()
    token = add_token(st, "bench", "upload")
    demo = import_files(st, sorted(DEMO.glob("*.json")))  # what the readers compare: runs 1-15
    demo_runs = [r for entry in demo.to_json()["imported"] for r in entry["runs"]]
    st.close()
    # Every client is 127.0.0.1 here: the per-address cap is raised to let them all in at once.
    server = Server(store_url, env, 0, "--max-per-client", str(args.clients + args.readers + 8))
    total = args.clients * args.uploads
    acked: dict[str, list[int]] = {}  # sha256 -> runs, as the server acknowledged them
    upload_s: list[float] = []
    compare_s: list[float] = []
    inspect_s: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    killed = threading.Event()

    def worker(c: int) -> None:
        with HttpClient(server.url, token, retries=10, backoff_s=0.25) as client:
            mine: list[int] = []
            for i, path in enumerate(files[c]):
                t0 = time.perf_counter()
                try:
                    report = client.upload(path)
                except ServedError as exc:
                    with lock:
                        errors.append(f"{path.name}: {exc}")
                    continue
                dt = time.perf_counter() - t0
                runs = report["runs"] or [
                    int(n) for n in re.findall(r"runs (\d+)", " ".join(s["reason"] for s in report["skipped"]))
                ]
                with lock:
                    upload_s.append(dt)
                    acked[hashlib.sha256(path.read_bytes()).hexdigest()] = runs
                mine += runs
                if (i + 1) % args.compare_every == 0 and len(mine) >= 4:
                    t0 = time.perf_counter()
                    try:
                        body = json.dumps(
                            {"baseline": list(map(str, mine[-4:-2])), "candidate": list(map(str, mine[-2:]))}
                        )
                        doc = json.loads(
                            client.send(
                                "POST",
                                "/api/v1/op/compare",
                                idempotent=True,
                                content=lambda body=body: body.encode(),
                                headers={"Content-Type": "application/json"},
                            )
                        )
                        assert "comparable" in doc["comparison"]
                        with lock:
                            compare_s.append(time.perf_counter() - t0)
                    except ServedError as exc:
                        with lock:
                            errors.append(f"compare: {exc}")

    def reader(r: int) -> None:
        """Comparisons and inspections of the demo's runs, through wb --server's transport."""
        base, cand = [str(i) for i in demo_runs[:5]], [str(i) for i in demo_runs[10:15]]
        change = ["engine_revision=v0.8.2:v0.8.3"]
        with Remote(server.url, token, retries=10, backoff_s=0.25) as wb:
            for i in range(args.reads):
                t0 = time.perf_counter()
                try:
                    if (i + r) % 2 == 0:
                        assert wb.call(Compare(baseline=base, candidate=cand, change=change)).comparison is not None
                        kept = compare_s
                    else:
                        assert wb.call(Inspect(baseline=base, candidate=cand, change=change)).result is not None
                        kept = inspect_s
                except ServedError as exc:
                    with lock:
                        errors.append(f"reader: {exc}")
                    continue
                with lock:
                    kept.append(time.perf_counter() - t0)

    def killer() -> None:
        while len(acked) < args.kill_at * total:
            time.sleep(0.01)
        server.kill9()
        killed.set()
        server.start()  # the same port: the clients' retries find it

    threads = [threading.Thread(target=worker, args=(c,)) for c in range(args.clients)]
    threads += [threading.Thread(target=reader, args=(r,)) for r in range(args.readers)]
    if args.kill_at > 0:
        threading.Thread(target=killer, daemon=True).start()
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    st = open_store(store_url)
    missing = [sha for sha, runs in acked.items() if st.find_capture(sha) is None]
    stored_runs = {r.id for r in st.list_runs()}
    lost_runs = [r for runs in acked.values() for r in runs if r not in stored_runs]
    captures_stored = st.counts()["capture"]
    duplicated = captures_stored - len(acked) - len(demo_runs)  # each upload one capture (of one run), once
    run_ids = [r for runs in acked.values() for r in runs]
    duplicated += len(run_ids) - len(set(run_ids)) + (len(stored_runs) - len(acked) - len(demo_runs))
    peak = server.peak_rss_mib()
    integrity = "n/a"
    if st.path is not None:
        import sqlite3

        integrity = sqlite3.connect(st.path).execute("PRAGMA integrity_check").fetchone()[0]
    print(
        f"{args.clients} clients x {args.uploads} uploads ({total}), a comparison every {args.compare_every}; "
        f"load average {os.getloadavg()[0]:.2f}; store {'PostgreSQL' if store_url.startswith('postgres') else 'SQLite'}"
    )
    print(
        f"kill -9 of the server after {args.kill_at:.0%} acknowledged: "
        f"{'done, restarted' if killed.is_set() else 'not done'}"
    )
    for name, times in (("uploads", upload_s), ("comparisons", compare_s), ("inspections", inspect_s)):
        rate = f" in {wall:.1f} s = {len(times) / wall:.1f}/s" if name == "uploads" else ""
        print(
            f"{name}: {len(times)}{rate}; p50 {pct(times, 0.5) * 1000:.0f} ms, p95 {pct(times, 0.95) * 1000:.0f} ms, "
            f"p99 {pct(times, 0.99) * 1000:.0f} ms"
        )
    print(f"server peak RSS {peak:.0f} MiB (the process serving at the end: after the restart, with --kill-at)")
    print(
        f"anchor (in-process import_files, no HTTP): {anchor_s * 1000:.0f} ms; p50 upload / anchor = "
        f"{pct(upload_s, 0.5) / anchor_s:.1f}x "
        f"(under {args.clients} concurrent clients)"
    )
    print(
        f"check: {len(acked)} acknowledged uploads, {len(missing)} missing from the store, {len(lost_runs)} "
        f"acknowledged runs missing, {duplicated} stored twice; {captures_stored} captures stored; "
        f"integrity_check {integrity}; errors {len(errors)}"
    )
    for line in errors[:5]:
        print("  error:", line)
    if args.big:
        big_bodies(server, token)
    server.stop()
    ok = (
        not missing
        and not lost_runs
        and not duplicated
        and len(acked) == total
        and not errors
        and integrity in ("ok", "n/a")
    )
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
