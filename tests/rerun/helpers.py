"""Helpers for the rerun tests: run ``wb`` in-process, write plan files, a fast fake bench."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CPU_WORKLOAD = REPO / "captures" / "workloads" / "cpu_workload.py"
# A step of known CPU cost, timed on the CPU clock: verdicts stay stable on a busy machine.
CPU_ARGS = ["--size", "8", "--wait-ms", "4", "--steps", "30", "--warmup", "2", "--clock", "cpu"]


def wb(*args: str, store: str) -> tuple[int, str, str]:
    """Run ``wb --store STORE args...`` in this process; returns (exit code, stdout, stderr)."""
    from workbench.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["--store", store, *args])
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def cpu_command(*extra: str) -> list[str]:
    return [sys.executable, str(CPU_WORKLOAD), *CPU_ARGS, *extra]


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def write_plan(path: Path, *, baseline: list[str], candidate: list[str], artifacts: list[str] = (), **top: Any) -> Path:
    """A TOML plan file (top-level keys, two command tables, artifact tables)."""
    top = {"name": "p", "lens": "training", "rounds": 3, "seed": 11, "timeout_s": 60, **top}
    lines = [f"{k} = {toml_value(v)}" for k, v in top.items()]
    lines += ["", "[baseline]", f"argv = {toml_value(baseline)}", "", "[candidate]", f"argv = {toml_value(candidate)}"]
    for a in artifacts:
        lines += ["", "[[artifacts]]", f"path = {toml_value(a)}", 'role = "source"']
    path.write_text("\n".join(lines) + "\n")
    return path


FAKE_BENCH = r"""#!/bin/sh
# A fast stand-in benchmark: writes a training capture whose step_ms are BASE plus a
# little per-slot variation; sleeps SLEEP seconds first (for interrupt tests).
BASE="${1:-10}"; SLEEP="${2:-0}"
sleep "$SLEEP"
V=$(awk -v b="$BASE" -v s="${WB_RERUN_SLOT:-0}" 'BEGIN { printf "%.4f", b * (1 + ((s * 7919) % 13 - 6) / 2000) }')
printf '{"format": "workbench.capture/1", "lens": "training", "label": "fake", "samples": [{"step": 0, "rank": 0, "step_ms": %s}, {"step": 1, "rank": 0, "step_ms": %s}]}' "$V" "$V" > "$WB_CAPTURE_OUT"
"""


def fake_bench(tmp: Path) -> Path:
    path = tmp / "fake_bench.sh"
    path.write_text(FAKE_BENCH)
    os.chmod(path, 0o755)
    return path


def comparison(store: str, plan: str) -> dict[str, Any]:
    code, out, err = wb("rerun", "report", plan, "--json", store=store)
    assert code == 0, err
    return json.loads(out)
