"""Ctrl-C (SIGINT) during round 3 keeps rounds 1–2, and resume completes the plan; a crash too."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from .helpers import fake_bench, wb, write_plan


def _start(tmp_path, rounds=4):
    db = tmp_path / "wb.sqlite"
    store = f"sqlite:///{db}"
    bench = fake_bench(tmp_path)
    path = write_plan(
        tmp_path / "plan.toml", baseline=[str(bench), "10", "0.3"], candidate=[str(bench), "11", "0.3"], rounds=rounds
    )
    assert wb("rerun", "plan", "--from-file", str(path), store=store)[0] == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "--store", store, "rerun", "run", "p", "--workdir", str(tmp_path / "w")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, db, store


def _wait_for_runs(db, proc, n, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            with sqlite3.connect(db) as conn:
                done = conn.execute("SELECT count(*) FROM rerun_run WHERE status IN ('ok', 'failed')").fetchone()[0]
        except sqlite3.OperationalError:  # tables not there yet
            done = 0
        if done >= n:
            return
        time.sleep(0.02)
    raise AssertionError(f"fewer than {n} runs finished in {timeout} s")


def _rows(db):
    with sqlite3.connect(db) as conn:
        runs = conn.execute("SELECT round, arm, status FROM rerun_run ORDER BY id").fetchall()
        status = conn.execute("SELECT status FROM rerun_execution").fetchall()
    return runs, [s for (s,) in status]


@pytest.mark.slow
def test_ctrl_c_in_round_3_keeps_rounds_1_and_2_and_resume_completes(tmp_path):
    proc, db, store = _start(tmp_path)
    _wait_for_runs(db, proc, 6)  # rounds 1 and 2 are done; round 3's first run is starting
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "wb rerun resume p" in err
    runs, statuses = _rows(db)
    assert statuses == ["interrupted"]
    finished = [(r, a) for r, a, s in runs if s == "ok"]
    assert sorted(finished) == sorted((r, a) for r in (1, 2) for a in ("A", "B", "A'"))
    assert [s for r, _, s in runs if r == 3] == ["interrupted"]
    # The report works on the partial execution: two rounds, too few for a verdict.
    code, out, err = wb("rerun", "report", "p", "--json", store=store)
    partial = json.loads(out)
    assert partial["partial"] and partial["rounds"]["used"] == [1, 2] and partial["verdict"] == "INCONCLUSIVE"
    assert "TOO_FEW_ROUNDS" in partial["flags"]

    code, out, err = wb("rerun", "resume", "p", "--json", store=store)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["execution"]["status"] == "complete" and doc["rounds"]["used"] == [1, 2, 3, 4]
    ok = [(r["round"], r["arm"]) for r in doc["runs"] if r["status"] == "ok"]
    assert len(ok) == 12 and len(set(ok)) == 12  # nothing ran twice, nothing was lost
    assert doc["verdict"] == "REGRESSION"
    code, _, err = wb("rerun", "resume", "p", store=store)
    assert code == 2 and "no unfinished execution" in err


@pytest.mark.slow
def test_a_crash_keeps_finished_runs_and_resume_continues(tmp_path):
    proc, db, store = _start(tmp_path, rounds=3)
    _wait_for_runs(db, proc, 4)
    proc.kill()  # SIGKILL: no chance to clean up
    proc.communicate(timeout=60)
    runs, statuses = _rows(db)
    assert statuses == ["running"] and len([s for *_, s in runs if s == "ok"]) >= 4
    # A fresh `run` refuses to start a second execution beside the unfinished one.
    code, _, err = wb("rerun", "run", "p", store=store)
    assert code == 2 and "wb rerun resume p" in err
    code, out, err = wb("rerun", "resume", "p", "--json", store=store)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["rounds"]["used"] == [1, 2, 3] and doc["execution"]["status"] == "complete"
