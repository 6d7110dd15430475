"""Correctness anchor: our GPU busy and idle time per rank against HTA's temporal breakdown.

HTA (HolisticTraceAnalysis, now published as ``traceinsight``) is a benchmark-only
dependency that wb never imports, and is never installed into wb's environment: it runs
in a child process with an interpreter of its own (``--hta-python``, or
``$WB_HTA_PYTHON``), made once with

    python -m venv /tmp/hta-venv
    /tmp/hta-venv/bin/pip install "pandas>=1.5.2" "plotly>=5.11" "networkx>=3.1" "pydot>=1.3" pyyaml psutil
    /tmp/hta-venv/bin/pip install --no-deps traceinsight==0.6.1   # (it lists jupyterlab, which it never imports)

For each real trace in ``../shared/real-captures/training`` it prints, per rank:

* HTA's busy (= kernel_time - idle_time) and idle time;
* ours under HTA's definition (same events, same filter: GPU activity launched before
  the last ProfilerStep starts, span from the first to the last such activity), and
  the difference in per cent (the anchor: within 0.5 %);
* ours as wb reports it (the sum over the kept steps of gpu_busy_ms and idle_ms),
  which differs by definition; docs/training.md explains each difference.

Run: ``.venv/bin/python bench/hta_compare.py --hta-python /tmp/hta-venv/bin/python [trace dir ...]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
REAL = REPO.parent / "shared" / "real-captures" / "training"
HTA_BREAKDOWN = r"""
import json, logging, sys, warnings
warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
df = TraceAnalysis(trace_dir=sys.argv[1]).get_temporal_breakdown(visualize=False)
print(json.dumps({int(r["rank"]): [float(r["kernel_time(us)"] - r["idle_time(us)"]), float(r["idle_time(us)"])]
                  for _, r in df.iterrows()}))
"""


def hta_python(given: str | None) -> str:
    """The interpreter HTA is installed in (never wb's own environment)."""
    python = given or os.environ.get("WB_HTA_PYTHON")
    if not python:
        raise SystemExit("HTA runs in an environment of its own: give --hta-python PATH (see this script's docstring)")
    return python


def hta_breakdown(trace_dir: Path, python: str) -> dict[int, tuple[float, float]]:
    """rank -> (busy us, idle us) from HTA's get_temporal_breakdown, in a child process."""
    out = subprocess.run([python, "-c", HTA_BREAKDOWN, str(trace_dir)], capture_output=True, text=True, cwd="/")
    if out.returncode:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}")
    return {int(k): (v[0], v[1]) for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def ours_hta_definition(trace, whole_us: bool = False) -> tuple[float, float]:
    """(busy us, idle us) over HTA's event set and filter, computed with wb's interval union.

    ``whole_us``: also round float-microsecond traces inward to whole microseconds, as
    HTA does (``round_down_time_stamps``: ts = ceil(ts), end = floor(ts + dur)), so a
    short kernel can shrink to nothing.
    """
    from workbench.training import span_sets as iv

    gpu, rt = dict(trace.gpu), trace.runtime
    if whole_us:
        start = -((-gpu["start"]) // 1000) * 1000
        end = (gpu["end"] // 1000) * 1000
        gpu["start"], gpu["end"] = start, end  # HTA keeps the negative durations this makes
    keep = np.ones(len(gpu["start"]), dtype=bool)
    if len(trace.steps["start"]) >= 2:
        last_start = trace.steps["start"].max()
        order = np.argsort(rt["correlation"], kind="stable")
        sorted_corr = rt["correlation"][order]
        pos = np.minimum(np.searchsorted(sorted_corr, gpu["correlation"]), max(len(sorted_corr) - 1, 0))
        found = (
            (len(sorted_corr) > 0) & (sorted_corr[pos] == gpu["correlation"])
            if len(sorted_corr)
            else np.zeros(len(pos), bool)
        )
        launch = np.where(found, rt["start"][order[pos]] if len(sorted_corr) else 0, np.iinfo(np.int64).max)
        keep = found & (launch < last_start)
    starts, ends = gpu["start"][keep], gpu["end"][keep]
    if len(starts) == 0:
        return 0.0, 0.0
    if not whole_us:
        u = iv.union(starts, ends)
        span, busy = float(u.ends[-1] - u.starts[0]), float(u.total)
    else:
        # HTA's merge_kernel_intervals: a group's end is the largest end inside it, so an
        # interval that rounding turned negative subtracts from the busy time.
        order = np.argsort(starts, kind="stable")
        s, e = starts[order], ends[order]
        opens = np.ones(len(s), dtype=bool)
        opens[1:] = s[1:] > np.maximum.accumulate(e)[:-1]
        first = np.flatnonzero(opens)
        g_start, g_end = s[first], np.maximum.reduceat(e, first)
        span, busy = float(g_end[-1] - g_start[0]), float((g_end - g_start).sum())
    return busy / 1000.0, (span - busy) / 1000.0


def cases(args: list[str]) -> list[Path]:
    if args:
        return [Path(a) for a in args]
    return sorted({p.parent for p in REAL.rglob("*.json.gz")})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hta-python", help="the interpreter HTA is installed in (default: $WB_HTA_PYTHON)")
    ap.add_argument("traces", nargs="*", help="trace directories (default: the real captures)")
    args = ap.parse_args()
    python = hta_python(args.hta_python)
    from workbench.importers.base import ImportOptions
    from workbench.importers.kineto import read_rank
    from workbench.training.job import build_job

    print(
        f"{'trace':34} {'rank':>4} {'HTA busy ms':>12} {'ours ms':>10} {'diff %':>7} {'HTA idle ms':>12} "
        f"{'ours ms':>10} {'diff %':>7}"
        f" | {'whole-us busy':>13} {'diff %':>7} {'idle':>9} {'diff %':>7} | {'wb busy ms':>10} {'wb idle ms':>10}"
    )
    worst, worst_at, exact, compared = 0.0, "", 0, 0
    for trace_dir in cases(args.traces):
        files = sorted(trace_dir.glob("*.json*"))
        try:
            hta = hta_breakdown(trace_dir, python)
        except Exception as exc:  # noqa: BLE001 - HTA fails on some real traces; say so and go on
            print(f"{trace_dir.name:34} HTA failed: {type(exc).__name__}: {str(exc)[:80]}")
            hta = {}
        ranks = [read_rank(p) for p in files]
        record = build_job(ranks, ImportOptions(), format_name="Kineto trace")
        s = record.tables["samples"]
        for trace in ranks:
            rank = trace.rank if trace.rank is not None else 0
            busy, idle = ours_hta_definition(trace)
            tbusy, tidle = ours_hta_definition(trace, whole_us=True)
            sel = s["rank"] == rank
            wb_busy, wb_idle = float(np.nansum(s["gpu_busy_ms"][sel])), float(np.nansum(s["idle_ms"][sel]))
            if rank in hta:
                hb, hi = hta[rank]
                db, di, tdb, tdi = (
                    100 * (x - ref) / ref if ref else float("nan")
                    for x, ref in ((busy, hb), (idle, hi), (tbusy, hb), (tidle, hi))
                )
                integer_us = bool(np.all(trace.gpu["start"] % 1000 == 0) and np.all(trace.gpu["end"] % 1000 == 0))
                # Same definition: integer-us traces as they are; ns-resolution traces once truncated as HTA does.
                diff = max(abs(db if integer_us else tdb), abs(di if integer_us else tdi))
                compared += 1
                exact += diff < 1e-9
                if diff > worst:
                    worst, worst_at = diff, f"{trace_dir.name} rank {rank}"
                print(
                    f"{trace_dir.name[:34]:34} {rank:>4} {hb / 1000:12.3f} {busy / 1000:10.3f} {db:7.3f} "
                    f"{hi / 1000:12.3f} {idle / 1000:10.3f} {di:7.3f}"
                    f" | {tbusy / 1000:13.3f} {tdb:7.3f} {tidle / 1000:9.3f} {tdi:7.3f} | {wb_busy:10.3f} "
                    f"{wb_idle:10.3f}"
                )
            else:
                print(
                    f"{trace_dir.name[:34]:34} {rank:>4} {'-':>12} {busy / 1000:10.3f} {'-':>7} {'-':>12} "
                    f"{idle / 1000:10.3f} {'-':>7}"
                    f" | {wb_busy:10.3f} {wb_idle:10.3f}"
                )
    print(
        f"same figures as HTA on {exact} of {compared} ranks (ns-resolution traces rounded as HTA does); largest "
        f"difference "
        f"{worst:.3f} % ({worst_at}); each remaining difference is one of definition or float arithmetic: "
        f"docs/training.md"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
