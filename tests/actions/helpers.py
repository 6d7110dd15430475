"""The stand-in serving benchmark (captures/workloads/serving_stand_in.py) as the action
tests call it."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

STAND_IN = Path(__file__).resolve().parents[2] / "captures" / "workloads" / "serving_stand_in.py"


def bench_command(seqs: int, queue_ms: float) -> str:
    return shlex.join([sys.executable, str(STAND_IN), "--max-num-seqs", str(seqs), "--queue-ms", str(queue_ms)])
