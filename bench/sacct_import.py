"""Benchmark: import a 1,000,000-job sacct file and compute the fleet window metrics.

Targets: 1,000,000 jobs in under 15 s with peak RSS under 1 GB (issue 19; issue 9 asked
30 s). Prints jobs/s, CPU time, peak RSS and the ratios against the targets and against
the anchor measured in the same run: ``csv.reader`` reading the same file (``|``
separated) row by row in a fresh process, nothing kept. The file is generated first (not
timed) in the sacct layout of captures/fleet_sacct, 22 columns, with pending jobs
(``Unknown`` start), dependency holds (Eligible after Submit), typed ``gres/gpu`` and
multi-line JobName fields.

    python bench/sacct_import.py [--jobs 1000000] [--keep PATH] [--reuse]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_S = 15.0
TARGET_RSS_MB = 1024.0


def _generator():
    spec = importlib.util.spec_from_file_location("fleet_sacct_generate", ROOT / "captures/fleet_sacct/generate.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def write_jobs(path: Path, n: int, seed: int = 1) -> None:
    """``n`` jobs over 30 days in the layout of captures/fleet_sacct (vectorized: numpy
    formats the times, so generating a million rows takes seconds, not minutes)."""
    import numpy as np

    gen = _generator()
    rng = np.random.default_rng(seed)
    t0, span = 1_790_000_000, 30 * 86400

    def stamps(t: np.ndarray, missing: np.ndarray) -> np.ndarray:
        out = t.astype("datetime64[s]").astype(str).astype(object)
        out[missing] = "Unknown"
        return out

    with open(path, "w", encoding="utf-8") as f:
        f.write("|".join(gen.FIELDS) + "\n")
        for first in range(0, n, 100_000):  # blocks keep the generator's memory small
            idx = np.arange(first, min(n, first + 100_000))
            m = len(idx)
            gpus = rng.choice(np.array([1, 1, 2, 4, 8, 8, 16, 32, 64]), size=m)
            submit = t0 + (rng.random(m) * span).astype(np.int64)
            eligible = submit + np.where(
                idx % 20 == 0, (rng.random(m) * 7200).astype(np.int64), 0
            )  # 5 % dependency holds
            pending = idx % 25 == 0
            start = eligible + rng.exponential(120, m).astype(np.int64)
            end = start + rng.exponential(3600, m).astype(np.int64)
            none = np.zeros(m, dtype=bool)
            sub, eli, sta, fin = (
                stamps(submit, none),
                stamps(eligible, none),
                stamps(start, pending),
                stamps(end, pending),
            )
            elapsed = np.where(pending, "", (end - start).astype(str)).astype(object)
            for k in range(m):
                i = int(idx[k])
                g = int(gpus[k])
                nodes = max(1, g // 8)
                tres = f"billing={g * 8},cpu={g * 8},gres/gpu:h100={g},gres/gpu={g},mem={g * 64}G,node={nodes}"
                job = str(i + 1)
                name = "multi\nline" if i % 1000 == 0 else "train"
                if pending[k]:
                    state, alloc, nodelist, reason = "PENDING", "", "None assigned", "Resources"
                else:
                    state, alloc, nodelist, reason = "COMPLETED", tres, f"gpu-node[{i % 64}]", "None"
                f.write(
                    "|".join(
                        (
                            job,
                            job,
                            name,
                            "user",
                            "research",
                            "gpu",
                            "normal",
                            state,
                            "0:0",
                            sub[k],
                            eli[k],
                            sta[k],
                            fin[k],
                            elapsed[k],
                            "1-00:00:00",
                            tres,
                            alloc,
                            str(nodes),
                            nodelist,
                            reason,
                            "synth",
                        )
                    )
                    + "\n"
                )


# The anchor: the cheapest full read of the file in Python, in its own process.
ANCHOR = r"""
import csv, sys
rows = 0
with open(sys.argv[1], newline="", encoding="utf-8") as f:
    for _row in csv.reader(f, delimiter="|"):
        rows += 1
print(rows)
"""


def anchor(path: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of csv.reader over ``path`` in a fresh process."""
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", ANCHOR, str(path)], stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if status:
        raise SystemExit(f"the csv.reader anchor failed ({status})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=1_000_000)
    ap.add_argument("--keep", type=Path, help="write the generated file here and keep it")
    ap.add_argument("--reuse", action="store_true", help="with --keep: use the file there if it exists")
    ap.add_argument("--generate-only", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.generate_only:
        write_jobs(args.generate_only, args.jobs)
        return

    tmp = None
    if args.keep:
        path = args.keep
    else:
        tmp = tempfile.TemporaryDirectory()
        path = Path(tmp.name) / "sacct.txt"
    t = time.perf_counter()
    if not (args.reuse and path.exists()):
        # A child process writes the file, so the peak RSS below is the import's own.
        subprocess.run([sys.executable, __file__, "--jobs", str(args.jobs), "--generate-only", str(path)], check=True)
    gen_s = time.perf_counter() - t
    size_mb = path.stat().st_size / 1e6
    load_before = os.getloadavg()[0]
    anchor_s, anchor_cpu, anchor_rss = anchor(path)
    rss_before = peak_rss_mb()

    from _cached import env as cached_env

    cached_env()  # (the import below runs in this process: its modules byte-compiled first)
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
    after_s, after_cpu, _after_rss = anchor(path)  # the anchor again, after: the two bracket the import
    anchor_s, anchor_cpu = (anchor_s + after_s) / 2, (anchor_cpu + after_cpu) / 2

    print(
        f"sacct import benchmark: {run.sample_count:,} jobs, {size_mb:.0f} MB file (generated in {gen_s:.1f} s, "
        f"untimed)"
    )
    print(
        f"  import           {import_s:8.2f} s   {run.sample_count / import_s:12,.0f} jobs/s   (CPU {import_cpu:.2f} s)"
    )
    print(
        f"  window metrics   {metrics_s:8.2f} s   mean wait {mean_wait:.1f} s, attainment "
        f"{metrics['service_attainment']:.1f} %, "
        f"allocated {metrics['allocated_gpus']:.0f} GPUs, waiting {len(window.waiting_gangs):,}"
    )
    print(
        f"  total            {total:8.2f} s   {run.sample_count / total:12,.0f} jobs/s   vs target {TARGET_S:.0f} s: "
        f"{total / TARGET_S:.2f}x of budget"
    )
    print(
        f"  total CPU        {total_cpu:8.2f} s   {run.sample_count / total_cpu:12,.0f} jobs/s   (wall time counts "
        f"other load; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
    )
    print(
        f"  peak RSS         {rss:8.0f} MB  (process before the import {rss_before:.0f} MB)   vs target "
        f"{TARGET_RSS_MB:.0f} MB: {rss / TARGET_RSS_MB:.2f}x of budget"
    )
    print(
        f"  anchor: csv.reader over the file (mean of two runs) {anchor_s:.2f} s wall, {anchor_cpu:.2f} s CPU, "
        f"{anchor_rss:.0f} MB peak "
        f"RSS; "
        f"the import is {import_s / anchor_s:.2f}x its wall, {import_cpu / anchor_cpu:.2f}x its CPU, "
        f"{rss / anchor_rss:.2f}x its RSS"
    )
    print(
        f"  target (issue 47): the import <= 1.5x csv.reader over the same file: {import_cpu / anchor_cpu:.2f}x CPU, "
        f"{import_s / anchor_s:.2f}x wall (csv.reader run before and after the import, the mean)"
    )
    print(
        f"  load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after (1 min; the machine is shared by "
        f"several engineers)"
    )
    print(f"  python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
