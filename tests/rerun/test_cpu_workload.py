"""End to end with the bundled CPU workload: known effects give the expected verdicts.

The workload runs on its CPU clock (``--clock cpu``): each step has a known CPU cost, so
a 5 % slowdown is 5 % even on a busy CI machine, while the runs are real processes
timed by the workload and analysed by the harness exactly as any benchmark would be.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .helpers import CPU_WORKLOAD, cpu_command, wb, write_plan

pytestmark = pytest.mark.slow


def _run_plan(tmp_path, rounds, baseline, candidate):
    store = f"sqlite:///{tmp_path / 'wb.sqlite'}"
    path = write_plan(
        tmp_path / "plan.toml", baseline=baseline, candidate=candidate, rounds=rounds, artifacts=[str(CPU_WORKLOAD)]
    )
    assert wb("rerun", "plan", "--from-file", str(path), store=store)[0] == 0
    code, out, err = wb("rerun", "run", "p", "--workdir", str(tmp_path / "w"), "--json", store=store)
    assert code == 0, err
    doc = json.loads(out)
    assert [r["status"] for r in doc["runs"]] == ["ok"] * (3 * rounds), doc["runs"]
    return doc


def test_workload_writes_a_valid_native_capture(tmp_path):
    from workbench.importers.native import read_capture

    out = tmp_path / "c.json"
    subprocess.run(
        [sys.executable, str(CPU_WORKLOAD), "--size", "4", "--steps", "3", "--warmup", "0"],
        check=True,
        env={"WB_CAPTURE_OUT": str(out), "PATH": ""},
    )
    record = read_capture(out)
    assert record.lens == "training" and record.sample_count == 3
    assert (record.samples["step_ms"] > 0).all()
    # Without WB_CAPTURE_OUT it says so and fails; --fail writes nothing.
    assert subprocess.run([sys.executable, str(CPU_WORKLOAD)], env={"PATH": ""}, capture_output=True).returncode == 2
    r = subprocess.run(
        [sys.executable, str(CPU_WORKLOAD), "--fail", "--out", str(tmp_path / "x.json")], capture_output=True
    )
    assert r.returncode == 1 and not (tmp_path / "x.json").exists()


@pytest.mark.cpu_clocked
def test_five_percent_slowdown_over_ten_rounds_is_regression(tmp_path):
    doc = _run_plan(tmp_path, 10, cpu_command(), cpu_command("--slowdown", "5"))
    assert doc["verdict"] == "REGRESSION", doc["reason"]
    assert 1.025 < doc["analysis"]["ratio"] < 1.08
    assert doc["analysis"]["aa"]["underpowered"] is False


@pytest.mark.cpu_clocked
def test_no_slowdown_is_never_a_regression(tmp_path):
    doc = _run_plan(tmp_path, 5, cpu_command(), cpu_command())
    assert doc["verdict"] in ("EQUIVALENT", "INCONCLUSIVE"), doc["reason"]


@pytest.mark.cpu_clocked
def test_noisy_baseline_is_flagged(tmp_path):
    # Random per-run delays of up to 60 % in A and A′: the A/A control must catch it.
    doc = _run_plan(tmp_path, 5, cpu_command("--noise", "60"), cpu_command())
    assert {"UNDERPOWERED", "UNSTABLE"} & set(doc["flags"]), doc["flags"]
    assert doc["analysis"]["aa"]["rounds_needed"] is None or doc["analysis"]["aa"]["rounds_needed"] > 5


def test_gpu_workload_without_cupy_says_so(tmp_path):
    pytest.importorskip("numpy")
    try:
        import cupy  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("cupy is installed: the GPU check (bench/gpu_check.sh) covers this workload")
    gpu = CPU_WORKLOAD.parent / "gpu_workload.py"
    r = subprocess.run([sys.executable, str(gpu), "--out", str(tmp_path / "g.json")], capture_output=True, text=True)
    assert r.returncode == 2 and "cupy is not installed" in r.stderr and not (tmp_path / "g.json").exists()
    r = subprocess.run([sys.executable, str(gpu), "--steps", "0"], capture_output=True, text=True)
    assert r.returncode == 2 and "must be positive" in r.stderr
