"""Rank traces read sequentially, on the local process pool and on a Dask LocalCluster, in one run.

Input: 32 copies of the real ``df_index_resolver`` trace (216 k events, 54 MB of JSON,
3 MB gzip) with ``distributedInfo.rank`` rewritten to 0..31, under ``$WB_BENCH_DIR``
(default /tmp/wb-bench-cluster). Cases, each in a fresh interpreter:

* ``--jobs 1``: read in the importing process;
* ``--jobs 2``: the local process pool, 2 workers;
* ``LocalCluster(2)``: ``--cluster local:2``, 2 worker processes of one thread each
  (cluster start-up is measured apart: a real cluster is started once, not per import);
* ``LocalCluster(2), 8 ranks``: the same on 8 of the files, to see whether the
  client's memory grows with the number of ranks.

Figures: wall seconds of ``IMPORTER.read`` (read, reduce, build the run), seconds per
rank (wall / ranks, and the mean task wall and CPU time where the task ran), the scheduling
overhead per rank = (wall x workers - summed task seconds) / ranks (what the workers
spent not running a rank task: submission, transfer, waiting at the end), peak RSS of
the client process (the LocalCluster's scheduler runs inside it) and of the largest
child process (a worker), sampled every 20 ms, and bytes returned against bytes read.

Run: ``.venv/bin/python bench/cluster_import.py [--ranks 32]``
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REAL = REPO.parent / "shared" / "real-captures" / "training" / "hta-df_index_resolver" / "df_index_resolver.json.gz"
WORK = Path(os.environ.get("WB_BENCH_DIR", "/tmp/wb-bench-cluster"))

CHILD = r"""
import json, sys, time
from pathlib import Path
mode, trace_dir, limit = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
from workbench.importers.kineto import IMPORTER
from workbench.importers.base import ImportOptions
paths = sorted(p for p in trace_dir.iterdir() if p.name.startswith("rank-"))[:limit]
out = {"ranks": len(paths), "workers": 1}
if mode == "cluster":
    from workbench.training.cluster import open_cluster
    t0 = time.perf_counter()
    with open_cluster("local:2") as remote:
        out["startup_s"] = time.perf_counter() - t0
        print("READY", flush=True)
        t1 = time.perf_counter()
        run = next(iter(IMPORTER.read(paths, ImportOptions(rank_executor=remote))))
        out["wall_s"] = time.perf_counter() - t1
        out["workers"] = remote.workers
        out.update(remote.transfer.to_json())
elif mode == "pool":
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from workbench.training.parallel import LocalPool
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        local = LocalPool(pool, None)
        pool.submit(int).result()  # start-up apart, as for the cluster
        print("READY", flush=True)
        t1 = time.perf_counter()
        run = next(iter(IMPORTER.read(paths, ImportOptions(rank_executor=local))))
        out["wall_s"] = time.perf_counter() - t1
        out["workers"] = 2
        out.update(local.transfer.to_json())
else:
    print("READY", flush=True)
    t1 = time.perf_counter()
    run = next(iter(IMPORTER.read(paths, ImportOptions(params={"jobs": 1}))))
    out["wall_s"] = time.perf_counter() - t1
out["rows"] = int(len(run.tables["samples"]["step"]))
print(json.dumps(out))
"""


def prepare(ranks: int) -> Path:
    d = WORK / f"ranks{ranks}"
    if len(list(d.glob("rank-*.json.gz"))) == ranks:
        return d
    d.mkdir(parents=True, exist_ok=True)
    with gzip.open(REAL) as f:
        doc = json.load(f)
    for rank in range(ranks):
        doc["distributedInfo"]["rank"] = rank
        doc["distributedInfo"]["world_size"] = ranks
        with gzip.open(d / f"rank-{rank:04d}.json.gz", "wt", compresslevel=6) as f:
            json.dump(doc, f)
    return d


def measure(mode: str, trace_dir: Path, limit: int) -> dict:
    """Run one case in a fresh interpreter; peak RSS of it and of its largest descendant while it reads."""
    import psutil

    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, mode, str(trace_dir), str(limit)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    root = psutil.Process(proc.pid)
    assert proc.stdout is not None
    ready = proc.stdout.readline()  # start-up (interpreter, imports, workers) is not what is measured
    if not ready.startswith("READY"):
        proc.wait()
        raise RuntimeError(f"{mode}: child failed to start (exit {proc.returncode})")
    client_peak = worker_peak = 0
    while proc.poll() is None:
        try:
            client_peak = max(client_peak, root.memory_info().rss)
            for child in root.children(recursive=True):
                worker_peak = max(worker_peak, child.memory_info().rss)
        except psutil.Error:
            pass
        time.sleep(0.02)
    rest = proc.stdout.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{mode}: child failed (exit {proc.returncode})")
    result = json.loads(rest.strip().splitlines()[-1])
    result["client_rss_mb"] = client_peak / 2**20
    result["worker_rss_mb"] = worker_peak / 2**20 if worker_peak else None
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=32)
    args = ap.parse_args()
    trace_dir = prepare(args.ranks)
    size = sum(p.stat().st_size for p in trace_dir.iterdir())
    print(
        f"{args.ranks} ranks, {size / 1e6:.0f} MB gzip ({size / args.ranks / 1e6:.1f} MB per rank); load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    cases = [
        ("--jobs 1", "serial", args.ranks),
        ("--jobs 2", "pool", args.ranks),
        ("LocalCluster(2)", "cluster", args.ranks),
        ("LocalCluster(2), 8 ranks", "cluster", 8),
    ]
    print(
        f"{'case':26} {'wall s':>7} {'s/rank':>7} {'task s':>7} {'task CPU s':>10} {'overhead s/rank':>16} "
        f"{'client MB':>10} {'worker MB':>10} "
        f"{'read/rank':>10} {'returned/rank':>14}"
    )
    results = {}
    for name, mode, limit in cases:
        r = measure(mode, trace_dir, limit)
        results[name] = r
        n = r["ranks"]
        task = r.get("task_seconds")
        task_cpu = r.get("task_cpu_seconds")
        overhead = (r["wall_s"] * r["workers"] - task) / n if task is not None else None
        fmt = lambda v, spec: format(v, spec) if v is not None else "-"  # noqa: E731
        read = r.get("read_bytes")
        returned = r.get("returned_bytes")
        print(
            f"{name:26} {r['wall_s']:7.2f} {r['wall_s'] / n:7.3f} {fmt(task / n if task else None, '7.3f'):>7} "
            f"{fmt(task_cpu / n if task_cpu else None, '10.3f'):>10} "
            f"{fmt(overhead, '16.3f'):>16} {r['client_rss_mb']:10.0f} {fmt(r['worker_rss_mb'], '10.0f'):>10} "
            f"{fmt(read / n / 1e6 if read else None, '8.2f') + ' MB':>10} "
            f"{fmt(returned / n / 1e3 if returned else None, '10.1f') + ' kB':>14}"
            + (f"  (cluster start-up {r['startup_s']:.1f} s)" if "startup_s" in r else "")
        )
    pool, cluster = results["--jobs 2"], results["LocalCluster(2)"]
    print(
        f"cluster vs pool at 2 workers: {cluster['wall_s'] / pool['wall_s'] - 1:+.1%} wall (target within 10 %); "
        f"client peak RSS 8 ranks {results['LocalCluster(2), 8 ranks']['client_rss_mb']:.0f} MB vs {args.ranks} ranks "
        f"{cluster['client_rss_mb']:.0f} MB; returned/read {cluster['returned_bytes'] / cluster['read_bytes']:.3f} "
        f"(gzip on disk; {cluster['returned_bytes'] / (54e6 * cluster['ranks']):.4f} of the JSON)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
