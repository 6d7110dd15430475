"""Failure signatures in logs: real kernel-log samples and one line per known variant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.diagnostics import logs, xid_catalog

DATA = Path(__file__).parent.parent / "data" / "failures"


def _events(tmp_path: Path, text: str, name: str = "x.log", **kw):
    path = tmp_path / name
    path.write_text(text)
    return logs.parse_file(path, **kw)


def _one(tmp_path: Path, line: str):
    events = _events(tmp_path, line + "\n")
    assert len(events) == 1, [e.kind for e in events]
    return events[0]


# ---------------------------------------------------------------- real samples


def test_real_xid_119_dmesg_T():
    events = logs.parse_file(DATA / "gpud" / "dmesg-with-xid-119.log")
    xids = [e for e in events if e.kind == "xid"]
    assert [e.values["code"] for e in xids] == [119] * 5
    assert [e.line for e in xids] == [3, 38, 40, 42, 43]
    assert {e.values["pci"] for e in xids} == {"0000:9b:00"}
    assert [e.values["process"] for e in xids] == ["nvidia-smi"] * 3 + ["cache_mgr_main", "gpud"]
    assert xids[0].values["catalog"]["class"] == "driver-firmware"
    assert xids[0].resolution == 1.0 and xids[0].naive
    # [Sun Feb 23 16:24:18 2025] read as UTC (no zone in dmesg -T)
    assert xids[0].time == pytest.approx(1740327858.0)
    assert all(e.kind == "xid" for e in events)  # RPC tables and call traces are not events


def test_real_xid_13_burst_then_43_and_oom_kills():
    events = logs.parse_file(DATA / "gpud" / "memory-dmesg.decode.iso.log")
    xids = [e for e in events if e.kind == "xid"]
    assert [e.values["code"] for e in xids] == [13] * 16 + [43]
    assert xids[0].values["pid"] is None and xids[0].values["process"] == "<unknown>"
    assert xids[-1].values["pid"] == 2924364 and xids[-1].values["process"] == "pt_main_thread"
    assert xids[0].values["catalog"]["class"] == "application"
    assert xids[-1].role == "follower"  # sympathetic Xid 43
    assert xids[0].time == pytest.approx(1737434504.283302)
    assert not xids[0].naive
    kills = [e for e in events if e.kind == "host_oom_kill"]
    assert len(kills) == 6
    assert {e.values.get("pid") for e in kills} == {123, 456, 863987, None}
    assert {e.values.get("constraint") for e in kills} >= {"CONSTRAINT_MEMCG", "OTHER_CONSTRAINT"}
    memcg = next(e for e in kills if e.values.get("pid") == 863987)
    assert memcg.values["process"] == "node"
    reaped = [e for e in events if e.kind == "oom_reaper"]
    assert [e.values["pid"] for e in reaped] == [345646] and reaped[0].role == "info"


def test_real_nccl_segfault_lines():
    events = logs.parse_file(DATA / "gpud" / "nccl-dmesg.decode.iso.log")
    assert [e.kind for e in events] == ["segfault", "segfault"]
    assert events[0].values == {"process": "pt_main_thread", "pid": 2536443, "library": "libnccl.so.2"}


def test_real_kmsg_files_have_no_failures_and_boot_relative_stamps(tmp_path):
    assert logs.parse_file(DATA / "gpud" / "kmsg.1.log") == []
    assert logs.parse_file(DATA / "gpud" / "kmsg.2.peermem.log") == []
    e = _one(
        tmp_path,
        "3,3974,227996639,-;NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
        "bus.",
    )
    assert e.since_boot == pytest.approx(227.996639) and e.time is None


# ---------------------------------------------------------------- Xid variants


@pytest.mark.parametrize(
    "line, code, pci, extra",
    [
        (
            "[171167.620236] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
            79,
            "0000:3b:00",
            {"pid": 1234, "process": "python"},
        ),
        (
            "NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
            79,
            "0000:05:00",
            {"pid": None},
        ),
        ("NVRM: Xid (0000:03:00): 14, Channel 00000001", 14, "0000:03:00", {}),
        (
            "NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No",
            94,
            "0000:01:00",
            {"mig_gpu_instance": 5, "pid": 7194},
        ),
        (
            "NVRM: Xid (PCI:0009:01:00): 149, NETIR_LINK_EVT  Fatal   XC0 i0 Link 01 (0x021425c6 0x00000000)",
            149,
            "0009:01:00",
            {},
        ),
        (
            "NVRM: Xid (PCI:0009:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)",
            154,
            "0009:01:00",
            {},
        ),
        (
            "May 18 19:02:39 gpu-17 kernel: NVRM: Xid (PCI:0000:B1:00): 48, pid=881, name=python3, An uncorrectable "
            "double bit error",
            48,
            "0000:b1:00",
            {"process": "python3"},
        ),
    ],
)
def test_xid_line_variants(tmp_path, line, code, pci, extra):
    e = _one(tmp_path, line)
    assert e.kind == "xid"
    assert e.values["code"] == code and e.values["pci"] == pci
    for k, v in extra.items():
        assert e.values[k] == v


def test_xid_classes_from_the_catalog(tmp_path):
    roles = {}
    for code in (13, 43, 45, 48, 63, 79, 119, 149, 999):
        e = _one(tmp_path, f"NVRM: Xid (PCI:0000:3b:00): {code}, pid=1, name=x, detail")
        roles[code] = (e.role, (e.values["catalog"] or {}).get("class"))
    assert roles[13] == ("failure", "application")
    assert roles[43] == ("follower", "sympathetic")
    assert roles[45] == ("follower", "sympathetic")
    assert roles[48] == ("failure", "gpu-memory-hardware")
    assert roles[63] == ("info", "informational")
    assert roles[79] == ("failure", "gpu-hardware")
    assert roles[119] == ("failure", "driver-firmware")
    assert roles[149] == ("failure", "interconnect")
    assert roles[999] == ("failure", None)  # unknown codes are not waved through


def test_fallen_off_the_bus_without_an_xid_line(tmp_path):
    for line in (
        "NVRM: GPU 0000:29:00.0: GPU has fallen off the bus.",
        "NVRM: The NVIDIA GPU 0000:18:00.0 (PCI ID: 10de:2330) installed in this system has fallen off the bus and is "
        "not responding to commands.",
    ):
        e = _one(tmp_path, line)
        assert e.kind == "xid" and e.values["code"] == 79 and e.values["inferred"]
        assert e.values["pci"] in ("0000:29:00", "0000:18:00")


def test_sxid(tmp_path):
    fatal = _one(tmp_path, "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30 LTSSM Fault Up")
    assert fatal.kind == "sxid" and fatal.role == "failure" and fatal.values["fatal"]
    nonfatal = _one(
        tmp_path,
        "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error (First)",
    )
    assert nonfatal.role == "info"


def test_catalog_is_dated_and_complete_for_the_codes_we_triage():
    assert xid_catalog.catalog_date()
    for code in (13, 31, 43, 45, 48, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140, 149, 154):
        info = xid_catalog.lookup(code)
        assert info is not None and info.action and info.name
    assert xid_catalog.lookup(79).is_hardware and not xid_catalog.lookup(13).is_hardware


# ---------------------------------------------------------------- memory


@pytest.mark.parametrize(
    "line, requested, gpu",
    [
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 2.26 GiB (GPU 0; 6.00 GiB total capacity; 781.59 MiB "
            "already allocated; 3.03 GiB free; 1.24 GiB reserved in total by PyTorch)",
            "2.26 GiB",
            0,
        ),
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 1; 11.17 GiB total capacity; 10.50 GiB "
            "already allocated; 1.81 MiB free; 10.55 GiB cached)",
            "20.00 MiB",
            1,
        ),
        (
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacty "
            "of 4.00 GiB of which 41.56 MiB is free.",
            "32.00 MiB",
            0,
        ),
        (
            "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 3 has a total "
            "capacity of 23.65 GiB of which 11.06 MiB is free.",
            "22.00 MiB",
            3,
        ),
    ],
)
def test_cuda_oom_generations(tmp_path, line, requested, gpu):
    e = _one(tmp_path, line)
    assert e.kind == "cuda_oom" and e.role == "failure"
    assert e.values["requested"] == requested and e.values["gpu"] == gpu


def test_cuda_oom_rank_prefix(tmp_path):
    e = _one(
        tmp_path,
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 3 has a total capacity "
        "of 23.65 GiB",
    )
    assert e.rank == 3


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        "misc/utils.cc:42 NCCL WARN Cuda failure 'out of memory'",
    ],
)
def test_gpu_allocation_failures(tmp_path, line):
    assert _one(tmp_path, line).kind == "gpu_alloc_failure"


@pytest.mark.parametrize(
    "line, kind",
    [
        (
            "Memory cgroup out of memory: Killed process 4242 (python) total-vm:1234kB, anon-rss:99kB, file-rss:0kB, "
            "shmem-rss:0kB, UID:0 pgtables:1kB oom_score_adj:0",
            "host_oom_kill",
        ),
        ("Out of memory: Killed process 1234 (python) total-vm:1kB, anon-rss:1kB", "host_oom_kill"),
        (
            "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1042215.batch cgroup. Some of your processes "
            "may have been killed by the cgroup out-of-memory handler.",
            "slurm_oom",
        ),
        (
            "slurmstepd: error: Detected 1 oom_kill event in StepId=1042215.0. Some of the step tasks have been OOM "
            "Killed.",
            "slurm_oom",
        ),
        ("srun: error: nic5-w052: task 13: Out Of Memory", "slurm_oom"),
        ("      Reason:       OOMKilled", "k8s_oomkilled"),
        ('{"lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}', "k8s_oomkilled"),
    ],
)
def test_host_memory_kills(tmp_path, line, kind):
    e = _one(tmp_path, line)
    assert (e.kind, e.role) == (kind, "failure")


def test_exit_137_alone_is_only_a_signal(tmp_path):
    e = _one(tmp_path, "      Exit Code:    137")
    assert e.kind == "exit" and e.role == "outcome" and e.values["signal_name"] == "SIGKILL"


# ---------------------------------------------------------------- NCCL, watchdog, torchrun


def test_nccl_warn_line_gives_host(tmp_path):
    e = _one(
        tmp_path,
        "a100-st-p4d24xlarge-22:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv from "
        "10.200.84.247<58355> failed : Broken pipe",
    )
    assert e.kind == "nccl_warn" and e.host == "a100-st-p4d24xlarge-22" and e.values["cuda_dev"] == 1


@pytest.mark.parametrize(
    "line, values",
    [
        (
            "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, "
            "Timeout(ms)=600000) ran for 600060 milliseconds before timing out.",
            {"seq": 1580, "op": "ALLREDUCE", "timeout_ms": 600000, "ran_ms": 600060, "numel_in": 466119168},
        ),
        (
            "[E ProcessGroupNCCL.cpp:475] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, "
            "OpType=BROADCAST, Timeout(ms)=1800000) ran for 1800843 milliseconds before timing out.",
            {"seq": 12, "op": "BROADCAST", "timeout_ms": 1800000},
        ),
    ],
)
def test_watchdog_timeouts(tmp_path, line, values):
    e = _one(tmp_path, line)
    assert e.kind == "watchdog_timeout" and e.role == "follower"
    for k, v in values.items():
        assert e.values[k] == v
    assert e.rank is not None


def test_glog_stamps_without_year_stay_partial(tmp_path):
    e = _one(
        tmp_path,
        "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=1) ran for 2 milliseconds before timing out.",
    )
    assert e.time is None and (e.partial.month, e.partial.day, e.partial.hour) == (3, 21, 2)
    e = _one(
        tmp_path,
        "E1121 02:07:08.408271 1234 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=1) ran for 2 milliseconds before timing out.",
    )
    assert (e.partial.month, e.partial.day) == (11, 21)


def test_watchdog_counters_and_dump_signal(tmp_path):
    events = _events(
        tmp_path,
        "[PG ID 0 PG GUID 0(default_pg) Rank 5] Exception (either an error or timeout) detected by watchdog at work: "
        "1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.\n"
        "[PG ID 0 PG GUID 0(default_pg) Rank 3] Received a dump signal due to a collective timeout from rank 7 and we "
        "will try our best to dump the debug info.\n",
    )
    assert events[0].kind == "watchdog_counters" and events[0].rank == 5
    assert events[0].values == {
        "pg_id": "0",
        "pg_desc": "default_pg",
        "rank": 5,
        "work": 1580,
        "last_enqueued": 1582,
        "last_completed": 1579,
    }
    assert events[1].kind == "dump_signal" and events[1].values["from_rank"] == 7


def test_nccl_errors_are_followers(tmp_path):
    events = _events(
        tmp_path,
        'Traceback (most recent call last):\n  File "t.py", line 1, in <module>\n'
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
        "remote process exited or there was a network error, NCCL version 2.19.3\n",
    )
    assert [(e.kind, e.role) for e in events] == [("nccl_error", "follower")]
    assert events[0].values["remote"] is True


def test_application_exception_after_traceback(tmp_path):
    events = _events(
        tmp_path,
        'Traceback (most recent call last):\n  File "t.py", line 3, in <module>\n    f()\nValueError: bad shape [3, '
        "4]\n",
        name="rank2.log",
        rank=2,
    )
    assert [(e.kind, e.role, e.rank) for e in events] == [("exception", "failure", 2)]
    assert events[0].values == {"exception": "ValueError", "message": "bad shape [3, 4]"}


def test_child_failed_error_block(tmp_path):
    text = (DATA / "incident-cuda-oom" / "node-0" / "torchrun.out").read_text()
    events = _events(tmp_path, text)
    reports = [e for e in events if e.kind == "child_failed"]
    assert len(reports) == 1
    r = reports[0]
    assert r.rank == 3 and r.host == "node-0" and r.values["root_cause"] is True
    assert r.values["exitcode"] == 1 and r.values["pid"] == 4104 and r.values["local_rank"] == 3
    assert r.values["error_file"].endswith("attempt_0/3/error.json")
    assert r.time is not None and r.resolution == 1.0
    kinds = [e.kind for e in events]
    assert kinds.count("teardown_signal") == 2 and "exit" in kinds


def test_child_failed_with_signal_and_other_failures(tmp_path):
    text = """torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
========================================================
train.py FAILED
--------------------------------------------------------
Failures:
[1]:
  time      : 2024-06-01_10:00:05
  host      : node-b
  rank      : 9 (local_rank: 1)
  exitcode  : -6 (pid: 222)
  error_file: <N/A>
  traceback : Signal 6 (SIGABRT) received by PID 222
--------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-06-01_10:00:04
  host      : node-b
  rank      : 8 (local_rank: 0)
  exitcode  : -9 (pid: 221)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 221
========================================================
"""
    reports = [e for e in _events(tmp_path, text) if e.kind == "child_failed"]
    assert [(r.rank, r.values["root_cause"], r.values.get("signal_name")) for r in reports] == [
        (9, False, "SIGABRT"),
        (8, True, "SIGKILL"),
    ]


def test_error_file(tmp_path):
    doc = {
        "message": {
            "message": "ValueError: boom",
            "extraInfo": {"py_callstack": "Traceback ...", "timestamp": "1700000000"},
        },
        "errorCode": 1,
    }
    [e] = _events(tmp_path, json.dumps(doc), name="error.json")
    assert e.kind == "exception" and e.time == 1700000000.0 and e.values["error_file"] is True
    doc["message"]["message"] = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB."
    [e] = _events(tmp_path, json.dumps(doc), name="error.json")
    assert e.kind == "cuda_oom"


def test_slurm_cancel_due_to_node_failure(tmp_path):
    e = _one(
        tmp_path, "slurmstepd: error: *** JOB 1234 ON gpu-7 CANCELLED AT 2025-01-02T03:04:05 DUE TO NODE FAILURE ***"
    )
    assert e.kind == "slurm_cancel" and e.role == "failure" and e.values["node"] == "gpu-7"


@pytest.mark.parametrize(
    "line, expected",
    [
        ("2025-01-21T04:41:44.5Z something NVRM: Xid (PCI:0000:3b:00): 79, x", 1737434504.5),
        ("2025-01-21 04:41:44,250 - ERROR - NVRM: Xid (PCI:0000:3b:00): 79, x", 1737434504.25),
        ("2025-01-21T06:41:44+0200 host kernel: NVRM: Xid (PCI:0000:3b:00): 79, x", 1737434504.0),
    ],
)
def test_iso_stamps(tmp_path, line, expected):
    assert _one(tmp_path, line).time == pytest.approx(expected)


def test_gzip_and_binary_safety(tmp_path):
    import gzip

    path = tmp_path / "kern.log.gz"
    path.write_bytes(gzip.compress(b"NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, y\n\xff\xfe garbage\n"))
    [e] = logs.parse_file(path)
    assert e.values["code"] == 79


def test_rank_from_path():
    assert logs.rank_from_path(Path("logs/rank3.log")) == 3
    assert logs.rank_from_path(Path("logs/rank_12/stdout.txt")) == 12
    assert logs.rank_from_path(Path("logs/dmesg.log")) is None


def test_event_count_per_file_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(logs, "MAX_EVENTS_PER_FILE", 5)
    events = _events(tmp_path, "NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=x, y\n" * 12)
    assert [e.kind for e in events] == ["xid"] * 5 + ["truncated"]
    assert events[-1].values["dropped"] == 7


@pytest.mark.parametrize(
    "line, sig",
    [
        ("Aborted (core dumped)", 6),
        ("/var/spool/slurmd/job1/slurm_script: line 12:  4242 Killed                  python train.py", 9),
        ("Segmentation fault (core dumped)", 11),
    ],
)
def test_shell_reported_deaths(tmp_path, line, sig):
    e = _one(tmp_path, line)
    assert e.kind == "exit" and e.values["signal"] == sig


def test_block_boundaries_keep_line_numbers_and_reports(tmp_path, monkeypatch):
    """Small blocks: a torchrun report split across blocks is still read whole."""
    monkeypatch.setattr(logs, "CHUNK_BYTES", 64)
    text = "noise line\n" * 7 + (DATA / "incident-cuda-oom" / "node-0" / "torchrun.out").read_text()
    events = _events(tmp_path, text)
    report = next(e for e in events if e.kind == "child_failed")
    assert report.rank == 3 and report.values["exitcode"] == 1 and report.host == "node-0"
    exits = [e for e in events if e.kind == "exit"]
    assert exits[0].line == 7 + 3
    xid = _events(tmp_path, "a\n" * 100 + "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, y\n")
    assert xid[0].line == 101


def test_pathological_long_lines_are_parsed(tmp_path):
    """60 kB lines without spaces around the signature words (the leading-token regexes are
    bounded, so this stays linear; unbounded ones took minutes here)."""
    blob = "x" * 60000
    text = f"{blob} segfault {blob}\n{blob} invoked oom-killer {blob}\n{blob}:1:2 [0] {blob} NCCL WARN\n"
    text += "python[42]: segfault at 0 ip 0 sp 0 error 4 in libnccl.so.2[7f00+10]\n"
    events = _events(tmp_path, text)
    assert [e.kind for e in events][-1] == "segfault"
    assert events[-1].line == 4


def test_other_json_with_a_message_is_not_an_error_file(tmp_path):
    assert _events(tmp_path, json.dumps({"message": "all good", "level": "info"}), name="status.json") == []
    pod = {
        "status": {"containerStatuses": [{"lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]},
        "message": "x",
    }
    events = _events(tmp_path, json.dumps(pod, indent=1), name="pod.json")
    assert [e.kind for e in events] == ["exit", "k8s_oomkilled"]
    assert events[0].values["signal_name"] == "SIGKILL"


def test_cuda_device_errors_are_not_application_errors(tmp_path):
    from workbench.diagnostics import classify

    e = _one(tmp_path, "RuntimeError: CUDA error: uncorrectable ECC error encountered")
    assert e.kind == "cuda_device_error" and classify.event_class(e) == classify.HARDWARE
    e = _one(tmp_path, "RuntimeError: CUDA error: an illegal memory access was encountered")
    assert e.kind == "exception" and classify.event_class(e) == classify.APPLICATION
