"""Issue 28 item 3: bisect's build marker lives in wb's work directory, never in the tree
under test, and nothing is written through a symlink there."""

from __future__ import annotations

import os

import pytest

from workbench.bisect import candidates as cand
from workbench.errors import UsageError
from workbench.outputs import identity_name

C = cand.Candidate("0123456789abcdef0123", "a commit")
KEY = identity_name(C.rev)  # the candidate's names in the work directory: readable, then a digest


def _workspace(tmp_path):
    root = tmp_path / "work"
    ws = cand.workspace_of(C, root)
    ws.mkdir(parents=True)
    return root, ws


def test_a_committed_marker_symlink_is_not_written_through(tmp_path):
    root, ws = _workspace(tmp_path)
    target = tmp_path / "outside.txt"
    (ws / ".wb-built").symlink_to(target)
    assert cand.build(["sh", "-c", "echo built > out.txt"], C, ws, 30) == ""
    assert not target.exists() and not target.is_symlink()
    assert (ws / "out.txt").read_text() == "built\n"  # the build ran
    assert (root / f"built-{KEY}").read_text().strip() == C.rev
    assert os.readlink(ws / ".wb-built") == str(target)  # the tree under test is untouched


def test_a_committed_marker_file_does_not_count_as_built(tmp_path):
    _root, ws = _workspace(tmp_path)
    (ws / ".wb-built").write_text("ok\n")
    assert cand.build(["sh", "-c", "echo built > out.txt"], C, ws, 30) == ""
    assert (ws / "out.txt").exists()


def test_a_built_candidate_is_not_built_again(tmp_path):
    _root, ws = _workspace(tmp_path)
    assert cand.build(["sh", "-c", "echo x >> count.txt"], C, ws, 30) == ""
    assert cand.build(["sh", "-c", "echo x >> count.txt"], C, ws, 30) == ""
    assert (ws / "count.txt").read_text() == "x\n"


@pytest.mark.parametrize("name", [f"built-{KEY}", f"build-{KEY}.log"])
def test_a_symlink_planted_in_the_work_directory_is_refused(tmp_path, name):
    root, ws = _workspace(tmp_path)
    target = tmp_path / "outside.txt"
    (root / name).symlink_to(target)
    # A symlinked marker does not count as built; writing the marker or the log through it is refused.
    with pytest.raises(UsageError, match="only regular files"):
        cand.build(["true"], C, ws, 30)
    assert not target.exists()
