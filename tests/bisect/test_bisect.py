"""``wb bisect`` on throwaway git histories with a known slowdown."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.rerun.helpers import wb

pytestmark = pytest.mark.store

# The benchmark every commit carries: step_ms = 10 ms x the factor in speed.txt, with a
# deterministic ±0.3 % wobble per rerun slot (no real timing: fast and stable in CI).
BENCH = r"""#!/bin/sh
F=$(cat speed.txt)
V=$(awk -v f="$F" -v s="${WB_RERUN_SLOT:-0}" 'BEGIN { printf "%.5f", 10 * f * (1 + ((s * 7919) % 13 - 6) / 2000) }')
printf '{"format": "workbench.capture/1", "lens": "training", "label": "b", "samples": [{"step": 0, "rank": 0, "step_ms": %s}, {"step": 1, "rank": 0, "step_ms": %s}]}' "$V" "$V" > "$WB_CAPTURE_OUT"
"""


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
        # Fixed dates: the same commit ids every run, so the steps' seeds (drawn from their names) repeat.
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def history(tmp_path: Path, factors: dict[int, float], commits: int = 64) -> tuple[Path, list[str]]:
    """``commits`` commits; from commit k on, speed.txt holds the factor of the latest k <= it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "bench.sh").write_text(BENCH)
    os.chmod(repo / "bench.sh", 0o755)
    factor, ids = 1.0, []
    for k in range(commits):
        factor = factors.get(k, factor)
        (repo / "speed.txt").write_text(f"{factor}\n")
        (repo / "log.txt").write_text(f"change {k}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"change {k}")
        ids.append(_git(repo, "rev-parse", "HEAD"))
    return repo, ids


def _bisect(tmp_path, store_url, repo, good, bad, *extra):
    code, out, err = wb(
        "bisect",
        "start",
        "--repo",
        str(repo),
        "--good",
        good,
        "--bad",
        bad,
        "--build",
        "cp bench.sh built.sh",
        "--bench",
        "sh built.sh",
        "--max-rounds",
        "12",
        "--workdir",
        str(tmp_path / "work"),
        "--json",
        *extra,
        store=store_url,
    )
    assert code == 0, err
    return json.loads(out)


def test_names_the_commit_that_made_it_slower(tmp_path, store_url):
    repo, ids = history(tmp_path, {37: 1.05})
    doc = _bisect(tmp_path, store_url, repo, ids[0], ids[-1])
    assert doc["status"] == "done"
    assert doc["result"]["outcome"] == "found" and doc["result"]["first_bad"] == ids[37]
    assert doc["result"]["last_good"] == ids[36]
    assert doc["steps_done"] <= 7  # the endpoint check and six halvings of 63
    assert doc["steps"][0]["endpoint"] and doc["steps"][0]["verdict"] == "REGRESSION"
    # Each step stopped early: sequential stopping, never the 12-round cap.
    assert all(s["rounds_used"] < 12 for s in doc["steps"])
    assert f"first bad: `{ids[37][:12]}`" in doc["result"]["text"]
    # status and report read the stored record; the text names the commit too.
    code, text, err = wb("bisect", "report", store=store_url)
    assert code == 0 and ids[37][:12] in text and "observation, not a cause" in text


def test_a_split_regression_is_reported_as_split(tmp_path, store_url):
    repo, ids = history(tmp_path, {20: 1.04, 45: 1.065}, commits=64)
    doc = _bisect(tmp_path, store_url, repo, ids[0], ids[-1])
    assert doc["result"]["splits"], doc["steps"]
    assert "split" in doc["result"]["text"]
    assert doc["result"]["first_bad"] in (ids[20], ids[45])


def test_no_regression_stops_at_the_endpoint_check(tmp_path, store_url):
    repo, ids = history(tmp_path, {}, commits=8)
    doc = _bisect(tmp_path, store_url, repo, ids[0], ids[-1])
    assert doc["status"] == "no-regression" and doc["steps_done"] == 1
    assert "does not reproduce here" in doc["result"]["text"]


@pytest.mark.parametrize("broken, outcome", [(3, "found"), (4, "range")])
def test_a_candidate_that_does_not_build_is_skipped(tmp_path, store_url, broken, outcome):
    repo, ids = history(tmp_path, {5: 1.05}, commits=8)
    code, out, err = wb(
        "bisect",
        "start",
        "--repo",
        str(repo),
        "--good",
        ids[0],
        "--bad",
        ids[-1],
        "--build",
        f"sh -c 'test {{rev}} != {ids[broken]} && cp bench.sh built.sh'",
        "--bench",
        "sh built.sh",
        "--max-rounds",
        "12",
        "--workdir",
        str(tmp_path / "work"),
        "--json",
        store=store_url,
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["result"]["skipped"] == [ids[broken]]
    assert doc["result"]["outcome"] == outcome
    if outcome == "found":  # the skipped commit was not needed
        assert doc["result"]["first_bad"] == ids[5]
    else:  # like git bisect: only a skipped commit stands between last good and first bad
        assert (
            doc["result"]["first_bad"] is None
            and ids[4][:12] in doc["result"]["text"]
            and ids[5][:12] in doc["result"]["text"]
        )


def test_an_endpoint_that_does_not_build_stops_the_bisection_with_the_reason(tmp_path, store_url):
    # qa walk: a wrong --build left the bisection "started · 0 steps" for ever, with no reason
    repo, ids = history(tmp_path, {5: 1.05}, commits=4)
    code, out, err = wb(
        "bisect",
        "start",
        "--repo",
        str(repo),
        "--good",
        ids[0],
        "--bad",
        ids[-1],
        "--build",
        "false",
        "--bench",
        "sh built.sh",
        "--workdir",
        str(tmp_path / "work"),
        "--name",
        "b",
        store=store_url,
    )
    assert code != 0 and "does not build" in err
    code, out, err = wb("bisect", "report", "b", "--json", store=store_url)
    doc = json.loads(out)
    assert doc["status"] == "stopped" and "does not build" in doc["stopped"]
    code, text, err = wb("bisect", "status", "b", store=store_url)
    assert code == 0 and "stopped: the reference" in text and "wb bisect resume b" in text


def test_list_mode_and_bad_input(tmp_path, store_url):
    versions = tmp_path / "versions.txt"
    versions.write_text("1.0\n1.1\n1.2\n1.3\n")
    bench = tmp_path / "bench.sh"
    bench.write_text(BENCH.replace("F=$(cat speed.txt)", 'F=$(case "$1" in 1.0|1.1) echo 1.0;; *) echo 1.05;; esac)'))
    code, out, err = wb(
        "bisect",
        "start",
        "--candidates",
        str(versions),
        "--bench",
        f"sh {bench} {{version}}",
        "--max-rounds",
        "12",
        "--workdir",
        str(tmp_path / "w"),
        "--json",
        store=store_url,
    )
    assert code == 0, err
    assert json.loads(out)["result"]["first_bad"] == "1.2"
    one = tmp_path / "one.txt"
    one.write_text("1.0\n")
    code, out, err = wb("bisect", "start", "--candidates", str(one), "--bench", "true", "--name", "x", store=store_url)
    assert code == 2 and "at least two versions" in err
    code, out, err = wb("bisect", "report", "nope", store=store_url)
    assert code == 2 and "no bisection 'nope'" in err


def test_a_bisection_travels_in_a_bundle_and_its_steps_recompute(tmp_path, store_url):
    from store import open_store
    from workbench.investigations import workflow as wf

    inv = wf.new_investigation(
        open_store(store_url), lens="training", question="Which commit made the step slower?"
    ).to_json()
    repo, ids = history(tmp_path, {5: 1.05}, commits=8)
    doc = _bisect(tmp_path, store_url, repo, ids[0], ids[-1], "--investigation", str(inv["id"]))
    assert doc["result"]["first_bad"] == ids[5]
    observations = wf.investigation_view(open_store(store_url), inv["id"]).to_json()["observations"]
    assert len(observations) == 1 and observations[0]["source"] == "bisect"
    assert ids[5][:12] in observations[0]["text"]
    assert {e["kind"] for e in observations[0]["evidence"]} == {"rerun_comparison"}

    out = tmp_path / "b.json"
    code, _, err = wb("bundle", "export", str(inv["id"]), "-o", str(out), "--embed-samples", store=store_url)
    assert code == 0, err
    bundle = json.loads(out.read_text())
    carried = bundle["recipe"]["content"]["bisections"]
    assert carried[0]["state"]["result"]["first_bad"] == ids[5]
    assert len(bundle["results"]["content"]["rerun_comparisons"]) == doc["steps_done"]
    code, text, err = wb("evidence", "verify", str(out), "--recompute", "--json", store=store_url)
    assert code == 0, err + text
    checks = json.loads(text)["recompute"]
    assert sum(c["part"].startswith("results.rerun_comparisons") and c["ok"] for c in checks) == doc["steps_done"]

    # A step's verdict changed after the fact no longer recomputes (checksum resealed by hand).
    from workbench.bundle.export import reseal_digests

    body = bundle["results"]["content"]["rerun_comparisons"][0]["record"]["body"]
    body["verdict"] = "EQUIVALENT"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(reseal_digests(bundle)))
    code, text, err = wb("evidence", "verify", str(forged), "--recompute", "--json", store=store_url)
    assert code == 3
    bad = {c["part"]: c["detail"] for c in json.loads(text)["recompute"] if not c["ok"]}
    assert bad["results.rerun_comparisons[0].record.body.verdict"].startswith("stated 'EQUIVALENT', rebuilt")


def test_resume_after_an_interruption_continues_to_the_same_answer(tmp_path, store_url, monkeypatch):
    from store import open_store
    from workbench.bisect import bisection

    repo, ids = history(tmp_path, {11: 1.05}, commits=16)
    spec = bisection.Spec(
        name="resumed",
        bench=["sh", "built.sh"],
        build=["cp", "bench.sh", "built.sh"],
        workdir=str(tmp_path / "work"),
        repo=str(repo),
        good=ids[0],
        bad=ids[-1],
        max_rounds=12,
    )
    store = open_store(store_url)
    bisection.start(store, spec)
    real, calls = bisection.execute, []

    def interrupted_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(bisection, "execute", interrupted_third)
    with pytest.raises(KeyboardInterrupt):
        bisection.run(store, "resumed")
    status = bisection.report(store, "resumed")
    assert status.status == "bisecting" and status.steps_done == 2 and status.current
    monkeypatch.setattr(bisection, "execute", real)
    code, out, err = wb("bisect", "resume", "resumed", "--json", store=store_url)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["result"]["first_bad"] == ids[11] and doc["current"] is None


@pytest.mark.slow
@pytest.mark.cpu_clocked
def test_finds_a_real_cpu_clocked_slowdown(tmp_path, store_url):
    """The same search with a real workload: each commit's bench runs the bundled CPU
    workload, CPU-clocked (stable on a busy machine), 5 % slower from commit 9 on."""
    import sys

    from tests.rerun.helpers import CPU_ARGS, CPU_WORKLOAD

    repo, ids = history(tmp_path, {9: 1.05}, commits=16)
    bench = (
        f"{sys.executable} {CPU_WORKLOAD} {' '.join(CPU_ARGS)} "
        '--slowdown $(awk -v f="$(cat speed.txt)" \'BEGIN { printf "%g", (f - 1) * 100 }\')'
    )
    (repo / "cpu_bench.sh").write_text(bench + "\n")
    code, out, err = wb(
        "bisect",
        "start",
        "--repo",
        str(repo),
        "--good",
        ids[0],
        "--bad",
        ids[-1],
        "--bench",
        f"sh {repo / 'cpu_bench.sh'}",
        "--max-rounds",
        "12",
        "--workdir",
        str(tmp_path / "work"),
        "--json",
        store=store_url,
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["result"]["first_bad"] == ids[9], doc["steps"]
    # The endpoint check and four halvings of 15; on a busy machine a step can come out
    # undecided (skipped: its neighbour is tried) or read as part of the whole (a split: the
    # rest gets an endpoint check of its own), each one step more.
    undecided = sum(1 for step in doc["steps"] if step.get("class") == "undecided")
    assert doc["steps_done"] <= 5 + undecided + len(doc["splits"]), doc["steps"]


def test_status_before_any_step_says_the_endpoints_come_first():
    from workbench.bisect.format import render_bisection
    from workbench.bisect.result import BisectionReport

    cs = [{"rev": "a" * 40, "title": "", "status": "good"}, {"rev": "b" * 40, "title": "", "status": "untested"}]
    doc = {
        "id": 1,
        "name": "n",
        "status": "started",
        "spec": {"name": "n", "bench": ["true"], "workdir": "/w"},
        "candidates": cs,
        "lo": 0,
        "hi": 1,
        "reference": 0,
        "endpoint": None,
        "steps": [],
        "current": None,
        "splits": [],
        "result": None,
        "steps_done": 0,
    }
    text = render_bisection(BisectionReport.from_json(doc))
    assert "endpoints not checked yet" in text and "open range" not in text


def test_the_door_lists_stored_bisections_as_typed_rows(tmp_path, store_url):
    """bisect/workflow.py: the Verify list decodes the stored state (never reads it as a dict), and
    an unknown bisection is a usage error."""
    from store import open_store
    from workbench.bisect.bisection import report, start
    from workbench.bisect.result import Spec
    from workbench.bisect.workflow import bisect_errors, bisection_rows
    from workbench.errors import UsageError

    versions = tmp_path / "versions.txt"
    versions.write_text("1.0\n1.1\n1.2\n1.3\n1.4\n")
    store = open_store(store_url)
    assert bisection_rows(store) == []
    bid = start(store, Spec(name="five", bench=("true",), workdir=str(tmp_path / "w"), candidates_file=str(versions)))
    (row,) = bisection_rows(store)
    assert (row.id, row.name, row.status, row.steps, row.open) == (bid, "five", "started", 0, 3)
    with pytest.raises(UsageError, match="no bisection 'nope'"):
        with bisect_errors():
            report(store, "nope")
