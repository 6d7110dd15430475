"""Record real run times for the A/A bench: many short real processes, in time order.

    .venv/bin/python bench/aa_record.py [--chunks 6] [--runs 100] [--out bench/data/aa_run_times.json]

Three workloads, each a fresh process writing a native capture exactly as under
``wb rerun`` (``$WB_CAPTURE_OUT``): ``cpu`` (the bundled ``captures/workloads/cpu_workload.py``,
wall clock, its default), ``memory`` and ``sleep`` (``bench/aa_workloads.py``). Each run's
value is what a rerun plan takes by default: the mean ``step_ms`` of its capture.

Two conditions: ``idle`` (nothing of ours but the run; the machine is shared, so the load
average is recorded beside every chunk) and ``loaded`` (a background process this script
starts, and stops by its pid: it spins and sweeps a 32 MiB buffer, so it competes for a
core and for the caches). Runs are recorded in chunks of ``--runs`` consecutive runs of one
workload under one condition; chunks rotate over workloads and conditions, so a slow hour
of the machine does not fall on one cell only. ``bench/aa_sessions.py`` replays sessions
from the chunks in round structure (never across chunks, except where it models an
interruption). Re-running appends chunks to the file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORMAT = "wb.bench.aa-run-times/1"
DEFAULT_OUT = ROOT / "bench" / "data" / "aa_run_times.json"
WORKLOADS = {
    "cpu": ["captures/workloads/cpu_workload.py", "--size", "128", "--repeat", "4", "--steps", "20", "--warmup", "3"],
    "memory": ["bench/aa_workloads.py", "memory", "--steps", "10", "--warmup", "2"],
    "sleep": ["bench/aa_workloads.py", "sleep", "--steps", "20", "--warmup", "3"],
}
BACKGROUND = (
    "import numpy as np, time\n"
    "buf = np.ones(4 << 20)\n"
    "while True:\n"
    "    end = time.perf_counter() + 0.05\n"
    "    while time.perf_counter() < end: pass\n"
    "    buf += 1.0\n"
)


def machine() -> dict[str, object]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": model or platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }


def one_run(kind: str, capture: Path, env: dict[str, str]) -> float | None:
    """One real process; its mean step time in ms (None if it failed)."""
    capture.unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, *WORKLOADS[kind]],
        cwd=ROOT,
        env={**env, "WB_CAPTURE_OUT": str(capture)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=60,
    )
    if proc.returncode != 0 or not capture.is_file():
        return None
    samples = json.loads(capture.read_text())["samples"]
    return sum(s["step_ms"] for s in samples) / len(samples)


def record_chunk(kind: str, load: str, runs: int, t0: float, scratch: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    background = None
    if load == "loaded":
        background = subprocess.Popen([sys.executable, "-c", BACKGROUND], stdout=subprocess.DEVNULL)
        time.sleep(0.5)
    try:
        before = os.getloadavg()
        values: list[float | None] = []
        times: list[float] = []
        for _ in range(runs):
            times.append(round(time.time() - t0, 2))
            v = one_run(kind, scratch / "capture.json", env)
            values.append(None if v is None else float(f"{v:.6g}"))
        after = os.getloadavg()
    finally:
        if background is not None:
            os.kill(background.pid, signal.SIGTERM)
            background.wait()
    return {
        "workload": kind,
        "load": load,
        "started_s": times[0],
        "loadavg_before": [round(x, 2) for x in before],
        "loadavg_after": [round(x, 2) for x in after],
        "t_s": times,
        "values_ms": values,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=6, help="chunks per workload and condition")
    ap.add_argument("--runs", type=int, default=100, help="consecutive runs per chunk")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()
    doc = (
        json.loads(args.out.read_text())
        if args.out.is_file()
        else {
            "format": FORMAT,
            "machine": machine(),
            "workloads": {k: " ".join(["python", *v]) for k, v in WORKLOADS.items()},
            "statistic": "mean step_ms of the run's capture (what a rerun plan takes by default)",
            "background": BACKGROUND,
            "sessions": [],
        }
    )
    session = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "chunks": []}
    doc["sessions"].append(session)
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.chunks):
            for load in ("idle", "loaded") if i % 2 == 0 else ("loaded", "idle"):
                for kind in WORKLOADS:
                    chunk = record_chunk(kind, load, args.runs, t0, Path(tmp))
                    session["chunks"].append(chunk)
                    print(
                        f"{time.time() - t0:7.0f} s  chunk {i + 1}/{args.chunks} {kind:<6} {load:<6} "
                        f"load {chunk['loadavg_before'][0]:.2f}->{chunk['loadavg_after'][0]:.2f}",
                        file=sys.stderr,
                    )
                    args.out.parent.mkdir(parents=True, exist_ok=True)
                    tmp_out = args.out.with_suffix(".partial")
                    tmp_out.write_text(json.dumps(doc, separators=(",", ":")))
                    os.replace(tmp_out, args.out)


if __name__ == "__main__":
    main()
