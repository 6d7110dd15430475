"""A fast stand-in inference server benchmark for the action tests: writes a native
inference capture with the demo's dimensions, ``max_num_seqs`` set by its first
argument and every request's queue time about its second (a little per-slot noise)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from captures import __file__ as _captures_init

DEMO_BASELINE = Path(_captures_init).resolve().parent / "demo" / "inference" / "baseline-1.json"

BENCH = r'''
import json, os, sys
seqs, queue = sys.argv[1], float(sys.argv[2])
slot = int(os.environ.get("WB_RERUN_SLOT", "0"))
doc = json.loads(open(sys.argv[3]).read())
doc["label"] = f"max_num_seqs {seqs}"
doc["dimensions"]["engine_config"] = {"max_num_seqs": int(seqs)}
doc["dimensions"]["engine_revision"] = "v0.8.3"
jitter = 1 + ((slot * 7919) % 13 - 6) / 400
for i, s in enumerate(doc["samples"]):
    s["queue_ms"] = round(queue * jitter * (1 + (i % 7 - 3) / 100), 4)
    s["ttft_ms"] = round(s["queue_ms"] + s["prefill_ms"], 4)
doc.pop("demo", None)
open(os.environ["WB_CAPTURE_OUT"], "w").write(json.dumps(doc))
'''


def inference_bench(tmp: Path) -> Path:
    path = tmp / "inference_bench.py"
    path.write_text(BENCH)
    return path


def bench_command(bench: Path, seqs: int, queue_ms: float) -> str:
    import sys

    return f"{sys.executable} {bench} {seqs} {queue_ms} {DEMO_BASELINE}"


def load(out: str) -> dict:
    return json.loads(out)


__all__ = ["inference_bench", "bench_command", "load", "os"]
