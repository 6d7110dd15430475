"""A deterministic fake benchmark for contract tests: a native capture whose work per item,
time per item and dimensions are the arguments (a run's slot moves its time by < 0.5 %;
``_round1`` in the dimensions overrides them in round 1, ``_quality`` is the quality block)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

FAKE = r"""
import json, os, sys
lens, ms, work, dims = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), json.loads(sys.argv[4])
slot = int(os.environ.get("WB_RERUN_SLOT", "0"))
if os.environ.get("WB_RERUN_ROUND") == "1":  # "_round1": what the first round's run says instead
    dims.update(dims.get("_round1", {}))
dims.pop("_round1", None)
v = ms * (1 + ((slot * 7919) % 13 - 6) / 2000)
if lens == "training":
    samples = [{"step": i, "rank": 0, "step_ms": v, "samples": work} for i in range(4)]
    doc = {"format": "workbench.capture/1", "lens": lens, "label": "fake", "window": {"kind": "steady"},
           "dimensions": dims, "samples": samples, "quality": dims.pop("_quality", {})}
else:
    n = 8
    samples = [{"id": f"r{i}", "prompt_tokens": work, "output_tokens": 16, "ttft_ms": v, "ok": True} for i in range(n)]
    doc = {"format": "workbench.capture/1", "lens": lens, "label": "fake", "window": {"kind": "steady", "duration_s": n * v / 1000},
           "work": {"unit": "tokens", "amount": n * (work + 16)}, "dimensions": dims, "samples": samples,
           "quality": dims.pop("_quality", {})}
with open(os.environ["WB_CAPTURE_OUT"], "w") as f:
    json.dump(doc, f)
"""


def fake_bench(tmp: Path) -> Path:
    path = tmp / "fake_bench.py"
    path.write_text(FAKE)
    return path


def arm(bench: Path, lens: str, ms: float, work: float, **dims: object) -> list[str]:
    """The argv of one arm: ``ms`` per item doing ``work`` per item, with ``dims``."""
    return [sys.executable, str(bench), lens, repr(ms), repr(work), json.dumps(dims)]


# Dimensions every arm shares: every must-match dimension of the lens known and equal.
TRAINING = {
    "model": "resnet50",
    "objective": "classification",
    "hardware": "1x H100",
    "topology": "single GPU",
    "rank_count": 1,
}
INFERENCE = {
    "model": "llama-8b",
    "weights": "sha256:abc",
    "hardware": "1x H100",
    "topology": "single GPU",
    "precision": "bf16",
}
BASE_DIMS = {"training": TRAINING, "inference": INFERENCE}
