"""Every value `wb rerun plan` allows works (issue 45, item 4): a plan with every numeric option at
its documented maximum (docs/limits.md) is made, scheduled and reported.

A rerun of 1,030 rounds used to run all 3,090 runs and then fail with an internal error
(`wb rerun report` too, every time after). The runs here are synthetic stored rows of an
execution (what the executor writes after each run), not 30,000 processes.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from store import open_store
from store.rerun import RerunExecution, RerunRun, find_plan
from workbench.limits import MAX_ROUNDS, MAX_ROWS, MAX_SEED, MAX_TIMEOUT_S, MAX_WARMUP_RUNS
from workbench.rerun.plan import Plan, schedule, warmup_slots

from .helpers import wb

pytestmark = pytest.mark.slow


def _plan(store: str, name: str, *extra: str) -> Plan:
    code, out, err = wb(
        "rerun",
        "plan",
        name,
        "--lens",
        "training",
        "--baseline",
        "./bench --old",
        "--candidate",
        "./bench --new",
        "--rounds",
        str(MAX_ROUNDS),
        "--seed",
        str(MAX_SEED),
        "--timeout",
        str(int(MAX_TIMEOUT_S)),
        "--warmup-runs",
        str(MAX_WARMUP_RUNS),
        "--warmup-steps",
        str(MAX_ROWS),
        *extra,
        store=store,
    )
    assert code == 0, err
    with open_store(store).session() as s:
        return Plan.from_json(find_plan(s, name).body)


def _executed(store: str, name: str, plan: Plan, slowdown: float) -> None:
    """A complete execution of every slot of the plan, written as the executor writes runs."""
    slots = warmup_slots(plan) + schedule(plan)
    rng = np.random.default_rng(5)
    values = 10.0 * np.exp(rng.normal(0.0, 0.01, len(slots)))
    st = open_store(store)
    with st.session() as s:
        plan_id = find_plan(s, name).id
        e = RerunExecution(plan_id=plan_id, status="complete", host="h", pid=1, schedule=[list(x) for x in slots])
        s.add(e)
        s.flush()
        s.add_all(
            RerunRun(
                execution_id=e.id,
                round=r,
                arm=arm,
                slot=i,
                status="ok",
                argv=["./bench"],
                started_at=f"2025-01-01T00:00:{i % 60:02d}+00:00",
                statistic=float(v * (1 + slowdown if arm == "B" else 1.0)),
            )
            for i, ((r, arm), v) in enumerate(zip(slots, values))
        )


def test_a_plan_at_every_maximum_is_scheduled_and_reported(sqlite_url):
    plan = _plan(sqlite_url, "big", "--delta", "0.02")
    assert (plan.rounds, plan.seed, plan.timeout_s, plan.warmup.runs, plan.warmup.steps) == (
        MAX_ROUNDS,
        MAX_SEED,
        MAX_TIMEOUT_S,
        MAX_WARMUP_RUNS,
        MAX_ROWS,
    )
    _executed(sqlite_url, "big", plan, slowdown=0.05)
    for _ in range(2):  # and again: a stored comparison of this size reads back
        code, out, err = wb("rerun", "report", "big", "--json", store=sqlite_url)
        assert code == 0, err
        doc = json.loads(out)
        assert len(doc["rounds"]["used"]) == MAX_ROUNDS and doc["verdict"] == "REGRESSION"
        assert doc["analysis"]["ratio"] == pytest.approx(1.05, rel=1e-3)
    code, out, err = wb("rerun", "report", "big", store=sqlite_url)
    assert code == 0 and "Verdict: REGRESSION" in out, err


def test_a_sequential_plan_of_the_most_rounds_is_reported(sqlite_url):
    plan = _plan(sqlite_url, "bigseq", "--stopping", "sequential", "--delta", "0.999")
    _executed(sqlite_url, "bigseq", plan, slowdown=0.0)
    code, out, err = wb("rerun", "report", "bigseq", "--json", store=sqlite_url)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["sequential"]["design"]["max_rounds"] == MAX_ROUNDS
    assert doc["verdict"] == "EQUIVALENT" and doc["sequential"]["stopped_at_round"] == MAX_ROUNDS


def test_one_past_each_maximum_is_one_line(sqlite_url):
    """Past its bound an option is refused, naming it (a warm-up of more steps than 2^53 was an
    internal error: the plan's canonical JSON has no such number)."""
    base = ["rerun", "plan", "over", "--lens", "training", "--baseline", "./a", "--candidate", "./b"]
    for option, value in (
        ("--rounds", MAX_ROUNDS + 1),
        ("--seed", MAX_SEED + 1),
        ("--timeout", int(MAX_TIMEOUT_S) + 1),
        ("--warmup-runs", MAX_WARMUP_RUNS + 1),
        ("--warmup-steps", 10**23),
    ):
        code, out, err = wb(*base, option, str(value), store=sqlite_url)
        assert code == 2 and err.count("\n") == 1 and "internal error" not in err, (option, err)
