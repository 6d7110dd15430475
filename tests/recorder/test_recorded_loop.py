"""The example workload: three recorder lines, one stall, a snapshot that compares."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_wb

from .helpers import load

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "captures" / "workloads" / "recorded_loop.py"


@pytest.mark.slow
def test_recorded_loop_stalls_once_and_the_snapshot_compares(tmp_path):
    url = f"sqlite:///{tmp_path / 'wb.sqlite'}"
    env = {k: v for k, v in os.environ.items() if k not in ("WB_RECORDER", "WB_STORE")}
    env["OMP_NUM_THREADS"] = "1"
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), "--steps", "120", "--normal-steps", "60", "--stall-at", "100",
         "--stall-ms", "1200", "--at-least-ms", "500", "--input-ms", "1", "--out", str(tmp_path / "snaps"),
         "--store", url],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["faults"] == 0 and report["incidents"] >= 1
    docs = [load(p) for p in report["snapshots"]]
    normal = docs[0]
    assert normal["window"]["snapshot_reason"] == "boundary: normal window"
    assert [s["step"] for s in normal["samples"]] == list(range(60))
    # The stall's incident (a very busy machine may add a spurious one; it can't hide this).
    [k] = [i for i, d in enumerate(docs) if d.get("trigger", {}).get("seq") == 100]
    incident = docs[k]
    assert incident["samples"][-1]["step"] == 100
    assert incident["samples"][-1]["input_ms"] >= 1200
    assert len(incident["samples"]) > 1  # the moments before the stall, not the stall alone

    assert len(report["imported_runs"]) == len(docs)
    baseline, candidate = report["imported_runs"][0], report["imported_runs"][k]
    res = run_wb("--store", url, "compare", str(baseline), "--vs", str(candidate), "--json")
    assert res.returncode == 0, res.stderr
    result = json.loads(res.stdout)
    assert result["comparable"] is True, result["refusal"]
    assert result["primary"]["metric"] == "mean_step_time"
    assert result["primary"]["candidate"] > result["primary"]["baseline"]
