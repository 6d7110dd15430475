r"""Training import speed and memory, side by side with HTA, in one run.

Cases (inputs are prepared once under ``$WB_BENCH_DIR``, default /tmp/wb-bench-training):

* ``1 rank``: the real ``df_index_resolver`` trace (216 k events, 54 MB of JSON);
* ``8 ranks``: 8 copies of it with ``distributedInfo.rank`` rewritten to 0..7
  (one-line JSON, gzip), as in the research notes' scale test. The separators keep
  their spaces: HTA finds ranks with the regex ``"rank":\s+(\d+)`` and silently reads
  fully compact files all as rank 0 (one survives);
* ``1 GB``: one rank of about 1 GB of JSON (the same events repeated with shifted
  times, step numbers and correlation ids); ours only, the target being peak RSS
  under 2 GB.

Ours is ``wb``'s Kineto importer: streamed parse, per-step breakdown, operations and
diagnostics (``IMPORTER.read``). HTA's is ``TraceAnalysis(trace_dir)`` plus
``get_temporal_breakdown``. Each side runs in a fresh process; the figures are the
wall time of that work (imports excluded, reported apart), its CPU time (the process
and its reaped workers; steadier than wall time on a shared machine) and the peak of
the summed RSS of the process tree (HTA and wb both use worker processes), sampled
every 20 ms.

Beside them, in the same run: the floor (gunzip + ``json.load`` of the same files, in a
fresh process) and ``wb import`` end to end into a new store, with ratios and the load
average.

And the reader alone (issue 47's row): ``read_rank`` of the one rank's uncompressed JSON in
a fresh process, best of three, as MB/s beside Perfetto's published 177 MB/s.

HTA runs with an interpreter of its own (``--hta-python``, or ``$WB_HTA_PYTHON``; see
bench/hta_compare.py for making one): it is never installed into wb's environment. wb's
children run with bytecode cached (bench/_cached.py). The sides alternate, round after
round (``--rounds``), and the best round of each is kept.

Run: ``.venv/bin/python bench/training_import.py --hta-python /tmp/hta-venv/bin/python [--no-1gb] [--no-8] [--rounds 2]``
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from _cached import env as cached_env

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
REAL = REPO.parent / "shared" / "real-captures" / "training" / "hta-df_index_resolver" / "df_index_resolver.json.gz"
WORK = Path(os.environ.get("WB_BENCH_DIR", "/tmp/wb-bench-training"))

OURS = r"""
import json, resource, sys, time
def cpu():
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))
t0 = time.perf_counter()
from pathlib import Path
from workbench.importers.kineto import IMPORTER
from workbench.importers.base import ImportOptions
t1 = time.perf_counter(); c1 = cpu()
paths = sorted(p for p in Path(sys.argv[1]).iterdir() if p.is_file())
runs = list(IMPORTER.read(paths, ImportOptions()))
t2 = time.perf_counter()
s = runs[0].tables["samples"]
print(json.dumps({"import_s": t1 - t0, "work_s": t2 - t1, "cpu_s": cpu() - c1, "rows": int(len(s["step"])), "ranks": len(set(s["rank"].tolist()))}))
"""

HTA = r"""
import json, resource, sys, time, logging, warnings
def cpu():
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))
warnings.simplefilter("ignore")
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
logging.disable(logging.WARNING)
t1 = time.perf_counter(); c1 = cpu()
analysis = TraceAnalysis(trace_dir=sys.argv[1])
df = analysis.get_temporal_breakdown(visualize=False)
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "work_s": t2 - t1, "cpu_s": cpu() - c1, "rows": int(len(df)), "ranks": int(len(df))}))
"""

# The reader alone: read_rank of one uncompressed rank file, best of three (CPU s).
PARSE = r"""
import json, resource, sys, time
from pathlib import Path
from workbench.importers.kineto import read_rank
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
path = next(p for p in Path(sys.argv[1]).iterdir() if p.is_file())
best = min((lambda c: (read_rank(path), cpu() - c)[1])(cpu()) for _ in range(3))
print(json.dumps({"import_s": 0.0, "work_s": best, "cpu_s": best, "rows": path.stat().st_size, "ranks": 1}))
"""

# The floor: gunzip + json.load of every file, nothing kept.
FLOOR = r"""
import gzip, json, resource, sys, time
from pathlib import Path
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t1 = time.perf_counter(); c1 = cpu()
paths = sorted(p for p in Path(sys.argv[1]).iterdir() if p.is_file())
for p in paths:
    with (gzip.open(p) if p.suffix == ".gz" else open(p, "rb")) as f:
        json.load(f)
print(json.dumps({"import_s": 0.0, "work_s": time.perf_counter() - t1, "cpu_s": cpu() - c1, "rows": 0, "ranks": len(paths)}))
"""

# `wb import` end to end into a new store (interpreter start, imports, store creation and
# writes included: the figure a user waits for is process s).
WB_IMPORT = r"""
import json, resource, sys, tempfile, time
def cpu():
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))
t0 = time.perf_counter()
from workbench.cli import main
t1 = time.perf_counter(); c1 = cpu()
with tempfile.TemporaryDirectory() as tmp:
    main(["--store", tmp + "/wb.sqlite", "import", "--json", sys.argv[1]])
print(json.dumps({"import_s": t1 - t0, "work_s": time.perf_counter() - t1, "cpu_s": cpu() - c1, "rows": 0, "ranks": 0}))
"""


def run_measured(code: str, trace_dir: Path, python: str | None = None) -> dict:
    """Run ``code`` in a fresh interpreter (wb's with bytecode cached, or ``python``: HTA's);
    its JSON line plus the peak summed RSS of its process tree (sampled with psutil when
    installed; else the process's own peak from wait4, which leaves out worker processes)."""
    try:
        import psutil
    except ImportError:
        psutil = None
    env = cached_env() if python is None else {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [python or sys.executable, "-c", code, str(trace_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
        cwd="/" if python else None,
    )
    peak = 0
    if psutil is not None:
        parent = psutil.Process(proc.pid)
        while proc.poll() is None:
            try:
                tree = [parent, *parent.children(recursive=True)]
                peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
            except psutil.Error:
                pass
            time.sleep(0.02)
        out, _ = proc.communicate()
        returncode = proc.returncode
    else:
        out = proc.stdout.read()
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = returncode = os.waitstatus_to_exitcode(status)
        peak = usage.ru_maxrss * 1024
    if returncode != 0:
        raise RuntimeError(f"benchmark child failed (exit {returncode}) on {trace_dir}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss_mb"] = peak / 2**20
    result["process_s"] = time.perf_counter() - start
    return result


# -- inputs ----------------------------------------------------------------------------------------


def prepare_one() -> Path:
    d = WORK / "one"
    d.mkdir(parents=True, exist_ok=True)
    target = d / REAL.name
    if not target.exists():
        target.write_bytes(REAL.read_bytes())
    return d


def prepare_plain() -> Path:
    """The one rank's JSON uncompressed (the reader's rate is of JSON bytes)."""
    d = WORK / "one-json"
    d.mkdir(parents=True, exist_ok=True)
    target = d / REAL.name.removesuffix(".gz")
    if not target.exists():
        target.write_bytes(gzip.decompress(REAL.read_bytes()))
    return d


def prepare_eight() -> Path:
    d = WORK / "eight"
    if len(list(d.glob("rank-*.json.gz"))) == 8:
        return d
    d.mkdir(parents=True, exist_ok=True)
    with gzip.open(REAL) as f:
        doc = json.load(f)
    for rank in range(8):
        doc["distributedInfo"]["rank"] = rank
        doc["distributedInfo"]["world_size"] = 8
        with gzip.open(d / f"rank-{rank}.json.gz", "wt", compresslevel=6) as f:
            json.dump(doc, f)  # one line, but with the space HTA's rank regex needs
    return d


def prepare_big(target_bytes: int = 1 << 30) -> Path:
    d = WORK / "big"
    out = d / "big.json"
    if out.exists() and out.stat().st_size >= target_bytes * 0.95:
        return d
    d.mkdir(parents=True, exist_ok=True)
    with gzip.open(REAL) as f:
        text = f.read().decode()
    start = text.index('"traceEvents"')
    open_at = text.index("[", start) + 1
    close_at = text.rindex("]")
    header, body, trailer = text[:open_at], text[open_at:close_at].strip(), text[close_at:]
    copies = max(1, target_bytes // len(body) + 1)
    ts_re, step_re, corr_re = (
        re.compile(r'"ts": (\d+)'),
        re.compile(r"ProfilerStep#(\d+)"),
        re.compile(r'"correlation": (\d+)'),
    )
    with open(out, "w") as f:
        f.write(header)
        for k in range(copies):
            shift_us, shift_step, shift_corr = k * 3_000_000, k * 100, k * 10_000_000
            chunk = ts_re.sub(lambda m: f'"ts": {int(m.group(1)) + shift_us}', body)  # noqa: B023 - used in this iteration
            chunk = step_re.sub(lambda m: f"ProfilerStep#{int(m.group(1)) + shift_step}", chunk)  # noqa: B023 - used in this iteration
            chunk = corr_re.sub(lambda m: f'"correlation": {int(m.group(1)) + shift_corr}', chunk)  # noqa: B023 - used in this iteration
            f.write(("," if k else "") + chunk)
        f.write(trailer)
    return d


# -- report -----------------------------------------------------------------------------------------


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def best(rounds: list[dict]) -> dict:
    """The round with the least work time (a shared machine only ever slows a round down)."""
    return min(rounds, key=lambda r: r["work_s"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-1gb", action="store_true", help="skip the 1 GB case")
    ap.add_argument("--no-8", action="store_true", help="skip the 8-rank case")
    ap.add_argument("--no-hta", action="store_true", help="run ours only")
    ap.add_argument("--hta-python", help="the interpreter HTA is installed in (default: $WB_HTA_PYTHON)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of each side, alternating; the best is kept")
    args = ap.parse_args()
    hta_python = None if args.no_hta else (args.hta_python or os.environ.get("WB_HTA_PYTHON"))
    if not args.no_hta and not hta_python:
        raise SystemExit(
            "HTA runs in an environment of its own: --hta-python PATH (see bench/hta_compare.py), or --no-hta"
        )
    print(f"load average {load_average()} (1, 5, 15 min; {os.cpu_count()} CPUs, shared machine)")
    plain = prepare_plain()
    size_mb = sum(p.stat().st_size for p in plain.iterdir()) / 1e6
    parse = best([run_measured(PARSE, plain) for _ in range(args.rounds)])
    print(
        f"{'1 rank':10} {'parse':9} read_rank of {size_mb:.1f} MB of JSON: {parse['cpu_s']:.3f} s CPU = "
        f"{size_mb / parse['cpu_s']:.0f} MB/s (target >= 177 MB/s, Perfetto's published C++ rate: "
        f"{size_mb / parse['cpu_s'] / 177:.2f}x of it); load average {load_average()}"
    )
    cases = [("1 rank", prepare_one())] + ([] if args.no_8 else [("8 ranks", prepare_eight())])
    print(
        f"{'case':10} {'side':9} {'work s':>8} {'CPU s':>7} {'peak RSS MB':>12} {'imports s':>10} {'process s':>10}  "
        f"rows"
    )
    for name, trace_dir in cases:
        ours_rounds, hta_rounds = [], []
        for _ in range(args.rounds):  # the sides alternate, so that a busy moment slows both alike
            ours_rounds.append(run_measured(OURS, trace_dir))
            if hta_python:
                hta_rounds.append(run_measured(HTA, trace_dir, hta_python))
        ours = best(ours_rounds)
        print(
            f"{name:10} {'wb':9} {ours['work_s']:8.2f} {ours['cpu_s']:7.2f} {ours['peak_rss_mb']:12.0f} "
            f"{ours['import_s']:10.2f} {ours['process_s']:10.2f}  {ours['rows']} rows, {ours['ranks']} ranks"
        )
        floor = run_measured(FLOOR, trace_dir)
        print(
            f"{name:10} {'floor':9} {floor['work_s']:8.2f} {floor['cpu_s']:7.2f} {floor['peak_rss_mb']:12.0f} {'':>10} "
            f"{floor['process_s']:10.2f}  gunzip + json.load"
        )
        cli = run_measured(WB_IMPORT, trace_dir)
        print(
            f"{name:10} {'wb import':9} {cli['work_s']:8.2f} {cli['cpu_s']:7.2f} {cli['peak_rss_mb']:12.0f} "
            f"{cli['import_s']:10.2f} {cli['process_s']:10.2f}  end to end into a new store"
        )
        print(
            f"{name:10} ratio: wb's read is {ours['work_s'] / floor['work_s']:.2f}x the floor in wall time, "
            f"{ours['cpu_s'] / floor['cpu_s']:.2f}x in CPU time; `wb import` whole process {cli['process_s']:.2f} s = "
            f"{cli['process_s'] / floor['process_s']:.2f}x the floor's process; load average now "
            f"{load_average()}"
        )
        if not hta_rounds:
            continue
        hta = best(hta_rounds)
        print(
            f"{name:10} {'HTA':9} {hta['work_s']:8.2f} {hta['cpu_s']:7.2f} {hta['peak_rss_mb']:12.0f} "
            f"{hta['import_s']:10.2f} {hta['process_s']:10.2f}  {hta['rows']} ranks"
        )
        print(
            f"{name:10} ratio: wb is {hta['work_s'] / ours['work_s']:.1f}x faster in wall time (target >= 6x), "
            f"{hta['cpu_s'] / ours['cpu_s']:.1f}x in CPU time, "
            f"uses {ours['peak_rss_mb'] / hta['peak_rss_mb']:.2f} of HTA's peak RSS (target <= 0.33); "
            f"whole process {hta['process_s'] / ours['process_s']:.1f}x; load average {load_average()}"
        )
    if not args.no_1gb:
        big = prepare_big()
        size = sum(p.stat().st_size for p in big.iterdir())
        ours = run_measured(OURS, big)
        print(
            f"{'1 GB':10} {'wb':5} {ours['work_s']:8.2f} {ours['cpu_s']:7.2f} {ours['peak_rss_mb']:12.0f} "
            f"{ours['import_s']:10.2f} {ours['process_s']:10.2f}  "
            f"{ours['rows']} rows; {size / 1e9:.2f} GB JSON; peak RSS target < 2048 MB: "
            f"{'met' if ours['peak_rss_mb'] < 2048 else 'NOT met'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
