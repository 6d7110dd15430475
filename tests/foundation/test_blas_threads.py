"""Short commands load OpenBLAS with one thread; commands that run the user's programs,
and a value the user set, are left alone (workbench/cli/__init__.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import os, sys
from workbench.cli import cli
group = cli
group.get_command(None, sys.argv[1])
print(os.environ.get("OPENBLAS_NUM_THREADS", "unset"))
"""


def _after_loading(command: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"} | env
    done = subprocess.run([sys.executable, "-c", PROBE, command], capture_output=True, text=True, env=clean, check=True)
    return done.stdout.strip()


@pytest.mark.parametrize("command", ["compare", "inspect", "import", "runs"])
def test_a_command_that_runs_no_user_program_loads_blas_with_one_thread(command):
    assert _after_loading(command) == "1"


@pytest.mark.parametrize("command", ["rerun", "bisect", "demo"])
def test_a_command_that_runs_the_users_programs_keeps_their_environment(command):
    assert _after_loading(command) == "unset"


def test_a_value_the_user_set_is_kept():
    assert _after_loading("compare", OPENBLAS_NUM_THREADS="8") == "8"
