"""The linter .ci/run runs before the tests, run here too so that a change the suite passes
is one ruff passes ([tool.ruff] in pyproject.toml: the rule set, and every noqa still needed)."""

import sys
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _ruff() -> str:
    found = str(Path(sys.executable).with_name("ruff"))
    if not Path(found).exists():
        pytest.skip("ruff is not installed (the dev extra)")
    return found


def test_the_tree_passes_ruff():
    out = subprocess.run(
        [_ruff(), "check", "--no-cache", "--output-format", "concise", str(REPO)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_stale_noqa_is_itself_a_finding(tmp_path):
    # RUF100 is selected: a noqa nothing needs fails the check, so the count of noqa can only be honest
    sample = tmp_path / "sample.py"
    sample.write_text("x = 1  # noqa: E731\n")
    out = subprocess.run(
        [_ruff(), "check", "--no-cache", "--config", str(REPO / "pyproject.toml"), str(sample)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1 and "RUF100" in out.stdout, out.stdout + out.stderr
