"""Issue 45 item 3: workspaces by identity. Two versions that read alike once made safe for a
path (``1.0+x`` and ``1.0_x``) never share a workspace or a build; a finished bisection
removes its workspaces, or keeps them with ``--keep-workspaces`` and lists them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.bisect.test_bisect import BENCH, _bisect, history
from tests.rerun.helpers import wb
from workbench.bisect import candidates as cand
from workbench.outputs import identity_name

# The bench reads the version its workspace was built for: 1.0 and 1.0_x are fast, the rest slow.
SPEED = 'F=$(case "$(cat built-version.txt)" in 1.0|1.0_x) echo 1.0;; *) echo 1.05;; esac)'


def test_names_are_the_exact_revision():
    texts = ["1.0+x", "1.0_x", "1.0 x", "1.0/x", "1.0x", "a" * 40 + "1", "a" * 40 + "2", "é", "e"]
    names = [identity_name(t) for t in texts]
    assert len(set(names)) == len(texts)
    assert names[0].startswith("1.0_x-") and names[1].startswith("1.0_x-")  # readable, then the digest
    assert all(n.isascii() and "/" not in n and not n.startswith(".") for n in names)
    root = Path("/w")
    assert cand.workspace_of(cand.Candidate("1.0+x", ""), root) != cand.workspace_of(cand.Candidate("1.0_x", ""), root)


def _list_bisection(tmp_path, store_url, *extra: str) -> dict:
    versions = tmp_path / "versions.txt"
    versions.write_text("1.0\n1.0_x\n1.0+x\n1.1\n")  # 1.0+x is the first slow one
    bench = tmp_path / "bench.sh"
    bench.write_text(BENCH.replace("F=$(cat speed.txt)", SPEED))
    code, out, err = wb(
        "bisect",
        "start",
        "--candidates",
        str(versions),
        "--build",
        "sh -c 'echo {version} > built-version.txt'",
        "--bench",
        f"sh {bench}",
        "--max-rounds",
        "12",
        "--workdir",
        str(tmp_path / "w"),
        "--json",
        *extra,
        store=store_url,
    )
    assert code == 0, err
    return json.loads(out)


@pytest.mark.store
def test_versions_that_read_alike_get_their_own_build(tmp_path, store_url):
    """Before, 1.0+x reused 1.0_x's workspace and build: never built, and reported "last good"."""
    doc = _list_bisection(tmp_path, store_url)
    result = doc["result"]
    assert result["outcome"] == "found", result
    assert result["first_bad"] == "1.0+x" and result["last_good"] == "1.0_x"
    assert "workspaces" not in doc and not list((tmp_path / "w").glob("ws-*"))  # removed at the end
    assert {p.name for p in (tmp_path / "w").glob("built-*")} == {
        f"built-{identity_name(v)}" for v in ("1.0", "1.0_x", "1.0+x", "1.1")
    }


@pytest.mark.store
def test_keep_workspaces_keeps_and_lists_them(tmp_path, store_url):
    doc = _list_bisection(tmp_path, store_url, "--keep-workspaces")
    kept = doc["workspaces"]
    assert sorted(kept) == sorted(str(p) for p in (tmp_path / "w").glob("ws-*")) and len(kept) == 4
    assert {Path(k, "built-version.txt").read_text().strip() for k in kept} == {"1.0", "1.0_x", "1.0+x", "1.1"}
    code, text, _err = wb("bisect", "report", store=store_url)
    assert code == 0 and "workspaces kept (--keep-workspaces):" in text


@pytest.mark.store
def test_a_finished_git_bisection_removes_its_worktrees(tmp_path, store_url):
    repo, ids = history(tmp_path, {5: 1.05}, commits=8)
    doc = _bisect(tmp_path, store_url, repo, ids[0], ids[-1])
    assert doc["result"]["first_bad"] == ids[5]
    assert not list((tmp_path / "work").glob("ws-*"))
    listed = subprocess.run(["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True).stdout
    assert listed.count("\n") == 1, listed  # the repository's own checkout only
