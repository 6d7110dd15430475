"""`wb evidence verify` works where the store, sqlmodel and Textual cannot be imported."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bundle.helpers import sample_bundle
from workbench.bundle.export import dumps, write_bundle

REPO = Path(__file__).resolve().parents[2]

BLOCKER = r"""
import sys
BLOCKED = ("store", "sqlmodel", "textual", "sqlalchemy")
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is blocked in this test")
        return None
sys.meta_path.insert(0, Block())
from workbench.cli import main
try:
    main(sys.argv[1:])
finally:
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    assert not leaked, leaked
"""


def _run(*args):
    return subprocess.run([sys.executable, "-c", BLOCKER, *args], capture_output=True, text=True, cwd=REPO, timeout=120)


@pytest.fixture(scope="module")
def bundle_path(tmp_path_factory):
    return write_bundle(sample_bundle(), tmp_path_factory.mktemp("b") / "bundle.json")


def test_blocker_really_blocks():
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKER.replace("from workbench.cli import main", "import store.api"), "x"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode != 0 and "blocked" in proc.stderr


def test_valid_bundle_exit_0_and_says_unsigned(bundle_path):
    proc = _run("evidence", "verify", str(bundle_path))
    assert proc.returncode == 0, proc.stderr
    assert "VALID" in proc.stdout
    assert "not signed" in proc.stdout and "does not show who made it, nor that its result is right" in proc.stdout


def test_json_output_is_one_document(bundle_path):
    proc = _run("evidence", "verify", "--json", str(bundle_path))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["valid"] is True and doc["signed"] is False and doc["authenticity"] == "not signed"


def test_mismatch_exit_3_names_the_part(tmp_path):
    doc = json.loads(dumps(sample_bundle()))
    doc["observations"][0]["text"] = "Queue time grew from 40 ms to 60 ms."
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc))
    proc = _run("evidence", "verify", str(path))
    assert proc.returncode == 3
    assert "MISMATCH" in proc.stdout and "checksum.parts.observations" in proc.stdout


def test_unreadable_exit_2_one_line(tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{"format": "wb.evidence-bundle", "format": "x"}')
    proc = _run("evidence", "verify", str(path))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "duplicate key 'format'" in proc.stderr
    assert str(path) in proc.stderr


def test_oversized_bundle_exit_2(tmp_path):
    path = tmp_path / "big.json"
    with path.open("wb") as fh:
        fh.truncate(100 * 1000 * 1000)
    proc = _run("evidence", "verify", str(path))
    assert proc.returncode == 2 and "over the 64 MiB limit" in proc.stderr and "--max-size" in proc.stderr
