"""The real app in a real terminal: tmux at 80x24, driven with send-keys through all six panes,
then across the three demo investigations, comparing in each.

Run it by hand too: ``pytest tests/tui/test_tmux.py -s``. Skipped when tmux is absent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

# key -> text that must appear on screen afterwards
STEPS = [
    ("Enter", "Investigation 1"),
    ("2", "baseline (space selects)"),
    ("3", "Derived observations"),
    ("4", "Hypotheses"),
    ("5", "rerun plans"),
    ("6", "evidence bundle"),
    ("1", "Investigation 1"),
    # across the investigations (the picker opens on the current one), comparing in each
    ("2", "[2 Compare]"),
    ("c", "comparison 4 · cite"),
    ("i", "enter opens"),
    ("Down", "training"),
    ("Enter", "investigation 2 · training"),
    ("2", "5 baseline, 5 candidate, 5 A′ selected"),
    ("c", "comparison 5 · "),
    ("i", "enter opens"),
    ("Down", "fleet"),
    ("Enter", "investigation 3 · fleet"),
    ("2", "window A1"),
    ("c", "comparison 6 · cite"),
    ("i", "enter opens"),
    ("Up", "training"),
    ("Up", "inference"),
    ("Enter", "investigation 1 · inference"),
    ("2", "engine v0.8.2 run 1"),
]


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def _wait_for(session: str, text: str, timeout: float = 90.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux("capture-pane", "-p", "-t", session)
        if text in screen:
            return screen
        time.sleep(0.3)
    raise AssertionError(f"{text!r} did not appear; screen was:\n{screen}")


@pytest.mark.parametrize("term,extra", [("xterm-256color", {}), ("screen", {}), ("screen", {"NO_COLOR": "1"})])
def test_all_six_panes_in_tmux(demo_url, term, extra, tmp_path):
    session = f"wb-test-{uuid.uuid4().hex[:8]}"
    env_prefix = " ".join(f"{k}={v}" for k, v in {"TERM": term, **extra}.items())
    command = f"env {env_prefix} {sys.executable} -m workbench --store {demo_url}"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", command],
        check=True,
        env={**os.environ, "TMUX": ""},
    )
    try:
        first = _wait_for(session, "enter opens")  # the picker (not the footer's "Investigations")
        assert all(len(line) <= 80 for line in first.splitlines())
        for key, expect in STEPS:
            _tmux("send-keys", "-t", session, key)
            screen = _wait_for(session, expect)
            assert "Traceback" not in screen
        _tmux("send-keys", "-t", session, "q")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if session not in subprocess.run(["tmux", "ls"], capture_output=True, text=True).stdout:
                break
            time.sleep(0.3)
        else:
            raise AssertionError("the app did not quit on q")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
