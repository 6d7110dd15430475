"""A training investigation of 1,024-rank jobs (synthetic native captures): three runs a
side, one straggler rank in the candidate (its compute longer, the others waiting for it
in communication). Used by the size test and by bench/report_render.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.foundation.helpers import write_json

RANKS = 1024
STEPS = 6
STRAGGLER = 777
STRAGGLE_MS = 30.0
DIMENSIONS = {
    "model": "Llama 3 70B",
    "objective": "causal LM pretraining",
    "hardware": "1024x H100 SXM5 80GB",
    "topology": "128 nodes, NVLink 4 + IB NDR",
    "rank_count": RANKS,
    "effective_batch": 4096,
    "optimizer": "AdamW",
    "eval_metric": "eval_loss",
}


def capture(side: str, run: int) -> dict:
    rng = np.random.default_rng(1000 * (side == "candidate") + run)
    compute = 250.0 + rng.normal(0, 0.5, (STEPS, RANKS))
    communication = 100.0 + rng.normal(0, 0.5, (STEPS, RANKS))
    if side == "candidate":
        communication += STRAGGLE_MS
        compute[:, STRAGGLER] += STRAGGLE_MS
        communication[:, STRAGGLER] -= STRAGGLE_MS
    samples = [
        {
            "step": step + 10,
            "rank": rank,
            "compute_ms": round(float(compute[step, rank]), 3),
            "communication_ms": round(float(communication[step, rank]), 3),
            "step_ms": round(float(compute[step, rank] + communication[step, rank]), 3),
            "samples": 4,
        }
        for step in range(STEPS)
        for rank in range(RANKS)
    ]
    return {
        "format": "workbench.capture/1",
        "lens": "training",
        "label": f"{side} job {run}",
        "recorded_at": f"2026-11-29T1{run}:00:00Z",
        "dimensions": {**DIMENSIONS, "framework": "PyTorch 2.3.1" if side == "baseline" else "PyTorch 2.4.0"},
        "window": {"kind": "steady", "warmup_excluded": 10},
        "work": {"unit": "samples", "amount": 4 * RANKS * STEPS},
        "quality": {"eval_loss": 2.1},
        "samples": samples,
    }


def many_rank_investigation(store, folder: Path) -> int:
    """Import the six jobs, frame the investigation, compare; its id."""
    from workbench.ingest import import_files
    from workbench.investigations import workflow as wf

    paths = [
        write_json(folder / f"{side}-{run}.json", capture(side, run))
        for side in ("baseline", "candidate")
        for run in range(3)
    ]
    runs = list(import_files(store, paths).run_ids)
    inv = wf.new_investigation(
        store,
        lens="training",
        title="1,024 ranks: PyTorch 2.4.0",
        question="Can the 1,024-rank job move to PyTorch 2.4.0 without slowing its steps?",
        intended_change={"framework": ["PyTorch 2.3.1", "PyTorch 2.4.0"]},
        baseline=runs[:3],
        candidate=runs[3:],
        by="bench",
    )
    wf.store_comparison(store, inv.id, runs[:3], runs[3:], by="bench")
    return inv.id
