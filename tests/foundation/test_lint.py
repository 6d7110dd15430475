"""The linter .ci/run runs before the tests, run here too so that a change the suite passes
is one ruff passes ([tool.ruff] in pyproject.toml: the rule set, and every noqa still needed), and the
complexity gate (.ci/complexity.py) and vulture with it."""

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

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


def _complexity_gate(monkeypatch: pytest.MonkeyPatch, root: Path) -> ModuleType:
    """.ci/complexity.py, pointed at ``root`` (its pyproject.toml, its files and its baseline)."""
    spec = importlib.util.spec_from_file_location("ci_complexity", REPO / ".ci" / "complexity.py")
    assert spec is not None and spec.loader is not None
    gate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gate)
    monkeypatch.setattr(gate, "ROOT", root)
    monkeypatch.setattr(gate, "BASELINE", root / ".ci" / "complexity-baseline")
    monkeypatch.setattr(sys, "argv", ["complexity.py"])
    return gate


def test_the_tree_keeps_its_complexity_baseline():
    out = subprocess.run([sys.executable, ".ci/complexity.py"], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_complexity_gate_refuses_a_new_function_and_a_grown_one(tmp_path, monkeypatch):
    (tmp_path / ".ci").mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.ruff.lint.mccabe]\nmax-complexity = 3\n")
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(5))
    (tmp_path / "busy.py").write_text(f"def busy(x):\n{branches}    return -1\n")  # complexity 6
    baseline = tmp_path / ".ci" / "complexity-baseline"
    gate = _complexity_gate(monkeypatch, tmp_path)
    baseline.write_text("")
    assert gate.main() == 1  # above the limit and not listed
    baseline.write_text("busy.py::busy 5\n")
    assert gate.main() == 1  # listed, but grown
    baseline.write_text("busy.py::busy 7\n")
    assert gate.main() == 0  # fell: passes, and --update lowers the line
    monkeypatch.setattr(sys, "argv", ["complexity.py", "--update"])
    assert gate.main() == 0 and "busy.py::busy 6" in baseline.read_text()


def test_the_tree_has_no_dead_code():
    """vulture as .ci/run runs it ([tool.vulture]: what frameworks call by name; .ci/vulture-whitelist.py)."""
    found = Path(sys.executable).with_name("vulture")
    if not found.exists():
        pytest.skip("vulture is not installed (the dev extra)")
    out = subprocess.run([str(found)], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
