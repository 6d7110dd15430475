"""Benchmark: import a 1,000,000-request native capture, beside the json.load floor.

Prints requests/s and peak RSS of (a) json.load of the same file, the floor, and (b) the
native importer reading it into columns and (c) `wb import` end to end into a fresh SQLite
store; each in its own process so peak RSS is its own. Targets (issue 2): import within
3x of the json.load time, peak RSS under 3x the file size.

    .venv/bin/python bench/import_native.py [--requests N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
mode, path, store = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
t0 = time.perf_counter()
if mode == "json.load":
    with open(path, "rb") as f:
        doc = json.load(f)
    n = len(doc["samples"])
elif mode == "parse":
    from workbench.importers.native import read_capture
    n = read_capture(path).sample_count
else:
    from store import open_store
    from workbench.ingest import import_files
    st = open_store(store)
    t0 = time.perf_counter()  # exclude schema creation
    rep = import_files(st, [path])
    n = st.get_run(rep.run_ids[0]).sample_count
elapsed = time.perf_counter() - t0
print(json.dumps({"n": n, "seconds": elapsed, "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def write_capture(path: Path, n: int) -> None:
    rng = np.random.default_rng(1)
    queue = rng.gamma(2, 20, n).round(2)
    prefill = rng.normal(69, 2, n).round(2)
    decode = rng.normal(90, 3, n).round(2)
    with open(path, "w") as f:
        f.write('{"format": "workbench.capture/1", "lens": "inference", "label": "bench", '
                '"dimensions": {"model": "bench"}, "window": {"kind": "steady"}, "samples": [\n')
        for i in range(n):
            sep = ",\n" if i else ""
            f.write(f'{sep}{{"id": "r-{i:07d}", "prompt_tokens": 512, "output_tokens": 128, "queue_ms": {queue[i]}, '
                    f'"prefill_ms": {prefill[i]}, "decode_ms": {decode[i]}, "ttft_ms": {round(queue[i] + prefill[i], 2)}, '
                    f'"e2e_ms": {round(queue[i] + prefill[i] + decode[i], 2)}, "ok": true}}')
        f.write("\n]}\n")


def run_child(mode: str, path: Path, store: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(path), store], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=1_000_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.json"
        t = time.perf_counter()
        write_capture(path, args.requests)
        size = path.stat().st_size
        print(f"capture: {args.requests:,} requests, {size / 1e6:.1f} MB (written in {time.perf_counter() - t:.1f} s)")
        results = {}
        for mode in ("json.load", "parse", "wb import"):
            store = f"sqlite:///{Path(tmp) / (mode.replace(' ', '_') + '.sqlite')}"
            results[mode] = r = run_child(mode, path, store)
            print(f"{mode:>10}: {r['seconds']:6.2f} s  {r['n'] / r['seconds']:>10,.0f} req/s  peak RSS {r['peak_rss'] / 1e6:7.1f} MB "
                  f"({r['peak_rss'] / size:.2f}x file)")
        floor = results["json.load"]["seconds"]
        for mode in ("parse", "wb import"):
            r = results[mode]
            print(f"{mode}: {r['seconds'] / floor:.2f}x the json.load time (target <= 3x); "
                  f"peak RSS {r['peak_rss'] / size:.2f}x file size (target < 3x)")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
