"""A job of N ranks end to end: import (local pool and Dask LocalCluster), compare, inspect, the straggler named.

Input: N copies of the real ``tests/data/training/sampled/sampled_rank-0.json.gz``
(HTA's ``trace_filter`` rank 0: two ProfilerSteps of about 610 ms, 4,855 events,
kernel names up to 1,956 characters), ranks rewritten to 0..N-1, world size N. Each
copy is jittered (delays of up to 2 ms inserted in three random compute kernels), and
two jobs are made:

* job A: jitter only;
* job B: jitter, and one straggler rank S: in each step the compute kernel before the
  step's first collective runs ``--straggle-ms`` longer on rank S, while on every other
  rank that collective runs that much longer (they wait for S); later events shift, so
  step times stay level, as in a synchronous job.

Cases, each ``wb`` in a fresh process (peak RSS of it, the client, and of its largest
descendant, a worker, sampled every 20 ms): import A and B with the local pool into one
store, import B with ``--cluster local:2`` into another, ``wb compare A --vs B`` and
``wb inspect A --vs B`` on the first store (``--json``). The straggler is "named" when
B's straggler finding is found with rank S and rank S heads inspect's ranks that moved.
With ``--postgres URL`` the two local imports, compare and inspect run on that
PostgreSQL server too (a fresh database per N).

Run: ``.venv/bin/python bench/scale_ranks.py [--ranks 64 256 1024]``
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "tests" / "data" / "training" / "sampled" / "sampled_rank-0.json.gz"
WORK = Path(os.environ.get("WB_BENCH_DIR", "/tmp/wb-bench-scale"))
ACCEPT = ["--accept", "model,objective,topology,effective_batch,hardware", "--why", "copies of one real rank trace"]


def _template() -> tuple[dict, np.ndarray, np.ndarray, list[int], list[tuple[int, int]]]:
    with gzip.open(TEMPLATE) as raw:
        doc = json.load(raw)
    events = doc["traceEvents"]
    ts = np.array([float(e.get("ts", np.nan)) if isinstance(e.get("ts"), (int, float)) else np.nan for e in events])
    dur = np.array([float(e.get("dur", 0.0)) if isinstance(e.get("dur"), (int, float)) else 0.0 for e in events])
    kernels = [i for i, e in enumerate(events) if e.get("cat") == "kernel"]
    compute = [i for i in kernels if "nccl" not in events[i]["name"].lower()]
    steps = sorted(
        (ts[i], ts[i] + dur[i]) for i, e in enumerate(events) if str(e.get("name", "")).startswith("ProfilerStep#")
    )
    pairs = []  # per step: (the step's first collective kernel, the compute kernel that ends last before it starts)
    for start, end in steps:
        coll = sorted((ts[i], i) for i in kernels if "nccl" in events[i]["name"].lower() and start <= ts[i] < end)
        if not coll:
            continue
        first = coll[0][1]
        before = [i for i in compute if ts[i] + dur[i] <= ts[first] and ts[i] >= start]
        if before:
            pairs.append((first, max(before, key=lambda i: ts[i] + dur[i])))
    return doc, ts, dur, compute, pairs


def _shifts(
    template: tuple, rank: int, seed: int, straggler: int | None, straggle_us: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each event's new start and duration (µs) on this rank: jitter, and the straggler's delays."""
    _doc, ts, dur, compute, pairs = template[:5]
    rng = random.Random(seed * 1_000_003 + rank)
    delays = [(ts[i] + 0.5, rng.uniform(0, 2_000)) for i in rng.sample(compute, 3)]  # µs inside three compute kernels
    if straggler is not None:
        for coll, comp in pairs:
            at = comp if rank == straggler else coll  # the straggler computes longer; the others wait in the collective
            delays.append((ts[at] + 0.5, straggle_us))
    delays.sort()
    points = np.array([p for p, _ in delays])
    cum = np.r_[0.0, np.cumsum([w for _, w in delays])]
    start = cum[np.searchsorted(points, np.nan_to_num(ts), side="left")]
    end = cum[np.searchsorted(points, np.nan_to_num(ts + dur), side="left")]
    return np.rint(ts + start), np.rint(dur + end - start)


def _pieces(doc: dict, ts: np.ndarray) -> tuple[list[str], list[int], list[bool]]:
    """The trace as JSON text around each timed event's ``ts`` and ``dur`` (written once;
    a rank is then its numbers joined in: milliseconds, not a re-serialization)."""
    head = dict(doc)
    events = head.pop("traceEvents")
    parts, which, has_dur = [json.dumps(head, separators=(",", ":"))[:-1] + ',"traceEvents":['], [], []
    for i, e in enumerate(events):
        sep = "," if i else ""
        if not np.isfinite(ts[i]):
            parts[-1] += sep + json.dumps(e, separators=(",", ":"))
            continue
        e = dict(e)
        e["ts"] = "\x00TS"
        if "dur" in e:
            e["dur"] = "\x00DUR"
        text = json.dumps(e, separators=(",", ":"))
        before, after = text.split('"\\u0000TS"')
        parts[-1] += sep + before
        which.append(i)
        if "dur" in e:
            mid, after = after.split('"\\u0000DUR"')
            parts.append(mid)
            has_dur.append(True)
        else:
            has_dur.append(False)
        parts.append(after)
    parts[-1] += "]}"
    return parts, which, has_dur


def _rank_text(template: tuple, rank: int, world: int, seed: int, straggler: int | None, straggle_us: float) -> str:
    doc = template[0]
    new_ts, new_dur = _shifts(template, rank, seed, straggler, straggle_us)
    parts, which, has_dur = template[5]
    out = [
        parts[0]
        .replace('"rank":0,', f'"rank":{rank},', 1)
        .replace(f'"world_size":{doc["distributedInfo"]["world_size"]}', f'"world_size":{world}', 1)
    ]
    k = 1
    for i, d in zip(which, has_dur):
        out.append(str(int(new_ts[i])))
        if d:
            out.append(parts[k])
            k += 1
            out.append(str(int(new_dur[i])))
        out.append(parts[k])
        k += 1
    return "".join(out)


def prepare(ranks: int, straggle_ms: float) -> tuple[Path, Path, int]:
    """Job A and job B (straggler S) of ``ranks`` rank files, made once per size."""
    straggler = (5 * ranks) // 8 + 1
    template = None
    dirs = []
    for name, seed, who in (("A", 1, None), ("B", 2, straggler)):
        d = WORK / f"ranks{ranks}" / f"job-{name}"
        dirs.append(d)
        if len(list(d.glob("rank-*.json.gz"))) == ranks:
            continue
        d.mkdir(parents=True, exist_ok=True)
        if template is None:
            template = (*_template(),)
            template = (*template, _pieces(template[0], template[1]))
        for rank in range(ranks):
            with gzip.open(d / f"rank-{rank:04d}.json.gz", "wt", compresslevel=1) as f:
                f.write(_rank_text(template, rank, ranks, seed, who, straggle_ms * 1000))
    return dirs[0], dirs[1], straggler


def measure(args: list[str]) -> dict:
    """``wb ARGS`` in a fresh process: wall, exit code, stdout, and peak RSS of it and of its largest descendant."""
    import psutil

    import tempfile

    env = dict(os.environ, PYTHONPATH=str(REPO))
    # Files, not pipes: a 1,024-file import's JSON report is larger than a pipe's buffer,
    # and nothing reads the pipe until the process ends.
    out_file, err_file = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed once read, below)
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", *args], stdout=out_file, stderr=err_file, env=env, text=True
    )
    root = psutil.Process(proc.pid)
    client = worker = 0
    while proc.poll() is None:
        try:
            client = max(client, root.memory_info().rss)
            for child in root.children(recursive=True):
                worker = max(worker, child.memory_info().rss)
        except psutil.Error:
            pass
        time.sleep(0.02)
    proc.wait()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the wb process and the workers it waited for
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out_file.seek(0)
    err_file.seek(0)
    out, err = out_file.read(), err_file.read()
    out_file.close()
    err_file.close()
    return {
        "rc": proc.returncode,
        "wall_s": wall,
        "cpu_s": cpu,
        "client_mb": client / 2**20,
        "worker_mb": worker / 2**20 if worker else None,
        "stdout": out,
        "stderr": err,
    }


def _checked(r: dict, what: str, ok: tuple[int, ...] = (0,)) -> dict:
    if r["rc"] not in ok:
        raise SystemExit(f"{what}: exit {r['rc']}: {r['stderr'].strip()[-2000:]}")
    return r


def named(inspect_doc: dict, straggler: int) -> tuple[bool, str]:
    """Whether B's straggler finding and inspect's top moved rank both name the injected rank."""
    found = {(f["side"], f["check"]): f for f in inspect_doc.get("findings", [])}
    strag = found.get(("candidate", "straggler"), {})
    moved = (inspect_doc.get("ranks") or {}).get("moved") or []
    by_finding = strag.get("status") == "found" and strag.get("evidence", {}).get("straggler_rank") == straggler
    by_move = bool(moved) and moved[0]["rank"] == straggler
    return (
        by_finding and by_move,
        f"finding {strag.get('status')} rank {strag.get('evidence', {}).get('straggler_rank')}, top moved "
        f"{moved[0]['rank'] if moved else None}",
    )


def one_size(ranks: int, straggle_ms: float, postgres: str | None, cluster: bool) -> dict:
    a, b, straggler = prepare(ranks, straggle_ms)
    size_on_disk = sum(p.stat().st_size for d in (a, b) for p in d.iterdir())
    row: dict = {"ranks": ranks, "straggler": straggler, "traces_mb": size_on_disk / 1e6, "load": os.getloadavg()[0]}
    stores = {"sqlite": f"sqlite:///{WORK / f'ranks{ranks}' / 'local.sqlite'}"}
    if postgres:
        stores["postgresql"] = _fresh_pg(postgres, f"wb_bench_scale_{ranks}")
    for backend, url in stores.items():
        row[backend] = store_case(backend, url, ranks, a, b, straggler)
        print(
            json.dumps({"ranks": ranks, backend: row[backend]}), file=sys.stderr, flush=True
        )  # partial results as they come
        if backend == "sqlite" and cluster:
            row["cluster"] = cluster_case(ranks, b)
            print(json.dumps({"ranks": ranks, "cluster": row["cluster"]}), file=sys.stderr, flush=True)
    return row


def store_case(backend: str, url: str, ranks: int, a: Path, b: Path, straggler: int) -> dict:
    """Import A and B (local pool), then compare, inspect and list, on one store."""
    if backend == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            Path(url.removeprefix("sqlite:///") + suffix).unlink(missing_ok=True)
    load_before = os.getloadavg()[0]
    imp_a = _checked(
        measure(["--store", url, "import", str(a), "--label", f"A{ranks}", "--json"]), f"import A ({backend})"
    )
    imp_b = _checked(
        measure(["--store", url, "import", str(b), "--label", f"B{ranks}", "--json"]), f"import B ({backend})"
    )
    cmp_ = _checked(
        measure(["--store", url, "compare", f"A{ranks}", "--vs", f"B{ranks}", "--json", *ACCEPT]), "compare", (0, 1, 3)
    )
    ins = _checked(
        measure(["--store", url, "inspect", f"A{ranks}", "--vs", f"B{ranks}", "--json", *ACCEPT]), "inspect", (0, 3)
    )
    runs = _checked(measure(["--store", url, "runs", "--json"]), "runs")
    ok, how = named(json.loads(ins["stdout"]), straggler)
    out = {
        "import_wall_s": imp_b["wall_s"],
        "import_a_wall_s": imp_a["wall_s"],
        "import_cpu_s": imp_b["cpu_s"],
        "import_client_mb": max(imp_a["client_mb"], imp_b["client_mb"]),
        "import_worker_mb": max(imp_a["worker_mb"] or 0, imp_b["worker_mb"] or 0) or None,
        "compare_s": cmp_["wall_s"],
        "compare_client_mb": cmp_["client_mb"],
        "inspect_s": ins["wall_s"],
        "inspect_client_mb": ins["client_mb"],
        "runs_s": runs["wall_s"],
        "named": ok,
        "how": how,
        "comparable": json.loads(cmp_["stdout"]).get("comparable"),
        "json_documents": sum(1 for r in (imp_a, imp_b, cmp_, ins, runs) if _one_document(r["stdout"])),
        # 1-minute load average before the imports and after the listing
        "load": f"{load_before:.1f}-{os.getloadavg()[0]:.1f}",
    }
    if backend == "sqlite":
        path = Path(url.removeprefix("sqlite:///"))
        out["store_mb"] = (
            sum(Path(str(path) + s).stat().st_size for s in ("", "-wal") if Path(str(path) + s).exists()) / 1e6
        )
    else:
        out["store_mb"] = _pg_size(url) / 1e6
    return out


def cluster_case(ranks: int, b: Path) -> dict:
    """Import B with ``--cluster local:2`` into a store of its own."""
    url = f"sqlite:///{WORK / f'ranks{ranks}' / 'cluster.sqlite'}"
    for suffix in ("", "-wal", "-shm"):
        Path(url.removeprefix("sqlite:///") + suffix).unlink(missing_ok=True)
    load_before = os.getloadavg()[0]
    imp = _checked(
        measure(["--store", url, "import", str(b), "--label", f"B{ranks}", "--cluster", "local:2", "--json"]),
        "import B (cluster)",
    )
    doc = json.loads(imp["stdout"])
    return {
        "import_wall_s": imp["wall_s"],
        "import_cpu_s": imp["cpu_s"],
        "import_client_mb": imp["client_mb"],
        "import_worker_mb": imp["worker_mb"],
        "returned_kb_per_rank": doc["cluster"]["returned_bytes"] / ranks / 1e3,
        "task_cpu_s": doc["cluster"][
            "task_cpu_seconds"
        ],  # the rank tasks' own CPU: steadier than wall on a shared machine
        "load": f"{load_before:.1f}-{os.getloadavg()[0]:.1f}",
    }


def _one_document(text: str) -> bool:
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


def _fresh_pg(admin: str, name: str) -> str:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    base = make_url(admin).set(drivername="postgresql+psycopg")
    engine = create_engine(
        base.set(database="postgres").render_as_string(hide_password=False), isolation_level="AUTOCOMMIT"
    )
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return base.set(database=name).render_as_string(hide_password=False).replace("postgresql+psycopg", "postgresql")


def _pg_size(url: str) -> int:
    from sqlalchemy import create_engine, text

    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.connect() as conn:
        size = int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one())
    engine.dispose()
    return size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[64, 256, 1024])
    ap.add_argument(
        "--straggle-ms", type=float, default=60.0, help="the straggler's extra compute per step (10 %% of a step)"
    )
    ap.add_argument("--postgres", help="an admin URL of a PostgreSQL server to run the store cases on too")
    ap.add_argument("--no-cluster", action="store_true", help="skip the --cluster local:2 import")
    args = ap.parse_args()
    rows = []
    for n in args.ranks:
        row = one_size(n, args.straggle_ms, args.postgres, not args.no_cluster)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(f"\nload average now {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    print(
        f"{'ranks':>5} {'store':<10} {'load':>9} {'import s':>8} {'ms/rank':>7} {'CPU ms/rank':>11} {'client MB':>9} "
        f"{'worker MB':>9} "
        f"{'store MB':>8} {'compare s':>9} {'inspect s':>9} {'insp. MB':>8} {'named':>5}"
    )
    for row in rows:
        for backend in ("sqlite", "postgresql"):
            if backend not in row:
                continue
            r = row[backend]
            print(
                f"{row['ranks']:>5} {backend:<10} {r['load']:>9} {r['import_wall_s']:8.1f} "
                f"{1000 * r['import_wall_s'] / row['ranks']:7.0f} "
                f"{1000 * r['import_cpu_s'] / row['ranks']:11.0f} {r['import_client_mb']:9.0f} "
                f"{r['import_worker_mb'] or 0:9.0f} "
                f"{r['store_mb']:8.1f} {r['compare_s']:9.1f} {r['inspect_s']:9.1f} {r['inspect_client_mb']:8.0f} "
                f"{'yes' if r['named'] else 'NO':>5}"
            )
        if "cluster" in row:
            c = row["cluster"]
            print(
                f"{row['ranks']:>5} {'cluster:2':<10} {c['load']:>9} {c['import_wall_s']:8.1f} "
                f"{1000 * c['import_wall_s'] / row['ranks']:7.0f} "
                f"{1000 * c['import_cpu_s'] / row['ranks']:11.0f} {c['import_client_mb']:9.0f} "
                f"{c['import_worker_mb'] or 0:9.0f} "
                f"{'':>8} {'':>9} {'':>9} {'':>8} {'':>5}  ({c['returned_kb_per_rank']:.1f} kB returned a rank)"
            )
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        scale = last["ranks"] / first["ranks"]
        for backend in ("sqlite", "postgresql"):
            if backend not in first or backend not in last:
                continue
            f, l = first[backend], last[backend]  # noqa: E741 (first and last, side by side)
            per_rank = (l["import_wall_s"] / last["ranks"]) / (f["import_wall_s"] / first["ranks"])
            cpu_per_rank = (l["import_cpu_s"] / last["ranks"]) / (f["import_cpu_s"] / first["ranks"])
            print(
                f"{backend}: {first['ranks']} -> {last['ranks']} ranks (x{scale:.0f}): import wall "
                f"x{l['import_wall_s'] / f['import_wall_s']:.1f} "
                f"(per rank: wall x{per_rank:.2f}, CPU x{cpu_per_rank:.2f}; linear is x1), client peak "
                f"x{l['import_client_mb'] / f['import_client_mb']:.2f} "
                f"({l['import_client_mb']:.0f} MB; target < 1024 MB and < 2x), inspect "
                f"x{l['inspect_s'] / f['inspect_s']:.1f}"
            )
        if "cluster" in first and "cluster" in last:
            f, l = first["cluster"], last["cluster"]  # noqa: E741
            print(
                f"cluster: task CPU per rank "
                f"x{(l['task_cpu_s'] / last['ranks']) / (f['task_cpu_s'] / first['ranks']):.2f}, "
                f"client peak x{l['import_client_mb'] / f['import_client_mb']:.2f} ({l['import_client_mb']:.0f} MB)"
            )
    return 0 if all(row[b]["named"] for row in rows for b in ("sqlite", "postgresql") if b in row) else 1


if __name__ == "__main__":
    raise SystemExit(main())
