"""Benchmark: import a 1,000,000-job sacct file and compute the fleet window metrics.

Target (issue 9): 1,000,000 jobs in under 30 s with peak RSS under 1 GB. Prints
jobs/s, peak RSS and the ratios against the target, one run. The file is generated
first (not timed) in the sacct layout of captures/fleet_sacct, 22 columns, with
pending jobs (``Unknown`` start), dependency holds (Eligible after Submit), typed
``gres/gpu`` and multi-line JobName fields.

    python bench/sacct_import.py [--jobs 1000000] [--keep PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_S = 30.0
TARGET_RSS_MB = 1024.0


def _generator():
    spec = importlib.util.spec_from_file_location("fleet_sacct_generate", ROOT / "captures/fleet_sacct/generate.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def write_jobs(path: Path, n: int, seed: int = 1) -> None:
    gen = _generator()
    rng = random.Random(seed)
    t0 = 1_790_000_000.0
    span = 30 * 86400

    def rows():
        for i in range(n):
            gpus = rng.choice((1, 1, 2, 4, 8, 8, 16, 32, 64))
            submit = t0 + rng.random() * span
            eligible = submit + (rng.random() * 7200 if i % 20 == 0 else 0)  # 5 % dependency holds
            if i % 25 == 0:
                yield gen.row(i + 1, gpus, submit, eligible, None, None, "PENDING", reason="Resources")
                continue
            start = eligible + rng.expovariate(1 / 120)
            end = start + rng.expovariate(1 / 3600)
            name = "multi\nline" if i % 1000 == 0 else "train"
            yield gen.row(i + 1, gpus, submit, eligible, start, end, "COMPLETED", name=name)

    gen.write_sacct(path, rows())


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=1_000_000)
    ap.add_argument("--keep", type=Path, help="write the generated file here and keep it")
    args = ap.parse_args()

    tmp = None
    if args.keep:
        path = args.keep
    else:
        tmp = tempfile.TemporaryDirectory()
        path = Path(tmp.name) / "sacct.txt"
    t = time.perf_counter()
    write_jobs(path, args.jobs)
    gen_s = time.perf_counter() - t
    size_mb = path.stat().st_size / 1e6
    rss_before = peak_rss_mb()

    from lenses.fleet import LENS, read_window
    from workbench.importers.base import ImportOptions
    from workbench.importers.sacct import IMPORTER

    t, c = time.perf_counter(), time.process_time()
    options = ImportOptions(params={"tz": "UTC", "wait_target_s": 600})
    (run,) = list(IMPORTER.read([path], options))
    import_s, import_cpu = time.perf_counter() - t, time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    window = read_window(run)
    metrics = LENS.window_metrics(run)
    mean_wait = LENS.primary_value(run)
    metrics_s, metrics_cpu = time.perf_counter() - t, time.process_time() - c
    total, total_cpu = import_s + metrics_s, import_cpu + metrics_cpu
    rss = peak_rss_mb()

    print(f"sacct import benchmark: {run.sample_count:,} jobs, {size_mb:.0f} MB file (generated in {gen_s:.1f} s, untimed)")
    print(f"  import           {import_s:8.2f} s   {run.sample_count / import_s:12,.0f} jobs/s   (CPU {import_cpu:.2f} s)")
    print(f"  window metrics   {metrics_s:8.2f} s   mean wait {mean_wait:.1f} s, attainment {metrics['service_attainment']:.1f} %, "
          f"allocated {metrics['allocated_gpus']:.0f} GPUs, waiting {len(window.waiting_gangs):,}")
    print(f"  total            {total:8.2f} s   {run.sample_count / total:12,.0f} jobs/s   vs target {TARGET_S:.0f} s: {total / TARGET_S:.2f}x of budget")
    print(f"  total CPU        {total_cpu:8.2f} s   {run.sample_count / total_cpu:12,.0f} jobs/s   (wall time counts other load; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    print(f"  peak RSS         {rss:8.0f} MB  (before import {rss_before:.0f} MB)   vs target {TARGET_RSS_MB:.0f} MB: {rss / TARGET_RSS_MB:.2f}x of budget")
    print(f"  python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
