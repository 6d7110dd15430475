"""Generate the synthetic sacct window pair (SYNTHETIC: illustrative values, not measurements).

Reproduces the seed's GPU-fleet example with the fleet lens's definitions
(docs/importers.md, lenses/fleet.py), on a 64-GPU pool (8 nodes x 8 H100), wait
target 60 s, time zone UTC:

- ``window_a/`` 2026-11-02 10:00-11:00: 200 jobs start, mean queue wait 14.2 s,
  197 within 60 s (98.5 %), 60 of 64 GPUs allocated throughout, no job waiting.
- ``window_b/`` 2026-11-09 10:00-11:00: 250 jobs start, mean wait 85.6 s, 223 within
  60 s (89.2 %; attainment is over the jobs that started in the window), six 16-GPU
  jobs still waiting at its end, 56 of 64 GPUs allocated: eight GPUs sat unallocated while six jobs waited, each
  needing a 16-GPU gang.

Import with ``wb import captures/fleet_sacct/window_a --tz UTC --from 2026-11-02T10:00:00
--to 2026-11-02T11:00:00 --wait-target 60`` (and the same for window B).
Run ``python captures/fleet_sacct/generate.py`` to rewrite the files (deterministic).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).parent
FIELDS = (
    "JobIDRaw",
    "JobID",
    "JobName",
    "User",
    "Account",
    "Partition",
    "QOS",
    "State",
    "ExitCode",
    "Submit",
    "Eligible",
    "Start",
    "End",
    "ElapsedRaw",
    "Timelimit",
    "ReqTRES",
    "AllocTRES",
    "NNodes",
    "NodeList",
    "Reason",
    "Cluster",
)
HOUR = 3600


def stamp(t: float | None) -> str:
    if t is None:
        return "Unknown"
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def row(
    job: int,
    gpus: int,
    submit: float,
    eligible: float,
    start: float | None,
    end: float | None,
    state: str,
    reason: str = "None",
    name: str = "train",
    extracted_at: float | None = None,
) -> str:
    nodes = max(1, gpus // 8)
    tres = f"billing={gpus * 8},cpu={gpus * 8},gres/gpu:h100={gpus},gres/gpu={gpus},mem={gpus * 64}G,node={nodes}"
    elapsed = "" if start is None else str(int((end if end is not None else (extracted_at or start)) - start))
    values = (
        str(job),
        str(job),
        name,
        "user",
        "research",
        "gpu",
        "normal",
        state,
        "0:0",
        stamp(submit),
        stamp(eligible),
        stamp(start),
        stamp(end),
        elapsed,
        "1-00:00:00",
        tres,
        tres if start is not None else "",
        str(nodes),
        "None assigned" if start is None else f"gpu-node[{job % 8}]",
        reason,
        "synth",
    )
    return "|".join(values)


def write_sacct(path: Path, rows: Iterable[str]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write("|".join(FIELDS) + "\n")
        for r in rows:
            f.write(r + "\n")


def spread(total: int, n: int, lo: int, hi: int, rng: random.Random) -> list[int]:
    """``n`` integers in [lo, hi] summing to ``total``, jittered deterministically."""
    base, extra = divmod(total, n)
    values = [base + (1 if i < extra else 0) for i in range(n)]
    assert lo <= min(values) and max(values) <= hi, "target mean outside the bounds"
    for _ in range(4 * n):
        i, j = rng.randrange(n), rng.randrange(n)
        d = rng.randint(0, 10)
        if i != j and values[i] + d <= hi and values[j] - d >= lo:
            values[i] += d
            values[j] -= d
    rng.shuffle(values)
    return values


def window_rows(ws: float, slots: int, gpus_per_slot: int, starts: int, waits: list[int], first_job: int) -> list[str]:
    """Back-to-back jobs per slot keep ``slots * gpus_per_slot`` GPUs busy for the whole window."""
    rows: list[str] = []
    job = first_job
    per_slot = [starts // slots + (1 if s < starts % slots else 0) for s in range(slots)]
    wait_iter = iter(waits)
    for s, count in enumerate(per_slot):
        # Switch times inside the window; the slot's first job started before it.
        switches = [ws + round((k + 1) * HOUR / (count + 1)) + s for k in range(count)]
        bounds = [ws - 1200 + s, *switches, ws + HOUR + 600 + s]
        for k in range(len(bounds) - 1):
            start, end = bounds[k], bounds[k + 1]
            wait = 5 if k == 0 else next(wait_iter)
            rows.append(row(job, gpus_per_slot, start - wait, start - wait, start, end, "COMPLETED"))
            job += 1
    return rows


def main() -> None:
    rng = random.Random(20261109)
    ws_a = datetime(2026, 11, 2, 10, tzinfo=timezone.utc).timestamp()
    ws_b = datetime(2026, 11, 9, 10, tzinfo=timezone.utc).timestamp()

    # Window A: 200 starts, waits sum 200 x 14.2 = 2840 s; 3 over the 60 s target.
    misses_a = [75, 90, 120]
    waits_a = spread(2840 - sum(misses_a), 197, 0, 60, rng) + misses_a
    rng.shuffle(waits_a)
    rows_a = window_rows(ws_a, slots=15, gpus_per_slot=4, starts=200, waits=waits_a, first_job=410000)

    # Window B: 250 starts, waits sum 250 x 85.6 = 21400 s; 27 over the target.
    misses_b = [300 + 20 * i for i in range(27)]
    waits_b = spread(21400 - sum(misses_b), 223, 0, 60, rng) + misses_b
    rng.shuffle(waits_b)
    rows_b = window_rows(ws_b, slots=14, gpus_per_slot=4, starts=250, waits=waits_b, first_job=420000)
    # Six 16-GPU gangs become eligible in the second half hour and never fit in 8 free GPUs.
    for i in range(6):
        eligible = ws_b + 1800 + 120 * i
        rows_b.append(row(429000 + i, 16, eligible, eligible, None, None, "PENDING", reason="Resources", name="gang16"))

    for name, rows, ws in (("window_a", rows_a, ws_a), ("window_b", rows_b, ws_b)):
        folder = HERE / name
        folder.mkdir(exist_ok=True)
        write_sacct(folder / "sacct.txt", rows)
        # sinfo taken at the window's end: 8 nodes x 8 H100, none down or drained.
        nodes = ["NODELIST|PARTITION|STATE|GRES|TIMESTAMP"] + [
            f"gpu-node{i}|gpu|mixed|gpu:h100:8(S:0-1)|{stamp(ws + HOUR)}" for i in range(8)
        ]
        (folder / "sinfo.txt").write_text("\n".join(nodes) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
