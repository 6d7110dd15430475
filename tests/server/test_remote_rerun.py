"""Work runs where the GPU is, records land on the server: ``wb --server URL rerun plan|run|resume``
runs the arms on this machine and writes the plan, the execution, each run's outcome and capture
and the report into the server's store; an interrupted execution resumes from the server's
record, on any machine that holds the token."""

from __future__ import annotations

import json

import pytest

from tests.rerun.helpers import fake_bench
from tests.server.conftest import wb_here
from workbench.rerun.execute import Executor, Observer
from workbench.usecases.remote import Remote
from workbench.usecases.reruns import WorkbenchLedger

pytestmark = pytest.mark.store


def _ok(*args: str) -> str:
    code, out, err = wb_here(*args)
    assert code == 0, (args, out, err)
    return out


@pytest.fixture
def server(store_url, in_process, monkeypatch, tmp_path):
    for name in ("WB_SERVER", "WB_TOKEN", "WB_STORE"):
        monkeypatch.delenv(name, raising=False)
    served = in_process(store_url)
    monkeypatch.setenv("WB_TOKEN", served.token("gpu-node-17", "upload"))
    monkeypatch.chdir(tmp_path)
    return served


def _plan(url: str, bench, name: str = "p") -> None:
    _ok(
        "--server",
        url,
        "rerun",
        "plan",
        name,
        "--lens",
        "training",
        "--baseline",
        f"{bench} 10",
        "--candidate",
        f"{bench} 12",
        "--rounds",
        "3",
        "--seed",
        "5",
    )


def test_a_rerun_typed_on_a_node_lands_on_the_server(server, store_url, tmp_path):
    bench = fake_bench(tmp_path)
    _plan(server.url, bench)
    workdir = tmp_path / "node-runs"
    shown = json.loads(_ok("--server", server.url, "rerun", "run", "p", "--workdir", str(workdir), "--json"))
    assert shown["execution"]["status"] == "complete" and len(shown["runs"]) == 9
    assert len(list(workdir.rglob("*.capture.json"))) == 9  # the arms ran here
    # Everything is in the server's store, read there without the server:
    stored = json.loads(_ok("--store", store_url, "rerun", "report", "p", "--json"))
    assert stored["verdict"] == shown["verdict"] and stored["rounds"] == shown["rounds"]
    assert [r["run_id"] for r in stored["runs"]] == [r["run_id"] for r in shown["runs"]]
    runs = json.loads(_ok("--store", store_url, "runs", "--json"))
    assert sorted(r["label"] for r in runs) == sorted(
        f"p e1 r{r['round']} {r['arm']}" for r in shown["runs"] if r["status"] == "ok"
    )
    assert all(r["origin"] == "rerun" for r in runs)
    assert _ok("--store", store_url, "rerun", "report", "p") == _ok("--server", server.url, "rerun", "report", "p")


def test_an_interrupted_execution_resumes_from_the_servers_record(server, store_url, tmp_path):
    bench = fake_bench(tmp_path)
    _plan(server.url, bench)

    class StopAfterFour(Observer):
        def __init__(self) -> None:
            self.seen = 0

        def run_finished(self, outcome, live) -> None:
            self.seen += 1

        def should_stop(self) -> bool:
            return self.seen >= 4

    import os

    with Remote(server.url, os.environ["WB_TOKEN"]) as wb:
        executor = Executor(WorkbenchLedger(wb), "p", observer=StopAfterFour(), workdir=tmp_path / "first-node")
        execution_id = executor.start()
        assert executor.run(execution_id) == "interrupted"
    kept = json.loads(_ok("--store", store_url, "rerun", "report", "p", "--json"))
    assert kept["execution"]["status"] == "interrupted" and len(kept["runs"]) == 4
    code, _out, err = wb_here("--server", server.url, "rerun", "run", "p")
    assert code == 2 and "wb rerun resume p" in err  # the server knows it is unfinished
    done = json.loads(_ok("--server", server.url, "rerun", "resume", "p", "--json"))
    assert done["execution"]["id"] == execution_id and done["execution"]["status"] == "complete"
    # Four runs stopped it inside round 2: that round is run again whole (its first run kept in the
    # record, not analysed), so 3 rounds of 3 arms plus the one kept run.
    assert len(done["runs"]) == 10 and done["rounds"]["used"] == [1, 2, 3]
    assert any("split by an interruption" in note for note in done["notes"])
    assert [r["run_id"] for r in done["runs"][:4]] == [r["run_id"] for r in kept["runs"]]  # kept, not run again


def test_a_read_token_cannot_record_an_execution(server, tmp_path, monkeypatch):
    bench = fake_bench(tmp_path)
    _plan(server.url, bench)
    monkeypatch.setenv("WB_TOKEN", server.token("dash", "read"))
    code, _out, err = wb_here("--server", server.url, "rerun", "run", "p", "--workdir", str(tmp_path / "w"))
    assert code == 2 and "needs role 'upload'" in err and len(err.strip().splitlines()) <= 4
    assert not list((tmp_path / "w").rglob("*.capture.json"))  # refused before anything ran


@pytest.mark.slow
def test_a_bisection_typed_on_a_node_records_on_the_server(server, store_url, tmp_path):
    from tests.bisect.test_bisect import history

    repo, ids = history(tmp_path, {9: 1.3}, commits=16)
    args = ["bisect", "start", "--repo", str(repo), "--good", ids[0], "--bad", ids[-1]]
    args += ["--build", "cp bench.sh built.sh", "--bench", "sh built.sh", "--max-rounds", "12"]
    found = json.loads(_ok("--server", server.url, *args, "--workdir", str(tmp_path / "node"), "--json"))
    assert found["status"] == "done" and found["result"]["first_bad"] == ids[9]
    stored = json.loads(_ok("--store", store_url, "bisect", "report", "--json"))  # in the server's store
    assert stored["result"] == found["result"] and stored["steps_done"] == found["steps_done"]
    plans = json.loads(_ok("--store", store_url, "rerun", "plan", "--list", "--json"))["plans"]
    assert len(plans) == found["steps_done"]  # each step's plan, execution and comparison are there too
    assert _ok("--server", server.url, "bisect", "report") == _ok("--store", store_url, "bisect", "report")
