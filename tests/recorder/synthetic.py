"""Recorder captures written by hand (the format, not the recorder): a normal window and an
incident whose slow step sits in a named function, with stacks, CPU rows and GC pauses."""

from __future__ import annotations

import json
from pathlib import Path

T0 = 1_796_000_000.0
DIMS = {
    "model": "toy",
    "objective": "regression",
    "hardware": "1x test CPU",
    "topology": "single process",
    "rank_count": 1,
    "effective_batch": 32,
}
FRAMES = [
    ["train_step", "/w/loop.py", 10],
    ["main", "/w/loop.py", 1],
    ["read_batch", "/w/loop.py", 20],
    ["(garbage collection)", "", 0],
]
# Innermost first: compute in train_step; the stall in read_batch; a GC pause under train_step.
STACKS = [[0, 1], [2, 1], [3, 0, 1]]


def capture(
    *,
    incident: bool,
    stall_function: str = "read_batch",
    slow_ms: float = 500.0,
    gc_in_slow: bool = False,
    steps: int = 40,
    step_ms: float = 10.0,
) -> dict:
    frames = [list(f) for f in FRAMES]
    frames[2][0] = stall_function
    samples, rows, gc_rows, cpu_rows = [], [], [], []
    t = T0
    cpu = 0.0
    for i in range(steps):
        slow = incident and i == steps - 1
        dur = slow_ms if slow else step_ms
        samples.append({"step": i, "step_ms": dur, "started_at": round(t, 6)})
        k = 0
        while k * 0.01 < dur / 1e3:  # 100 Hz
            stack = (2 if k % 3 else 0) if slow and gc_in_slow else 1 if slow else 0
            rows.append([round(t + k * 0.01 + 0.001, 6), 0, stack])
            k += 1
        if slow and gc_in_slow:
            gc_rows += [[round(t + j * 0.05, 6), 20.0, 0, 100, 0] for j in range(int(dur / 50))]
        elif i % 10 == 0:
            gc_rows.append([round(t + 0.001, 6), 0.2, 0, 5, 0])
        cpu_rows.append(
            [
                round(t, 6),
                -1,
                cpu,
                0.01,
                1000 + i,
                0,
                50 << 20,
                10 * i,
                i,
            ]
        )
        cpu_rows.append([round(t, 6), 0, cpu, 0.01, 900 + i, 0, None, None, None])
        cpu += 0.0 if slow and not gc_in_slow else dur / 1e3
        t += dur / 1e3
    cpu_rows.append([round(t, 6), -1, cpu, 0.01, 1000 + steps, 0, 51 << 20, 10 * steps, steps])
    cpu_rows.append([round(t, 6), 0, cpu, 0.01, 900 + steps, 0, None, None, None])
    window = {
        "kind": "incident" if incident else "steady",
        "source": "flight recorder",
        "snapshot_reason": "slow step" if incident else "boundary: normal",
    }
    doc = {
        "format": "workbench.capture/1",
        "lens": "training",
        "label": f"synthetic: {'slow step' if incident else 'normal'}",
        "dimensions": DIMS,
        "window": window,
        "samples": samples,
    }
    if incident:
        window.update(threshold_ms=100.0, trigger_rule="slower than 100 ms", incident_seq=steps - 1)
        doc["trigger"] = {"seq": steps - 1, "span": "step", "duration_ms": slow_ms, "threshold_ms": 100.0}
    doc["host"] = {
        "threads": [{"id": 0, "name": "MainThread", "native_id": 42}],
        "stacks": {
            "status": "ok",
            "rate_hz": 100.0,
            "gil": "unknown",
            "max_depth": 48,
            "frames": frames,
            "stacks": STACKS,
            "fields": ["t", "thread", "stack"],
            "rows": rows,
            "ticks": len(rows),
            "dropped": {"evicted_rows": 0, "stacks_over_limit": 0},
        },
        "cpu": {
            "status": "ok",
            "interval_s": 0.1,
            "fields": [
                "t",
                "thread",
                "cpu_user_s",
                "cpu_sys_s",
                "minor_faults",
                "major_faults",
                "rss_bytes",
                "voluntary_switches",
                "involuntary_switches",
            ],
            "rows": cpu_rows,
        },
        "gc": {
            "status": "watched",
            "fields": ["start", "duration_ms", "generation", "collected", "uncollectable"],
            "rows": gc_rows,
            "pauses_seen": len(gc_rows),
        },
    }
    return doc


def write(path: Path, doc: dict) -> Path:
    path.write_text(json.dumps(doc))
    return path
