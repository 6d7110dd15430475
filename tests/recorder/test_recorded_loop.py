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


def _run_loop(tmp_path, *extra: str) -> tuple[str, dict]:
    url = f"sqlite:///{tmp_path / 'wb.sqlite'}"
    env = {k: v for k, v in os.environ.items() if k not in ("WB_RECORDER", "WB_STORE")}
    env["OMP_NUM_THREADS"] = "1"
    out = subprocess.run(
        [
            sys.executable,
            str(EXAMPLE),
            "--steps",
            "120",
            "--normal-steps",
            "60",
            "--stall-at",
            "100",
            "--stall-ms",
            "1200",
            "--at-least-ms",
            "500",
            "--input-ms",
            "1",
            "--out",
            str(tmp_path / "snaps"),
            "--store",
            url,
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return url, json.loads(out.stdout)


def _incident_run(report: dict) -> int:
    docs = [load(p) for p in report["snapshots"]]
    [k] = [i for i, d in enumerate(docs) if d.get("trigger", {}).get("seq") == 100]
    return report["imported_runs"][k]


@pytest.mark.slow
def test_recorded_loop_stalls_once_and_the_snapshot_compares(tmp_path):
    url, report = _run_loop(tmp_path)
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
    # The incident says what it is: its window kind, the rule that fired and its threshold.
    assert normal["window"]["kind"] == "steady"
    assert incident["window"]["kind"] == "incident"
    assert incident["window"]["threshold_ms"] == incident["trigger"]["threshold_ms"] >= 500
    assert "median" in incident["window"]["trigger_rule"]

    assert len(report["imported_runs"]) == len(docs)
    baseline, candidate = report["imported_runs"][0], report["imported_runs"][k]
    # An incident window against a steady one is refused, like any other window kind...
    res = run_wb("--store", url, "compare", str(baseline), "--vs", str(candidate), "--json")
    refused = json.loads(res.stdout)
    assert refused["comparable"] is False and refused["refusal"]["dimension"] == "window"
    assert "'incident'" in refused["refusal"]["reason"]
    # ... unless the user accepts it, with a reason.
    res = run_wb(
        "--store",
        url,
        "compare",
        str(baseline),
        "--vs",
        str(candidate),
        "--accept",
        "window",
        "--why",
        "the moments before a stall against a normal window",
        "--json",
    )
    assert res.returncode == 0, res.stderr
    result = json.loads(res.stdout)
    assert result["comparable"] is True, result["refusal"]
    assert result["primary"]["metric"] == "mean_step_time"
    assert result["primary"]["candidate"] > result["primary"]["baseline"]


@pytest.mark.slow
def test_a_host_stall_in_a_named_function_is_the_top_moved_frame(tmp_path):
    url, report = _run_loop(tmp_path, "--stall-kind", "sleep")
    run = _incident_run(report)
    res = run_wb("--store", url, "show", str(run), "--json")
    assert res.returncode == 0, res.stderr
    host = json.loads(res.stdout)["host_activity"]
    assert host["slow_samples"] > 0 and host["normal_samples"] > 0
    top = host["moved"][0]
    assert top["function"] == "slow_storage_read" and top["file"].endswith("recorded_loop.py")
    assert top["slow_self"] > 0.5 > top["normal_self"]
    # CPU and memory around the trigger: the stretch of the slow span and the one before it.
    assert [c["name"] for c in host["cpu"]] == ["slow spans", "before"]
    assert host["cpu"][0]["rss_start_bytes"] > 0
    text = run_wb("--store", url, "show", str(run))
    assert text.returncode == 0, text.stderr
    assert "slow_storage_read (recorded_loop.py:" in text.stdout and "observation, not cause" in text.stdout


@pytest.mark.slow
def test_a_gc_heavy_phase_shows_its_pauses(tmp_path):
    url, report = _run_loop(tmp_path, "--stall-kind", "gc")
    run = _incident_run(report)
    res = run_wb("--store", url, "show", str(run), "--json")
    assert res.returncode == 0, res.stderr
    gc = json.loads(res.stdout)["host_activity"]["gc"]
    assert gc["pauses"] > 10
    # The pauses take a larger share of the slow step than of the normal ones.
    assert gc["pause_ms"] / gc["slow_ms"] > 2 * (gc["normal_pause_ms"] or 0) / gc["normal_ms"]
    moved = [m["function"] for m in json.loads(res.stdout)["host_activity"]["moved"]]
    assert "churn_garbage" in moved or "(garbage collection)" in moved
    # wb inspect of the normal window against the incident shows the same, beside the comparison.
    res = run_wb(
        "--store",
        url,
        "inspect",
        str(report["imported_runs"][0]),
        "--vs",
        str(run),
        "--accept",
        "window",
        "--why",
        "an incident against a normal window",
        "--json",
    )
    assert res.returncode == 0, res.stderr
    host = json.loads(res.stdout)["host_activity"]
    assert host["gc"]["pauses"] > 10 and host["normal_samples"] > 0
