"""Benches measure what a user runs: modules byte-compiled once, not in every process.

The shell on the project's machines sets PYTHONDONTWRITEBYTECODE=1, so an editable install
would recompile every module in every child (+70-80 ms each; issue 47). ``env()`` is the
children's environment with bytecode written and read, after one compile of the tree.
"""

from __future__ import annotations

import compileall
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def env() -> dict[str, str]:
    for package in ("workbench", "store", "lenses"):
        compileall.compile_dir(REPO / package, quiet=1)
    cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cached["PYTHONPATH"] = str(REPO)
    return cached


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
