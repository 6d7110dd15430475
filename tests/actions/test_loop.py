"""The seed's loop, on the demo's inference investigation: propose "max_num_seqs 128 -> 256"
citing the queue-time hypothesis, approve it, verify it with a rerun plan whose candidate
embodies it, and get the status the data decide; a rejected action cannot be verified;
a retry of the demo's OOM incident on the same node is unchanged conditions."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.actions.helpers import STAND_IN, bench_command
from tests.conftest import REPO
from workbench.actions.records import ActionView
from tests.rerun.helpers import wb

pytestmark = pytest.mark.store

OOM_INCIDENT = REPO / "tests" / "data" / "failures" / "incident-cuda-oom"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("actions")
    url = f"sqlite:///{tmp / 'wb.sqlite'}"
    code, _, err = wb("demo", "--headless", store=url)
    assert code == 0, err
    return url, tmp


def wbj(url, *args):
    code, out, err = wb(*args, "--json", store=url)
    assert code == 0, err
    return json.loads(out)


def _investigation(url, lens):
    rows = wbj(url, "investigate", "list")
    return wbj(url, "investigate", "show", str(next(r for r in rows if r["lens"] == lens)["id"]))


def _run_plan(url, tmp, name, inv, base_seqs, cand_seqs, base_queue, cand_queue, change="engine_config"):
    code, _, err = wb(
        "rerun",
        "plan",
        name,
        "--lens",
        "inference",
        "--investigation",
        str(inv),
        "--baseline",
        bench_command(base_seqs, base_queue),
        "--candidate",
        bench_command(cand_seqs, cand_queue),
        "--metric",
        "queue_ms",
        "--statistic",
        "mean",
        "--rounds",
        "5",
        "--seed",
        "3",
        "--change",
        change,
        store=url,
    )
    assert code == 0, err
    code, _, err = wb("rerun", "run", name, store=url)
    assert code in (0, 4), err


@pytest.fixture(scope="module")
def loop(demo):
    """The seed's loop, walked once per test process (xdist may send this module's tests to
    different workers: each test asks for what it needs, never for another test's leftovers).
    Returns every document the commands printed along the way."""
    url, tmp = demo
    inv = _investigation(url, "inference")
    queue_hyp = next(h for h in inv["hypotheses"] if "queued" in h["statement"])
    steps = {"inv": inv, "hyp": queue_hyp}
    steps["proposed"] = wbj(
        url,
        "action",
        "propose",
        str(inv["id"]),
        "--change",
        "max_num_seqs=128:256",
        "--scope",
        "pool-a inference servers",
        "--because",
        str(queue_hyp["id"]),
        "--expect",
        "queue_ms",
        "decrease",
        "--evidence",
        f"comparison={inv['comparisons'][0]['id']}",
    )
    aid = str(steps["proposed"]["id"])
    steps["approved"] = wbj(url, "action", "approve", aid, "--by", "dana", "--why", "queue time dominates TTFT p95")
    _run_plan(url, tmp, "seqs-256", inv["id"], 128, 256, 30.0, 15.0)
    steps["verified"] = wbj(url, "action", "verify", aid, "--plan", "seqs-256")
    # The data decide: a candidate that does not move queue time is not verified, with the reason.
    same = wbj(
        url,
        "action",
        "propose",
        str(inv["id"]),
        "--change",
        "max_num_seqs=128:256",
        "--scope",
        "pool-b",
        "--because",
        str(queue_hyp["id"]),
        "--expect",
        "queue_ms",
        "decrease",
    )
    wbj(url, "action", "approve", str(same["id"]), "--by", "dana", "--why", "try pool-b too")
    _run_plan(url, tmp, "seqs-256-flat", inv["id"], 128, 256, 30.0, 30.0)
    steps["flat"] = wbj(url, "action", "verify", str(same["id"]), "--plan", "seqs-256-flat")
    return steps


def test_the_seed_loop_on_the_demo_inference_investigation(demo, loop):
    url, _ = demo
    inv, queue_hyp, action = loop["inv"], loop["hyp"], loop["proposed"]
    assert action["status"]["status"] == "proposed" and action["because"] == [queue_hyp["id"]]
    assert action["evidence"] == [{"kind": "comparison", "id": inv["comparisons"][0]["id"]}]
    approved = loop["approved"]
    assert approved["status"]["status"] == "pending"
    assert [d["decision"] for d in approved["decisions"]] == ["approved"] and approved["decisions"][0]["by"] == "dana"
    verified = loop["verified"]
    assert verified["status"]["status"] == "verified", verified["status"]
    assert verified["verifications"][0]["plan"] == "seqs-256"
    shown = wbj(url, "action", "show", str(action["id"]))
    assert shown["status"] == verified["status"]  # derived again from the stored data, not kept
    assert ActionView.from_json(shown).to_json() == shown  # the typed record (docs/schema/action.json) round-trips
    flat = loop["flat"]["status"]
    assert flat["status"] == "not verified" and flat["reason"] in ("wrong direction", "underpowered"), flat


def test_a_rejected_action_cannot_be_verified(demo, loop):
    url, tmp = demo
    inv = _investigation(url, "inference")
    hyp = inv["hypotheses"][0]["id"]
    action = wbj(
        url,
        "action",
        "propose",
        str(inv["id"]),
        "--change",
        "max_num_seqs=128:512",
        "--scope",
        "all pools",
        "--because",
        str(hyp),
        "--expect",
        "queue_ms",
        "decrease",
    )
    rejected = wbj(url, "action", "reject", str(action["id"]), "--by", "lee", "--why", "512 risks KV-cache preemption")
    assert rejected["status"]["status"] == "rejected" and "lee" in rejected["status"]["why"]
    code, out, err = wb("action", "verify", str(action["id"]), "--plan", "seqs-256", store=url)
    assert code == 3 and "was rejected" in err and len(err.strip().splitlines()) == 1
    assert wbj(url, "action", "show", str(action["id"]))["verifications"] == []  # nothing written
    # A plan that does not embody the change is refused too (once approved).
    wbj(url, "action", "approve", str(action["id"]), "--by", "lee", "--why", "reconsidered with a smaller pool")
    code, _, err = wb("action", "verify", str(action["id"]), "--plan", "seqs-256", store=url)
    assert code == 2 and "candidate arm's captures say engine_config.max_num_seqs=256, not 512" in err
    history = wbj(url, "action", "show", str(action["id"]))["decisions"]
    assert [d["decision"] for d in history] == ["rejected", "approved"]  # append-only


def test_a_retry_of_the_oom_incident_on_the_same_node_is_unchanged_conditions(demo):
    url, tmp = demo
    inv = _investigation(url, "training")
    retry = wbj(
        url, "action", "propose", str(inv["id"]), "--retry", str(OOM_INCIDENT), "--scope", "job 4812, resubmitted as is"
    )
    assert retry["kind"] == "retry"
    assert retry["retry"]["failure_class"] == "gpu-memory-exhaustion"
    # An OOM comes back on any node: only the memory limit, the batch and the memory fraction are blamed.
    assert retry["retry"]["conditions"] == {"memory_limit": "79.10 GiB"}
    wbj(url, "action", "approve", str(retry["id"]), "--by", "sam", "--why", "resubmit")
    again = tmp / "retry-job"
    shutil.copytree(OOM_INCIDENT, again)  # the new job: the same node, the same failure
    status = wbj(url, "action", "verify", str(retry["id"]), "--job", str(again))["status"]
    assert status["status"] == "not verified" and status["reason"] == "conditions unchanged"
    assert "the conditions that caused the failure have not changed" in status["why"]
    assert "memory_limit 79.10 GiB" in status["why"]
    # On another node the OOM is the same failure: the node is not a condition of it.
    moved = tmp / "retry-moved"
    shutil.copytree(OOM_INCIDENT / "node-0", moved / "node-7")
    for path in moved.rglob("*"):  # the new job's own lines name its host
        if path.is_file():
            path.write_text(path.read_text().replace("node-0", "node-7"))
    status = wbj(url, "action", "verify", str(retry["id"]), "--job", str(moved))["status"]
    assert status["status"] == "not verified" and status["reason"] == "conditions unchanged"
    # On GPUs with more memory, a blamed condition changed.
    bigger = tmp / "retry-bigger"
    shutil.copytree(OOM_INCIDENT, bigger)
    for path in bigger.rglob("*"):
        if path.is_file():
            path.write_text(path.read_text().replace("79.10 GiB", "139.80 GiB"))
    status = wbj(url, "action", "verify", str(retry["id"]), "--job", str(bigger))["status"]
    assert status["status"] == "verified" and "memory_limit 79.10 GiB -> 139.80 GiB" in status["why"]


def _later_runs(url, tmp, name, queue_ms, n=4, **dims):
    import os
    import subprocess
    import sys

    folder = tmp / name
    folder.mkdir()
    for i in range(n):
        out = folder / f"{name}-{i}.json"
        subprocess.run(
            [sys.executable, str(STAND_IN), "--max-num-seqs", "256", "--queue-ms", str(queue_ms)],
            check=True,
            env={**os.environ, "WB_CAPTURE_OUT": str(out), "WB_RERUN_SLOT": str(i + 3)},
        )
        doc = json.loads(out.read_text())
        doc["label"] = f"{name} {i}"
        doc["dimensions"].update(dims)
        out.write_text(json.dumps(doc))
    imported = wbj(url, "import", str(folder))
    return [str(r) for r in imported["runs"]]


def test_watch_reports_drift_against_the_verified_candidate(demo, loop):
    url, tmp = demo
    # The loop's own action: another test of this process may have verified one of its own (the
    # OOM retry, a training action), and "the first verified action" was then that one.
    verified = loop["verified"]
    assert verified["status"]["status"] == "verified"
    steady = _later_runs(url, tmp, "week-1", 15.0)
    ok = wbj(url, "action", "watch", str(verified["id"]), *[x for r in steady for x in ("--against", r)])
    assert ok["comparable"] and not ok["drift"], ok
    drifted = _later_runs(url, tmp, "week-2", 40.0)
    code, out, err = wb(
        "action",
        "watch",
        str(verified["id"]),
        *[x for r in drifted for x in ("--against", r)],
        "--fail-on",
        "drift",
        "--json",
        store=url,
    )
    doc = json.loads(out)
    assert code == 4 and doc["drift"] and doc["verdict"] == "REGRESSION", (doc, err)
    other = _later_runs(url, tmp, "a100", 15.0, hardware="1x A100 SXM4 80GB")
    code, out, _ = wb(
        "action",
        "watch",
        str(verified["id"]),
        *[x for r in other for x in ("--against", r)],
        "--fail-on",
        "any",
        "--json",
        store=url,
    )
    doc = json.loads(out)
    assert code == 3 and not doc["comparable"] and not doc["drift"] and "hardware" in doc["why"]


def test_watch_needs_a_verified_action(demo, loop):
    url, _ = demo
    pending = next(a for a in wbj(url, "action", "list") if a["status"]["status"] != "verified")
    code, _, err = wb("action", "watch", str(pending["id"]), "--against", "1", store=url)
    assert code == 2 and "only a verified change has a candidate to watch" in err


def test_the_bundle_carries_actions_and_recompute_derives_their_status_again(demo, loop):
    from workbench.bundle.export import reseal_digests

    url, tmp = demo
    inv = _investigation(url, "inference")
    path = tmp / "inference.bundle.json"
    code, _, err = wb("bundle", "export", str(inv["id"]), "-o", str(path), "--embed-samples", store=url)
    assert code == 0, err
    bundle = json.loads(path.read_text())
    mine = [a for a in wbj(url, "action", "list") if a["investigation_id"] == inv["id"]]
    carried = bundle["recipe"]["content"]["actions"]
    assert [a["ref"] for a in carried] == [a["ref"] for a in mine]
    assert carried[0]["decisions"][0]["by"] == "dana" and carried[0]["verifications"][0]["plan"].startswith(
        "rerun-plan/"
    )
    assert carried[0]["because"] == [next(h["ref"] for h in inv["hypotheses"] if "queued" in h["statement"])]
    stated = {s["action"]: s for s in bundle["results"]["content"]["actions"]}
    assert {ref: s["status"] for ref, s in stated.items()} == {a["ref"]: a["status"]["status"] for a in mine}
    code, out, err = wb("evidence", "verify", str(path), "--recompute", "--json", store=url)
    report = json.loads(out)
    checks = [c for c in report["recompute"] if c["part"].startswith("results.actions[")]
    assert code == 0 and len(checks) == len(mine) and all(c["ok"] for c in checks), (checks, err)

    # A forger who marks the flat candidate verified and reseals every digest is caught.
    flat = next(ref for ref, s in stated.items() if s["status"] == "not verified")
    at = next(i for i, s in enumerate(bundle["results"]["content"]["actions"]) if s["action"] == flat)
    bundle["results"]["content"]["actions"][at].update(status="verified", reason=None)
    forged = tmp / "forged.bundle.json"
    forged.write_text(json.dumps(reseal_digests(bundle)))
    code, out, _ = wb("evidence", "verify", str(forged), "--json", store=url)
    assert code == 0  # the digests match: integrity is not correctness
    code, out, _ = wb("evidence", "verify", str(forged), "--recompute", "--json", store=url)
    failed = [c for c in json.loads(out)["recompute"] if not c["ok"]]
    assert code == 3 and any(flat in c["part"] for c in failed), failed
    said = {c["part"]: c["detail"] for c in failed}
    assert said[f"results.actions[{at}].status"] == "stated 'verified', rebuilt 'not verified'", said


def test_a_retry_judged_by_a_plans_preflight_and_hostile_text_shown_clean(demo, loop):
    url, _ = demo
    inv = _investigation(url, "inference")
    retry = wbj(
        url,
        "action",
        "propose",
        str(inv["id"]),
        "--retry",
        str(OOM_INCIDENT),
        "--scope",
        "pool-a\x1b[31m red [bold]x[/bold]",
    )
    wbj(url, "action", "approve", str(retry["id"]), "--by", "sam", "--why", "rerun on the bench host")
    status = wbj(url, "action", "verify", str(retry["id"]), "--plan", "seqs-256")["status"]
    # The plan ran on another host, but the node is not a condition of an OOM, and the
    # preflight does not state the memory limit the OOM hit: unknown, never "changed".
    assert status["status"] == "not verified" and "not known for the retry: memory_limit" in status["why"], status
    code, out, err = wb("action", "show", str(retry["id"]), store=url)
    assert code == 0 and "\x1b" not in out and "scope: pool-a" in out, out
