"""Hung ranks diagnosed together from the recorder's hang and termination snapshots: the
rank that stopped first, where each rank is, which wait for it — or undecided, with what
is missing."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.diagnostics import diagnose
from workbench.errors import BadInput

from .snapshot_docs import T0, four_ranks, snapshot_doc, write_docs

FAKE_RANKS = Path(__file__).with_name("fake_ranks.py")
REPO = Path(__file__).resolve().parents[2]


def test_the_rank_behind_the_others_stopped_first_and_the_others_wait_for_it(tmp_path):
    d = diagnose([write_docs(tmp_path / "job", four_ranks(stuck=2))])
    h = d.report().hangs
    assert h.verdict == "named" and h.first_stopped == "rank 2" and h.first_stopped_rank == 2
    assert h.decided_by == "position in the loop" and h.waiting == ("rank 0", "rank 1", "rank 3")
    r2 = next(r for r in h.ranks if r.rank == 2)
    assert r2.phase == "input" and r2.frame == "slow_storage_read (train.py:10)"  # the stdlib frame is skipped
    assert r2.phases_done == ("input",) and r2.step == 40
    fc = d.report().failure_class
    assert fc.klass == "communication-timeout" and fc.role == "origin" and fc.where.ranks == (2,)
    assert "rank 2 stopped making progress first" in fc.detail
    text = " ".join(o.text for o in d.observations)
    assert "Rank 2 stopped making progress first (by its position in the loop)" in text
    assert "rank 0, rank 1, rank 3 are further along (step 40, phase allreduce)" in text


def test_a_rank_without_a_snapshot_leaves_it_undecided(tmp_path):
    docs = [doc for doc in four_ranks(stuck=2) if doc["at_snapshot"]["rank"] != 3]
    h = diagnose([write_docs(tmp_path / "job", docs)]).report().hangs
    assert h.verdict == "undecided" and h.first_stopped is None
    assert h.missing == ("rank 3: no hang, termination or on-request snapshot",)
    assert "no snapshot for rank 3" in h.reason
    assert any("among the ranks with a snapshot, rank 2 is behind" in n for n in h.notes)


def test_every_rank_at_the_same_place_is_undecided(tmp_path):
    docs = [snapshot_doc(r, done=("input", "compute")) for r in range(4)]
    h = diagnose([write_docs(tmp_path / "job", docs)]).report().hangs
    assert h.verdict == "undecided" and "every rank is at the same place (step 40, phase allreduce)" in h.reason


def _tied(hosts, gaps):
    docs = []
    for r in range(4):
        if r in (1, 2):  # both behind, in the same place; told apart only by when they last progressed
            doc = snapshot_doc(r, done=("input",), phase="input", frame="read", host=hosts[r], opened=T0 + gaps[r])
        else:
            doc = snapshot_doc(r, done=("input", "compute"), host=hosts[r])
        docs.append(doc)
    return docs


def test_ranks_at_the_same_place_are_ordered_by_their_clocks_only_beyond_the_margin(tmp_path):
    same_host = _tied(["n"] * 4, {1: 0.5, 2: 0.2})
    h = diagnose([write_docs(tmp_path / "a", same_host)]).report().hangs
    assert h.verdict == "named" and h.first_stopped == "rank 2" and h.decided_by == "clocks"
    two_hosts = _tied(["a", "b", "c", "d"], {1: 0.5, 2: 0.2})  # 0.3 s apart, clocks known to 1 s each
    h = diagnose([write_docs(tmp_path / "b", two_hosts)]).report().hangs
    assert h.verdict == "undecided" and "the clocks cannot order rank 2 and rank 1" in h.reason
    h = diagnose([tmp_path / "b"], clock_uncertainty=0.1).report().hangs
    assert h.verdict == "named" and h.first_stopped == "rank 2"


def test_one_process_is_placed_and_a_hang_that_ended_is_measured(tmp_path):
    doc = snapshot_doc(0, rank_count=1)
    del doc["at_snapshot"]["rank"]
    ended = {
        "format": "workbench.capture/1",
        "lens": "training",
        "window": {"snapshot_reason": "hang ended"},
        "trigger": {"kind": "hang ended", "seq": 40, "duration_ms": 45000.0},
        "samples": [],
        "recorder": {"pid": 1000, "host": "node-a"},
    }
    h = diagnose([write_docs(tmp_path / "one", [doc, ended])]).report().hangs
    assert h.verdict == "one process" and h.ranks[0].process == "pid 1000 on node-a"
    assert h.ranks[0].hang_ended_after_s == 45.0


def test_a_capture_without_the_recorders_state_is_skipped_and_a_bad_one_refused(tmp_path):
    plain = {"format": "workbench.capture/1", "lens": "training", "samples": [{"step": 1, "step_ms": 2.0}]}
    folder = write_docs(tmp_path / "plain", [plain])
    (folder / "x.log").write_text("hello\n")
    d = diagnose([folder])
    assert d.report().hangs is None
    assert any("without a hang, termination or on-request state" in s.why for s in d.skipped)
    bad = copy.deepcopy(snapshot_doc(0))
    bad["at_snapshot"]["rank"] = "zero"
    path = write_docs(tmp_path / "bad", [bad]) / "snap-0.json"
    with pytest.raises(BadInput) as err:
        diagnose([path])
    assert str(path) in str(err.value) and "$.at_snapshot.rank" in str(err.value)


def test_wb_diagnose_prints_the_hung_ranks(tmp_path):
    folder = write_docs(tmp_path / "job", four_ranks(stuck=1))
    env = {k: v for k, v in os.environ.items() if k != "WB_RECORDER"}
    out = subprocess.run(
        [sys.executable, "-m", "workbench", "diagnose", str(folder)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "Hung ranks (4 snapshots): rank 1 stopped making progress first" in out.stdout
    assert "rank 1: step 40 open 30.0 s, phase input open 29.0 s, in" in out.stdout
    assert all(len(line) <= 80 for line in out.stdout.splitlines())
    doc = json.loads(
        subprocess.run(
            [sys.executable, "-m", "workbench", "diagnose", "--json", str(folder)],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env,
            timeout=60,
        ).stdout
    )
    assert doc["hangs"]["first_stopped"] == "rank 1" and doc["failure_class"]["class"] == "communication-timeout"


def _hangs_at(folder: Path, step: int) -> set[int]:
    """The ranks whose hang snapshot of ``step`` is written."""
    ranks = set()
    for path in folder.glob("*-hang.json"):
        doc = json.loads(path.read_text())
        if doc["trigger"]["seq"] == step:
            ranks.add(doc["at_snapshot"]["rank"])
    return ranks


def test_four_ranks_of_a_fake_ddp_loop_with_one_stuck_are_diagnosed_as_that_rank_first(tmp_path):
    shared, out = tmp_path / "shared", tmp_path / "snapshots"
    shared.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("WB_RECORDER", "WB_STORE")}
    procs = [
        subprocess.Popen(
            [sys.executable, str(FAKE_RANKS), str(shared), str(out)],
            env={**env, "RANK": str(r), "WORLD_SIZE": "4", "STUCK_RANK": "2"},
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for r in range(4)
    ]
    try:
        deadline = time.monotonic() + 60
        while len(_hangs_at(out, 12)) < 4:
            assert time.monotonic() < deadline, [p.poll() for p in procs]
            time.sleep(0.05)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        codes = [p.wait(timeout=60) for p in procs]
    assert codes == [-signal.SIGTERM] * 4
    assert len(list(out.glob("*-termination.json"))) == 4
    d = diagnose([out])
    h = d.report().hangs
    assert h.verdict == "named" and h.first_stopped == "rank 2" and h.decided_by == "position in the loop"
    assert h.waiting == ("rank 0", "rank 1", "rank 3")
    by_rank = {r.rank: r for r in h.ranks}
    assert by_rank[2].phase == "input" and by_rank[2].frame.startswith("slow_storage_read (fake_ranks.py:")
    for r in (0, 1, 3):
        assert by_rank[r].phase == "allreduce" and by_rank[r].frame.startswith("all_reduce (fake_ranks.py:")
        assert by_rank[r].phases_done == ("input", "compute")
    assert all(r.step == 12 and r.snapshot_reason == "signal SIGTERM" for r in h.ranks)  # the latest: termination
    assert d.report().failure_class.where.ranks == (2,)


def test_snapshots_with_logs_and_their_watchdog_timeouts(tmp_path):
    job = write_docs(tmp_path / "job" / "node-a", four_ranks(stuck=2))
    (job / "rank0.log").write_text(
        "[rank0]:[E302 10:10:00.137000000 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=41, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600043 "
        "milliseconds before timing out.\n"
    )
    d = diagnose([tmp_path / "job"])
    report = d.report()
    assert report.hangs.first_stopped == "rank 2" and report.hangs.waiting == ("rank 0", "rank 1", "rank 3")
    # The log's timeout is a consequence on a waiting rank; the class is the collective's, its origin the snapshots'.
    assert report.failure_class.klass == "communication-timeout"
    assert any("watchdog_timeout" == r.kind and r.rank == 0 for r in report.timeline)
