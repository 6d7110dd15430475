"""Benchmark: import and compare two load sweeps of LEVELS levels × REQUESTS requests.

Writes two synthetic vLLM ``bench serve --save-detailed`` sweeps (one file per request
rate, per-request arrays with GAPS inter-token gaps each), then, each step in its own
process so its peak RSS is its own:

  (a) json.load of every file of one sweep, one after the other (the floor);
  (b) ``wb import`` of both sweeps into a fresh SQLite store;
  (c) ``wb compare SWEEP --vs SWEEP --slo ttft_p95=500ms,tpot_p95=50ms --json``.

Prints seconds and peak RSS beside the total file size. Issue 17 item 7: bounded
memory (peak RSS a small multiple of one level's data, not of the sweep).

    .venv/bin/python bench/sweep_compare.py [--levels 20] [--requests 100000] [--gaps 8]
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
mode, store, *args = sys.argv[1:]
t0 = time.perf_counter()
if mode == "json.load":
    n = 0
    for p in args:
        with open(p, "rb") as f:
            n += len(json.load(f)["ttfts"])
        # one file at a time, as the importer reads them
elif mode == "import":
    from store import open_store
    from workbench.ingest import import_files
    st = open_store(store)
    t0 = time.perf_counter()
    rep = import_files(st, [Path(a) for a in args])
    n = len(rep.run_ids)
else:
    from workbench.cli import main
    try:
        main(["--store", store, "compare", args[0], "--vs", args[1], "--slo", "ttft_p95=500ms,tpot_p95=50ms", "--json"])
    except SystemExit as exc:
        assert not exc.code, exc.code
    n = 1
elapsed = time.perf_counter() - t0
print(json.dumps({"n": n, "seconds": elapsed, "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}), file=sys.stderr)
"""


def write_level(path: Path, rate: float, n: int, gaps: int, slow: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    ttft = rng.gamma(2.0, 0.02 * slow, n).round(5)
    itl = rng.gamma(2.0, 0.005 * slow, (n, gaps)).round(5)
    out = np.full(n, gaps + 1)
    lat = ttft + itl.sum(axis=1)
    errors = np.where(rng.random(n) < 0.01, "timeout", "")
    achieved = min(rate, 40.0 / slow)
    doc = {
        "date": "20260101-000000",
        "backend": "vllm",
        "model_id": "org/model",
        "num_prompts": n,
        "request_rate": rate,
        "burstiness": 1.0,
        "max_concurrency": None,
        "duration": n / achieved,
        "completed": int((errors == "").sum()),
        "request_throughput": achieved,
        "input_lens": [512] * n,
        "output_lens": out.tolist(),
        "ttfts": ttft.tolist(),
        "latencies": lat.round(5).tolist(),
        "itls": itl.tolist(),
        "errors": errors.tolist(),
    }
    with open(path, "w") as f:
        json.dump(doc, f)


def child(mode: str, store: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, "-c", CHILD, mode, store, *args], capture_output=True, text=True, env=env)
    if proc.returncode:
        raise SystemExit(f"{mode} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stderr.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--levels", type=int, default=20)
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--gaps", type=int, default=8, help="inter-token gaps per request")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        sides = {}
        for side, slow in (("base", 1.0), ("cand", 1.3)):
            folder = root / side
            folder.mkdir()
            files = []
            for i in range(a.levels):
                rate = 2.0 * (i + 1)
                path = folder / f"vllm-{rate:g}qps.json"
                write_level(path, rate, a.requests, a.gaps, slow, seed=i + (1000 if side == "cand" else 0))
                files.append(str(path))
            sides[side] = files
        size = sum(Path(p).stat().st_size for files in sides.values() for p in files)
        print(
            f"wrote 2 sweeps x {a.levels} levels x {a.requests:,} requests ({size / 2**20:,.0f} MiB) in "
            f"{time.perf_counter() - t0:.0f} s"
        )
        store = f"sqlite:///{root / 'wb.sqlite'}"
        floor = child("json.load", store, *sides["base"])
        base_import = child("import", store, *sides["base"])
        cand_import = child("import", store, *sides["cand"])
        # Both sweeps got default labels from the files: name them by their ids.
        from store import open_store

        st = open_store(store)
        sweeps = []
        for run in st.list_runs():
            sweep = st.load_run(run.id, tables=[]).meta.get("sweep", {}).get("id")
            if sweep and sweep not in sweeps:
                sweeps.append(sweep)
        st.close()
        cmp = child("compare", store, sweeps[0], sweeps[1])
        level_mib = size / 2 / a.levels / 2**20
        print(f"one level file: {level_mib:,.1f} MiB; one sweep: {size / 2 / 2**20:,.0f} MiB")
        for name, r in (
            ("json.load (one sweep, floor)", floor),
            ("wb import baseline sweep", base_import),
            ("wb import candidate sweep", cand_import),
            ("wb compare sweep vs sweep", cmp),
        ):
            print(f"  {name:<30} {r['seconds']:8.1f} s   peak RSS {r['peak_rss'] / 2**20:8.0f} MiB")
        print(f"  import / json.load time: {base_import['seconds'] / floor['seconds']:.2f}x")


if __name__ == "__main__":
    main()
