"""Item 7 of issue 16: several processes importing one file (or one bundle) at once.

The digest check runs before the write, so two processes both find the file new; the
unique index then decides. The loser must say "already imported" (exit 0), never an
IntegrityError, and the store holds the file once. On both backends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.hardening import inputs
from tests.hardening.conftest import REPO

PROCESSES = 4


def _at_once(*args: str) -> list[subprocess.CompletedProcess]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("WB_DEBUG", None)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "workbench", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(PROCESSES)
    ]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


@pytest.mark.store
def test_concurrent_import_of_one_file(store_url, tmp_path):
    from store import open_store

    open_store(store_url).ensure_exists().close()  # created first: concurrent creation is a separate item (6)
    capture = inputs.native_capture(tmp_path / "c.json", n=2_000)
    results = _at_once("--store", store_url, "import", str(capture), "--json")
    for r in results:
        assert r.returncode == 0, r.stderr
        assert "IntegrityError" not in r.stderr and "internal error" not in r.stderr
    docs = [json.loads(r.stdout) for r in results]
    assert sum(len(d["imported"]) for d in docs) == 1
    skipped = [s["reason"] for d in docs for s in d["skipped"]]
    assert len(skipped) == PROCESSES - 1 and all("already imported" in why for why in skipped)
    st = open_store(store_url)
    assert len(st.list_runs()) == 1
    st.close()


@pytest.mark.store
def test_concurrent_import_of_one_bundle(store_url, tmp_path):
    from store import open_store
    from tests.investigations.fakes import fake_compare, populate
    from workbench.bundle.export import write_bundle
    from workbench.investigations import workflow as wf
    from workbench.investigations.bundling import export_investigation

    author = open_store(f"sqlite:///{tmp_path / 'author.sqlite'}")
    (tmp_path / "caps").mkdir()
    base, cand, _ = populate(author, tmp_path / "caps")
    inv = wf.new_investigation(
        author,
        lens="inference",
        question="q?",
        intended_change={"engine": ["a", "b"]},
        baseline=base,
        candidate=cand,
        by="ana",
    ).to_json()
    wf.store_comparison(author, inv["id"], base, cand, engine=fake_compare, by="ana").to_json()
    bundle = write_bundle(export_investigation(author, inv["id"]), tmp_path / "bundle.json")
    author.close()

    open_store(store_url).ensure_exists().close()
    results = _at_once("--store", store_url, "bundle", "import", str(bundle), "--json")
    for r in results:
        assert r.returncode == 0, r.stderr
        assert "IntegrityError" not in r.stderr and "internal error" not in r.stderr
    docs = [json.loads(r.stdout) for r in results]
    assert sum(not d["already_imported"] for d in docs) == 1
    assert len({d["investigation"] for d in docs}) == 1
