"""``wb import --cluster`` where Dask is missing, and the commands that must never load it.

A subprocess each: whether ``dask`` is in ``sys.modules`` is a property of a fresh
interpreter, and a blocked import stands in for an environment without ``distributed``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "training"

LIGHT = """
import sys
{block}
import workbench
from workbench.cli import main
try:
    main({argv!r})
except SystemExit as exc:
    print("RC:", exc.code)
print("DASK:" + ",".join(m for m in ("dask", "distributed") if m in sys.modules))
"""

BLOCK = """
class _Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("dask", "distributed"):
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, _Blocker())
"""


def _run(argv, block=False):
    code = LIGHT.format(block=BLOCK if block else "", argv=argv)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_without_distributed_cluster_says_what_to_install(tmp_path):
    out = _run(
        ["--store", f"sqlite:///{tmp_path / 's.sqlite'}", "import", str(DATA / "sampled"), "--cluster", "local:2"],
        block=True,
    )
    assert "RC: 2" in out.stdout, out.stdout + out.stderr
    assert "pip install 'wb[cluster]'" in out.stderr and out.stderr.count("\n") == 1


def test_help_and_a_local_import_never_load_dask(tmp_path):
    for argv in (
        ["--help"],
        ["import", "--help"],
        ["--store", f"sqlite:///{tmp_path / 's.sqlite'}", "import", str(DATA / "sampled"), "--jobs", "1"],
    ):
        out = _run(argv)
        assert "DASK:\n" in out.stdout, (argv, out.stdout, out.stderr)


def test_jobs_and_cluster_together_are_refused(tmp_path):
    out = _run(
        [
            "--store",
            f"sqlite:///{tmp_path / 's.sqlite'}",
            "import",
            str(DATA / "sampled"),
            "--cluster",
            "local:2",
            "--jobs",
            "2",
        ]
    )
    assert "RC: 2" in out.stdout and "give one of them" in out.stderr and "DASK:\n" in out.stdout
