"""RunRecords built in tests, shaped like the seed's three worked examples."""

from __future__ import annotations

import numpy as np

from store.records import Dimension, RunRecord, Work

INFERENCE_DIMS = {
    "model": "Llama 3.1 8B",
    "weights": "sha256:4f1c",
    "hardware": "1x H100 SXM5 80GB",
    "topology": "single GPU",
    "request_mix": "512 prompt / 128 output tokens",
    "precision": "bf16",
    "engine_revision": "v0.8.2",
    "power_policy": "default",
}


def dims(values: dict, source: str = "declared") -> dict[str, Dimension]:
    return {k: Dimension(v, source) for k, v in values.items()}


def inference_run(
    label="run",
    *,
    queue=40.0,
    prefill=70.0,
    decode=90.0,
    n=200,
    prompt=512,
    output=128,
    seed=0,
    noise=0.5,
    window="steady",
    run_id=None,
    failures=0,
    **dim_overrides,
) -> RunRecord:
    rng = np.random.default_rng(seed)
    q = queue + rng.normal(0, noise, n)
    p = prefill + rng.normal(0, noise, n)
    d = decode + rng.normal(0, noise, n)
    ok = np.ones(n)
    ok[:failures] = 0
    values = dict(INFERENCE_DIMS)
    values.update(dim_overrides)
    values = {k: v for k, v in values.items() if v is not None}
    return RunRecord(
        lens="inference",
        label=label,
        dimensions=dims(values),
        window={"kind": window},
        work=Work("tokens", float(n * (prompt + output))),
        quality={},
        tables={
            "samples": {
                "id": np.array([f"r{i}" for i in range(n)]),
                "prompt_tokens": np.full(n, float(prompt)) + rng.integers(-8, 9, n),
                "output_tokens": np.full(n, float(output)),
                "queue_ms": q,
                "prefill_ms": p,
                "decode_ms": d,
                "ttft_ms": q + p,
                "e2e_ms": q + p + d,
                "ok": ok,
            }
        },
        id=run_id,
    )


TRAINING_DIMS = {
    "model": "gpt-1.3b",
    "objective": "causal LM",
    "hardware": "8x H100 SXM5",
    "topology": "1 node, NVLink",
    "rank_count": 8,
    "effective_batch": 256,
    "optimizer": "AdamW",
    "framework": "PyTorch 2.3",
}


def training_run(
    label="run",
    *,
    input_ms=25.0,
    compute=260.0,
    comm=115.0,
    checkpoint=20.0,
    steps=50,
    ranks=8,
    batch_per_rank=32,
    eval_loss=2.14,
    seed=0,
    noise=0.5,
    window="steady",
    run_id=None,
    **dim_overrides,
) -> RunRecord:
    rng = np.random.default_rng(seed)
    n = steps * ranks
    step = np.repeat(np.arange(steps, dtype=float), ranks)
    rank = np.tile(np.arange(ranks, dtype=float), steps)
    parts = {
        "input_ms": input_ms + rng.normal(0, noise, n),
        "compute_ms": compute + rng.normal(0, noise, n),
        "communication_ms": comm + rng.normal(0, noise, n),
        "checkpoint_ms": checkpoint + rng.normal(0, noise, n),
    }
    values = dict(TRAINING_DIMS)
    values.update(dim_overrides)
    values = {k: v for k, v in values.items() if v is not None}
    return RunRecord(
        lens="training",
        label=label,
        dimensions=dims(values),
        window={"kind": window},
        work=Work("samples", float(steps * ranks * batch_per_rank)),
        quality={"eval_loss": eval_loss} if eval_loss is not None else {},
        tables={
            "samples": {
                "step": step,
                "rank": rank,
                "step_ms": sum(parts.values()),
                **parts,
                "samples": np.full(n, float(batch_per_rank)),
            },
            "operations": {
                "name": np.array(["ncclAllReduce", "gemm_bf16", "adam_step"] * steps),
                "kind": np.array(["collective", "kernel", "kernel"] * steps),
                "step": np.repeat(np.arange(steps, dtype=float), 3),
                "rank": np.zeros(3 * steps),
                "count": np.ones(3 * steps),
                "total_ms": np.tile([comm * 0.9, compute * 0.8, 5.0], steps),
            },
        },
        id=run_id,
    )


FLEET_DIMS = {
    "pool": "pool-a",
    "device_types": "H100 SXM5",
    "scheduler_policy": "gang priority",
    "eligibility_history": "recorded",
    "workload_mix": "training + batch inference",
}


def fleet_run(
    label="window",
    *,
    waits=(14.2,) * 20,
    running_gangs=(16, 16, 16, 8, 4),
    waiting_gangs=(),
    capacity=64,
    wait_target=60.0,
    eligibility=True,
    run_id=None,
    window="steady",
    **dim_overrides,
) -> RunRecord:
    """A 1-hour window: ``running_gangs`` hold GPUs for the whole window (started before it);
    jobs with ``waits`` start inside it and end quickly (1 GPU, 10 s); ``waiting_gangs``
    are eligible but not started at the window's end."""
    ws, we = 1_000_000.0, 1_003_600.0
    rows = []
    for i, g in enumerate(running_gangs):
        rows.append((f"run{i}", g, ws - 500, ws - 400, ws - 300, np.nan, "RUNNING"))
    for i, w in enumerate(waits):
        start = ws + 100 + i * 100
        rows.append((f"w{i}", 1, start - w - 5, start - w, start, start + 10, "COMPLETED"))
    for i, g in enumerate(waiting_gangs):
        rows.append((f"q{i}", g, we - 300, we - 200, np.nan, np.nan, "PENDING"))
    cols = list(zip(*rows))
    eligible = np.array(cols[3], dtype=float)
    if not eligibility:
        eligible[:] = np.nan
    values = dict(FLEET_DIMS)
    values.update(dim_overrides)
    values = {k: v for k, v in values.items() if v is not None}
    return RunRecord(
        lens="fleet",
        label=label,
        dimensions=dims(values),
        window={"kind": window},
        meta={"pool": {"capacity_gpus": capacity, "window_start": ws, "window_end": we, "wait_target_s": wait_target}},
        tables={
            "samples": {
                "job": np.array(cols[0]),
                "gpus": np.array(cols[1], dtype=float),
                "submit": np.array(cols[2], dtype=float),
                "eligible": eligible,
                "start": np.array(cols[4], dtype=float),
                "end": np.array(cols[5], dtype=float),
                "state": np.array(cols[6]),
            }
        },
        id=run_id,
    )
