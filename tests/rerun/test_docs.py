"""docs/verify.md stays true: its example plan file is a valid plan, its capture is valid."""

from __future__ import annotations

import json
import re

from workbench.importers.native import read_capture
from workbench.rerun.plan import load_plan_file

from .helpers import REPO

DOC = (REPO / "docs" / "verify.md").read_text()


def test_the_documented_plan_file_is_valid(tmp_path):
    (toml,) = re.findall(r"```toml\n(.*?)```", DOC, re.S)
    (tmp_path / "bench").write_bytes(b"#!/bin/sh\n")
    (tmp_path / "weights.bin").write_bytes(b"w")
    (tmp_path / "plan.toml").write_text(toml)
    plan = load_plan_file(tmp_path / "plan.toml")
    assert plan.name == "gemm-fix" and plan.rounds == 10 and plan.warmup.runs == 1
    assert [a.role for a in plan.artifacts] == ["executable", "model"]
    assert plan.baseline.env == {"CUDA_VISIBLE_DEVICES": "0"} and plan.baseline.cwd == str(tmp_path)
    assert {g.metric for g in plan.guardrails} == {"eval_loss", "loss"}


def test_the_documented_capture_is_valid(tmp_path):
    block = re.findall(r"```json\n(.*?)```", DOC, re.S)[0]
    (tmp_path / "c.json").write_text(json.dumps(json.loads(block)))
    record = read_capture(tmp_path / "c.json")
    assert record.lens == "training" and record.sample_count == 2
