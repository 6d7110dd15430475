"""Interrupted sessions keep the round structure: a round an interruption split is run again
whole after the resume, the report says so, and no analysed round mixes runs from before
and after the pause (docs/verify.md section 4)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from store import open_store
from workbench.rerun.execute import Executor, Observer, split_round
from workbench.rerun.report import paired_rounds, rerun_rounds

from .helpers import fake_bench, wb, write_plan

pytestmark = pytest.mark.store


class StopAfter(Observer):
    """Stops the execution between runs once ``n`` runs finished (a Ctrl-C between runs)."""

    def __init__(self, n: int) -> None:
        self.n, self.done = n, 0

    def run_finished(self, outcome, live) -> None:
        self.done += 1

    def should_stop(self) -> bool:
        return self.done >= self.n


def test_split_round_lists_the_finished_slots_of_the_round_the_resume_starts_in():
    slots = [(0, "A"), (0, "B"), (1, "B"), (1, "A"), (1, "A'"), (2, "A'"), (2, "A"), (2, "B")]
    assert split_round(slots, {0, 1, 2, 3, 4, 5}) == [5]  # round 2 had one run done
    assert split_round(slots, {0, 1, 2, 3, 4}) == []  # stopped between rounds
    assert split_round(slots, {0, 1, 2, 3}) == [2, 3]
    assert split_round(slots, {0}) == []  # warm-up runs are not analysed
    assert split_round(slots, set()) == [] and split_round(slots, set(range(8))) == []


def _run(status, round_, arm, value=None, run_id=None):
    return SimpleNamespace(round=round_, arm=arm, slot=0, status=status, statistic=value, run_id=run_id)


def test_the_last_finished_run_of_an_arm_counts_even_when_it_failed():
    runs = [
        _run("ok", 1, "A", 1.0),
        _run("ok", 1, "B", 1.0),
        _run("ok", 1, "A'", 1.0),
        _run("ok", 2, "A", 9.0),  # before the interruption
        _run("interrupted", 2, "B"),
        _run("ok", 2, "A", 2.0),  # run again after the resume
        _run("ok", 2, "B", 2.0),
        _run("ok", 2, "A'", 2.0),
        _run("ok", 3, "A", 3.0),
        _run("ok", 3, "B", 3.0),
        _run("ok", 3, "A'", 3.0),
        _run("failed", 3, "A'"),
    ]
    used, by_round = paired_rounds(runs)
    assert used == [1, 2] and by_round[2]["A"].statistic == 2.0
    assert rerun_rounds(runs) == {2: 1, 3: 1}


def test_a_round_split_by_an_interruption_is_run_again_whole(tmp_path, store_url):
    bench = fake_bench(tmp_path)
    path = write_plan(tmp_path / "plan.toml", baseline=[str(bench), "10"], candidate=[str(bench), "11"], rounds=4)
    assert wb("rerun", "plan", "--from-file", str(path), store=store_url)[0] == 0
    store = open_store(store_url)
    first = Executor(store, "p", observer=StopAfter(7), workdir=tmp_path / "w")
    execution = first.start()
    assert first.run(execution) == "interrupted"  # rounds 1 and 2, and the first run of round 3
    again = Executor(store, "p", workdir=tmp_path / "w")
    assert again.reopen() == execution and again.run(execution) == "complete"
    code, out, err = wb("rerun", "report", "p", "--json", store=store_url)
    assert code == 0, err
    doc = json.loads(out)
    rows = [(r["round"], r["arm"], r["slot"]) for r in doc["runs"]]
    round3 = [r for r in rows if r[0] == 3]
    assert len(round3) == 4 and round3[0] == round3[1]  # the split round's first run, then all three again
    assert len(rows) == 13 and doc["rounds"]["used"] == [1, 2, 3, 4]
    assert any("round(s) 3 split by an interruption: run again whole" in n for n in doc["notes"])
    assert doc["verdict"] == "REGRESSION"
    # The analysed round 3 is the one measured after the resume: its three runs are the last three.
    starts = [r["started_at"] for r in doc["runs"] if r["round"] == 3]
    assert sorted(starts[1:]) == starts[1:] and starts[0] < starts[1]
