"""`wb --help` and headless commands stay light: no heavy or TUI modules at start-up."""

import subprocess
import sys

HEAVY = ["scipy", "sqlmodel", "sqlalchemy", "textual", "pynvml", "cupy", "dask", "distributed"]

PROBE = """
import sys
from workbench.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
heavy = [m for m in {heavy!r} if m in sys.modules]
print("HEAVY:" + ",".join(heavy))
"""


def _heavy_after(argv):
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv, heavy=HEAVY)], capture_output=True, text=True, timeout=120
    )
    line = [row for row in out.stdout.splitlines() if row.startswith("HEAVY:")]
    assert line, out.stdout + out.stderr
    return [m for m in line[-1][len("HEAVY:") :].split(",") if m], out


def test_help_imports_nothing_heavy():
    heavy, out = _heavy_after(["--help"])
    assert heavy == [], f"wb --help imported {heavy}"
    assert "import" in out.stdout and "runs" in out.stdout


def test_every_command_help_is_light():
    from workbench.cli.commands import SUMMARIES

    for name in SUMMARIES:
        heavy, out = _heavy_after([name, "--help"])
        assert heavy == [], f"wb {name} --help imported {heavy}"


def test_headless_runs_never_imports_textual(tmp_path):
    probe = PROBE.format(argv=["--store", str(tmp_path / "s.sqlite"), "runs", "--json"], heavy=["textual"])
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert "HEAVY:\n" in out.stdout or out.stdout.strip().endswith("HEAVY:"), out.stdout + out.stderr


def test_version():
    from workbench import __version__

    out = subprocess.run([sys.executable, "-m", "workbench", "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    assert out.stdout.strip() == f"wb {__version__}"
