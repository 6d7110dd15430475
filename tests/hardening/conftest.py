"""Helpers for the hardening tests: run ``wb`` in a subprocess under a memory cap."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Address space for one `wb` run: the interpreter with numpy, SQLAlchemy and friends
# maps ~1 GiB before reading a byte, so the cap is what a regression must not exceed
# beyond that; an import that grows with the square of its input fails instead of swapping.
MEMORY_CAP = 1536 << 20

_PRELUDE = (
    "import resource, sys; "
    "resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap})); "
    "from workbench.cli import main; sys.argv[0] = 'wb'; main(sys.argv[1:])"
)


def wb_capped(
    *args: str, cap: int = MEMORY_CAP, timeout: float = 60, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """``wb ARGS`` in a subprocess whose address space is capped at ``cap`` bytes."""
    # One BLAS thread: OpenBLAS reserves address space per thread, which on a many-core
    # machine would spend the cap before wb reads a byte. (The cap bounds the address
    # space, not RSS: it is a tripwire for growth, set well above a normal run's.)
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    env.pop("WB_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-c", _PRELUDE.format(cap=cap), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=cwd,
    )


def one_line_refusal(result: subprocess.CompletedProcess, *needles: str) -> str:
    """The run ended in one clear line (exit 2) containing each of ``needles``."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert len(lines) == 1, result.stderr[-2000:]
    line = lines[0]
    assert line.startswith("wb: error: "), line
    assert "internal error" not in line and "Traceback" not in result.stderr
    for needle in needles:
        assert needle in line, (needle, line)
    return line
