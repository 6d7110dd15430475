"""Retry conditions that fit the failure: each class blames only the conditions whose change
makes a retry worthwhile, and "the conditions have not changed" is judged on those."""

from __future__ import annotations

import json
from pathlib import Path

from tests.diagnostics.snapshot_docs import four_ranks, write_docs
from workbench.actions.conditions import (
    RETRY_CONDITIONS,
    blamed_conditions,
    observed_conditions,
    retry_conditions,
    stated_settings,
)
from workbench.bundle.action_status import derive_status
from workbench.diagnostics import diagnose

FAILURES = Path(__file__).resolve().parents[1] / "data" / "failures"
APPROVED = [{"decision": "approved", "by": "sam", "why": "retry"}]


def _judge(blamed: dict, retry_job: Path) -> dict:
    action = {"kind": "retry", "changes": {}, "expect": {}, "retry": {"conditions": blamed}}
    observed = observed_conditions(diagnose([retry_job]).to_json())
    return derive_status(action, APPROVED, {"observed": {"conditions": observed}})


def _copy(src: Path, dst: Path, *replacements: tuple[str, str]) -> Path:
    """A copy of a job's files with words replaced in their text and in their folder names
    (a node folder names the node its files came from)."""
    for path in src.rglob("*"):
        if path.is_file():
            relative = str(path.relative_to(src))
            text = path.read_text()
            for old, new in replacements:
                relative, text = relative.replace(old, new), text.replace(old, new)
            (dst / relative).parent.mkdir(parents=True, exist_ok=True)
            (dst / relative).write_text(text)
    return dst


def test_each_class_names_its_conditions():
    assert RETRY_CONDITIONS["gpu-memory-exhaustion"] == (
        "memory_limit",
        "batch_size",
        "max_num_seqs",
        "gpu_memory_utilization",
    )
    assert RETRY_CONDITIONS["cpu-memory-limit"] == RETRY_CONDITIONS["gpu-memory-exhaustion"]
    assert "node" not in RETRY_CONDITIONS["gpu-memory-exhaustion"]
    assert RETRY_CONDITIONS["node-or-gpu-hardware"] == ("node", "gpu", "gpu_serial")
    assert RETRY_CONDITIONS["communication-timeout"] == ("rank_set", "network")
    assert RETRY_CONDITIONS["application-error"] == ()
    undecided = {"class": "undecided", "candidate_classes": ["cpu-memory-limit", "node-or-gpu-hardware"]}
    assert retry_conditions(undecided) == (*RETRY_CONDITIONS["cpu-memory-limit"], "node", "gpu", "gpu_serial")
    assert retry_conditions({"class": "none"}) == ()


def test_a_cuda_oom_blames_the_memory_settings_not_the_node(tmp_path):
    job = _copy(FAILURES / "incident-cuda-oom", tmp_path / "job")
    (job / "node-0" / "engine.log").write_text(
        "INFO Initializing an LLM engine with config: max_num_seqs=256, gpu_memory_utilization=0.9, seed=0\n"
    )
    blamed = blamed_conditions(diagnose([job]).to_json())
    assert blamed == {"memory_limit": "79.10 GiB", "max_num_seqs": "256", "gpu_memory_utilization": "0.9"}
    moved = _copy(job, tmp_path / "moved", ("node-0", "node-7"))  # another node, the same settings
    status = _judge(blamed, moved)
    assert status["status"] == "not verified" and "have not changed" in status["why"]
    smaller = _copy(job, tmp_path / "smaller", ("max_num_seqs=256", "max_num_seqs=128"))
    status = _judge(blamed, smaller)
    assert status["status"] == "verified" and status["why"] == "conditions changed: max_num_seqs 256 -> 128"


def test_a_cgroup_oom_blames_the_memory_limit_and_the_batch(tmp_path):
    job = tmp_path / "job" / "node-b"
    job.mkdir(parents=True)
    (job / "kern.log").write_text(
        "2026-03-02T11:00:00.300000+00:00 node-b kernel: Memory cgroup out of memory: Killed process 77 (python) "
        "total-vm:1234kB, anon-rss:99kB, file-rss:0kB\n"
    )
    (job / "launch.log").write_text("torchrun train.py --batch-size 64 --epochs 3\n")
    doc = diagnose([tmp_path / "job"]).to_json()
    assert doc["failure_class"]["class"] == "cpu-memory-limit"
    blamed = blamed_conditions(doc)
    assert blamed == {"batch_size": "64"} and "node" not in blamed
    same = _copy(tmp_path / "job", tmp_path / "elsewhere", ("node-b", "node-c"))
    assert _judge(blamed, same)["status"] == "not verified"
    halved = _copy(tmp_path / "job", tmp_path / "halved", ("--batch-size 64", "--batch-size 32"))
    assert _judge(blamed, halved)["why"] == "conditions changed: batch_size 64 -> 32"


def test_an_xid_blames_the_node_and_gpu_not_the_batch(tmp_path):
    job = _copy(FAILURES / "incident-xid79", tmp_path / "job")
    (job / "node-a" / "launch.log").write_text("python train.py --batch-size 64\n")
    blamed = blamed_conditions(diagnose([job]).to_json())
    assert blamed == {"node": ["node-a"], "gpu": "0000:3b:00"}
    smaller = _copy(job, tmp_path / "smaller", ("--batch-size 64", "--batch-size 8"))  # same node and GPU
    assert _judge(blamed, smaller)["status"] == "not verified"
    drained = _copy(job, tmp_path / "drained", ("node-a", "node-c"))
    status = _judge(blamed, drained)
    assert status["status"] == "verified" and "node node-a -> node-b,node-c" in status["why"]


def test_a_collective_hang_blames_the_rank_set_and_the_network(tmp_path):
    docs = four_ranks(stuck=2)
    for doc in docs:
        doc["at_snapshot"]["host"] = f"node-{doc['at_snapshot']['rank'] // 2}"
    job = write_docs(tmp_path / "job", docs)
    (job / "nccl.log").write_text("NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n")
    doc = diagnose([job]).to_json()
    assert doc["failure_class"]["class"] == "communication-timeout"
    blamed = blamed_conditions(doc)
    assert blamed == {"rank_set": ["node-0", "node-1"], "network": ["NET/IB: [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>"]}
    again = write_docs(tmp_path / "again", docs)  # the same nodes; its files state no network: unknown, not changed
    status = _judge(blamed, again)
    assert status["status"] == "not verified" and "not known for the retry: network" in status["why"]
    for doc in docs:
        doc["at_snapshot"]["host"] = "node-9" if doc["at_snapshot"]["rank"] == 2 else doc["at_snapshot"]["host"]
    other = write_docs(tmp_path / "other", docs)
    status = _judge(blamed, other)
    assert status["status"] == "verified" and "rank_set node-0,node-1 -> node-0,node-1,node-9" in status["why"]


def test_an_application_error_blames_nothing_a_retry_changes(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    (job / "rank0.log").write_text(
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/workspace/train.py", line 3, in <module>\n'
        "[rank0]: KeyError: 'labels'\n"
    )
    doc = diagnose([job]).to_json()
    assert doc["failure_class"]["class"] == "application-error"
    assert blamed_conditions(doc) == {}


def test_settings_are_read_from_logs_json_and_launch_lines(tmp_path):
    (tmp_path / "a.log").write_text(
        'engine args: {"max_num_seqs": 512, "gpu_memory_utilization": 0.85}\n'
        "NCCL_SOCKET_IFNAME=ens5 NCCL_IB_HCA=mlx5_0 python train.py --micro-batch-size=4\n"
    )
    (tmp_path / "b.log").write_text("max_num_seqs=256\n")
    got = stated_settings([tmp_path / "a.log", tmp_path / "b.log", tmp_path / "gone.log"])
    assert got == {
        "batch_size": "4",
        "gpu_memory_utilization": "0.85",
        "max_num_seqs": ["256", "512"],
        "network": ["NCCL_IB_HCA=mlx5_0", "NCCL_SOCKET_IFNAME=ens5"],
    }
    assert json.dumps(got)
