"""Recorder snapshots of hung ranks, as documents (what ``workbench.recorder`` writes, the
parts ``wb diagnose`` reads): for tests/diagnostics/test_hangs.py and tests/actions."""

from __future__ import annotations

import json
from pathlib import Path

T0 = 1_796_000_000.0


def frame_doc(function, file="/job/train.py", line=10, stdlib=False):
    out = {"function": function, "file": file, "line": line}
    if stdlib:
        out["stdlib"] = True
    return out


def snapshot_doc(
    rank,
    *,
    step=40,
    done=("input",),
    phase="allreduce",
    frame="all_reduce",
    host="node-a",
    at=T0 + 30,
    opened=T0,
    rank_count=4,
    reason="hang",
):
    span = {
        "kind": "step",
        "seq": step,
        "opened_at": opened,
        "open_s": at - opened,
        "phases_done": [[n, 5.0] for n in done],
    }
    state = {
        "reason": reason,
        "at": at,
        "rank": rank,
        "host": host,
        "pid": 1000 + rank,
        "open_span": span,
        "last_closed_seq": step - 1,
        "last_closed_at": opened,
        "workload_how": "test",
        "threads": [
            {
                "name": "MainThread",
                "workload": True,
                "frames": [frame_doc("wait", "/usr/lib/python3.11/threading.py", 320, stdlib=True), frame_doc(frame)],
            },
            {"name": "loader", "frames": [frame_doc("fetch")]},
        ],
    }
    if phase is not None:
        state["open_phase"] = {"name": phase, "opened_at": opened + 0.01 * len(done), "open_s": 29.0}
    return {
        "format": "workbench.capture/1",
        "lens": "training",
        "label": f"rank {rank}",
        "dimensions": {"rank_count": rank_count},
        "window": {"kind": "incident", "snapshot_reason": reason},
        "at_snapshot": state,
        "samples": [{"step": 1, "rank": rank, "step_ms": 5.0}],
        "trigger": {"kind": reason},
        "recorder": {"pid": 1000 + rank, "host": host},
    }


def write_docs(folder: Path, docs) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, doc in enumerate(docs):
        (folder / f"snap-{i}.json").write_text(json.dumps(doc))
    return folder


def four_ranks(stuck=2, **kw):
    return [
        snapshot_doc(r, done=("input",), phase="input", frame="slow_storage_read", **kw)
        if r == stuck
        else snapshot_doc(r, done=("input", "compute"), phase="allreduce", frame="all_reduce", **kw)
        for r in range(4)
    ]
