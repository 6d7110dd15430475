"""End to end: synthetic multi-node incidents, real scenarios, the CLI and its output."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from workbench.cli import cli
from workbench.diagnostics import diagnose
from workbench.diagnostics.result import DiagnosisReport
from workbench.errors import BadInput

DATA = Path(__file__).parent.parent / "data" / "failures"


def _labels(d) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for row in d.to_json()["timeline"]:
        out.setdefault(row["kind"], []).append(row["label"])
    return out


def test_xid79_then_watchdog_timeouts_everywhere():
    d = diagnose([DATA / "incident-xid79"])
    ff = d.first
    assert ff.status == "named"
    assert ff.event.kind == "xid" and ff.event.values["code"] == 79 and ff.event.host == "node-a"
    fc = d.to_json()["failure_class"]
    assert fc["class"] == "node-or-gpu-hardware"
    assert "Xid 79" in fc["retry"]["xid_action"]
    assert fc["retry"]["rule"].startswith("A retry helps only if")
    labels = _labels(d)
    assert labels["watchdog_timeout"] == ["follows first failure"] * 8
    victims = [o for o in d.observations if "come after the first failure" in o.text]
    assert len(victims) == 1 and "ranks 0, 1, 2, 3, 4, 5, 6, 7" in victims[0].text
    # glog stamps have no year: it was taken from the dated kernel log
    assert all(e.time is not None for e in d.events)


def test_two_nodes_within_the_clock_uncertainty_are_undecided():
    d = diagnose([DATA / "incident-tie"])
    assert d.first.status == "undecided"
    assert {c.host for c in d.first.candidates} == {"node-a", "node-b"}
    assert "within the clock uncertainty" in d.first.reason
    # both candidates are hardware: the class is still established, the node is not
    assert d.failure_class.klass == "node-or-gpu-hardware"
    assert any(o.text.startswith("First failure undecided") for o in d.observations)


def test_tighter_clocks_decide_the_tie():
    d = diagnose([DATA / "incident-tie"], clock_uncertainty=0.05)
    assert d.first.status == "named" and d.first.event.host == "node-a"
    assert d.first.event.values["code"] == 48


def test_per_host_uncertainty_can_keep_it_undecided():
    d = diagnose([DATA / "incident-tie"], clock_uncertainty=0.05, host_uncertainty={"node-b": 0.5})
    assert d.first.status == "undecided"


def test_cuda_oom_on_rank_3():
    d = diagnose([DATA / "incident-cuda-oom"])
    assert d.first.status == "named"
    assert d.first.event.kind == "cuda_oom" and d.first.event.rank == 3
    fc = d.to_json()["failure_class"]
    assert fc["class"] == "gpu-memory-exhaustion"
    assert fc["where"]["ranks"] == [3]
    assert "2.00 GiB" in fc["detail"]
    labels = _labels(d)
    assert set(labels["nccl_error"]) == {"follows first failure"}
    assert set(labels["watchdog_timeout"]) == {"follows first failure"}
    # the unstamped traceback line restates the error file's stamped failure
    assert "restates a stamped line" in labels["cuda_oom"]


def test_different_classes_within_the_uncertainty_leave_the_class_undecided(tmp_path):
    (tmp_path / "node-a").mkdir()
    (tmp_path / "node-b").mkdir()
    (tmp_path / "node-a" / "kern.log").write_text(
        "2026-03-02T11:00:00.100000+00:00 node-a kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen "
        "off the bus.\n"
    )
    (tmp_path / "node-b" / "kern.log").write_text(
        "2026-03-02T11:00:00.300000+00:00 node-b kernel: Memory cgroup out of memory: Killed process 77 (python) "
        "total-vm:1kB\n"
    )
    d = diagnose([tmp_path])
    assert d.first.status == "undecided"
    assert d.failure_class.klass == "undecided"
    assert d.failure_class.candidates == ["cpu-memory-limit", "node-or-gpu-hardware"]


def test_only_watchdog_timeouts_give_communication_timeout_with_undetermined_origin(tmp_path):
    for r in range(2):
        (tmp_path / f"rank{r}.log").write_text(
            f"2026-03-02 10:10:00,{100 + r * 400:03d} [Rank {r}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600001 milliseconds before timing "
            f"out.\n"
        )
    d = diagnose([tmp_path])
    assert d.first.only_consequences
    fc = d.failure_class
    assert fc.klass == "communication-timeout" and fc.role == "origin-undetermined"


def test_watchdog_counters_single_out_the_rank_that_never_enqueued(tmp_path):
    lines = {
        0: "last enqueued NCCL work: 1580, last completed NCCL work: 1579",
        1: "last enqueued NCCL work: 1579, last completed NCCL work: 1579",
    }
    for r, tail in lines.items():
        (tmp_path / f"rank{r}.log").write_text(
            f"[PG ID 0 PG GUID 0(default_pg) Rank {r}] Exception (either an error or timeout) detected by watchdog at "
            f"work: {1580 if r == 0 else 1579}, {tail}.\n"
        )
    d = diagnose([tmp_path])
    assert d.watchdog[0].never_enqueued == (1,)
    assert d.failure_class.klass == "communication-timeout"
    assert any("rank 1 had not enqueued work 1580" in o.text for o in d.observations)


@pytest.mark.parametrize("scenario, missing", [("gpu_error_1st", [12]), ("lock_gil_1st", [9, 14])])
def test_real_flight_recorder_scenarios_end_to_end(scenario, missing):
    d = diagnose([DATA / "nvrx-fr_traces" / scenario])
    doc = d.to_json()
    assert doc["collectives"]["never_entered"] == missing
    assert doc["failure_class"]["class"] == "communication-timeout"
    assert doc["failure_class"]["role"] == "origin"
    assert doc["failure_class"]["where"]["ranks"] == missing
    assert doc["first_failure"]["status"] == "none"
    texts = [o.text for o in d.observations]
    assert any("never entered collective" in t for t in texts)


def test_real_kernel_logs_end_to_end():
    d = diagnose([DATA / "gpud" / "dmesg-with-xid-119.log"])
    assert d.failure_class.klass == "node-or-gpu-hardware"
    assert "Xid 119" in d.failure_class.xid_action
    d = diagnose([DATA / "gpud" / "memory-dmesg.decode.iso.log"])
    assert d.first.event.values["code"] == 13
    assert d.failure_class.klass == "application-error"


def test_observations_are_pinnable_items_with_evidence():
    for case in ("incident-xid79", "incident-cuda-oom", "incident-tie", "nvrx-fr_traces/lock_gil_1st"):
        d = diagnose([DATA / case])
        assert d.observations
        for o in d.observations:
            assert set(o.to_json()) == {"text", "evidence"}
            assert isinstance(o.text, str) and o.text
            assert o.evidence and all(isinstance(ev, dict) for ev in o.evidence)
            # worded as observations, not causes
            assert "caused" not in o.text and "because" not in o.text
            json.dumps(o.to_json())


def test_missing_value_stays_missing():
    """Rank 9 has no entries: its last-completed counter is unknown (null), not zero."""
    doc = diagnose([DATA / "nvrx-fr_traces" / "lock_gil_1st"]).to_json()
    g72 = next(g for g in doc["collectives"]["groups"] if g["group"] == "72")
    assert g72["last_completed_by_all"] is None
    assert g72["never_entered_inferred_from_absence"] == [9, 14]


def test_bad_paths():
    with pytest.raises(BadInput, match="no such file"):
        diagnose(["/no/such/dir"])


def test_empty_directory(tmp_path):
    with pytest.raises(BadInput, match="no files"):
        diagnose([tmp_path])


def test_truncated_dump_names_the_file(tmp_path):
    src = DATA / "nvrx-fr_traces" / "lock_gil_1st" / "_dump_0"
    (tmp_path / "_dump_0").write_bytes(src.read_bytes()[:1200])
    with pytest.raises(BadInput) as err:
        diagnose([tmp_path])
    assert "_dump_0" in str(err.value)


# ---------------------------------------------------------------- CLI


def _run(args):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_cli_json_is_one_document():
    result = _run(["diagnose", "--json", str(DATA / "incident-xid79")])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["format"] == "wb.diagnosis"
    assert doc["first_failure"]["status"] == "named"
    assert doc["failure_class"]["class"] == "node-or-gpu-hardware"


def test_cli_options():
    result = _run(["diagnose", "--json", "--clock-uncertainty", "0.05", str(DATA / "incident-tie")])
    assert json.loads(result.stdout)["first_failure"]["status"] == "named"
    result = _run(
        ["diagnose", "--json", "--clock-uncertainty", "0.05", "--host-clock", "node-b=0.5", str(DATA / "incident-tie")]
    )
    assert json.loads(result.stdout)["first_failure"]["status"] == "undecided"


@pytest.mark.parametrize(
    "args",
    [
        ["--clock-uncertainty", "nan"],
        ["--clock-uncertainty", "-1"],
        ["--host-clock", "node-b"],
        ["--boot-time", "h=yesterday"],
    ],
)
def test_cli_bad_options_are_usage_errors(args):
    from workbench.errors import UsageError

    with pytest.raises(UsageError):
        CliRunner().invoke(
            cli, ["diagnose", *args, str(DATA / "incident-tie")], catch_exceptions=False, standalone_mode=False
        )


def test_cli_boot_time_places_kmsg_stamps(tmp_path):
    (tmp_path / "gpu-1").mkdir()
    (tmp_path / "gpu-1" / "kmsg.log").write_text(
        "3,3974,227996639,-;NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
        "bus.\n"
    )
    doc = json.loads(
        _run(["diagnose", "--json", "--boot-time", "gpu-1=2026-03-02T10:00:00+00:00", str(tmp_path)]).stdout
    )
    ev = doc["first_failure"]["event"]
    assert ev["time"] == pytest.approx(1772445600 + 227.996639)


def test_human_output_fits_80_columns_and_escapes_hostile_text(tmp_path):
    shutil.copytree(DATA / "incident-cuda-oom", tmp_path / "inc")
    evil = tmp_path / "inc" / "node-0" / "rank5.log"
    evil.write_text(
        "2026-03-02 11:59:00,000 x\nTraceback (most recent call last):\nValueError: [bold red]pwned[/bold red] "
        "\x1b[31mred\x1b]8;;http://evil\x07\n"
    )
    from io import StringIO

    from rich.console import Console

    from workbench.diagnostics.render import render

    buf = StringIO()
    render(
        DiagnosisReport.from_json(diagnose([tmp_path / "inc"]).to_json()),
        console=Console(file=buf, width=80, highlight=False, color_system=None),
    )
    out = buf.getvalue()
    assert "\x1b" not in out
    assert "[bold red]pwned" in out  # printed literally, not interpreted
    assert "\\x1b" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "First failure" in out and "Observations" in out


def test_cli_human_output_on_real_dumps():
    result = _run(["diagnose", str(DATA / "nvrx-fr_traces" / "gpu_error_1st")])
    assert result.exit_code == 0
    assert "missing-ranks" in result.stdout
    assert "20537" in result.stdout


# ---------------------------------------------------------------- pinning into an investigation


@pytest.mark.store
def test_observations_pin_into_an_investigation(store_url):
    from store import open_store
    from workbench.diagnostics.diagnosis import evidence_items
    from workbench.investigations import workflow as wf

    st = open_store(store_url)
    inv = wf.new_investigation(st, lens="training", question="Why did job 1042 fail?").to_json()
    d = diagnose([DATA / "incident-xid79"])
    pinned = [
        wf.new_observation(st, inv["id"], o.text, evidence_items(o), source="diagnose", by="tester").to_json()
        for o in d.observations
    ]
    assert len(pinned) == len(d.observations)
    shown = wf.investigation_view(st, inv["id"]).to_json()["observations"]
    assert [o["text"] for o in shown] == [o.text for o in d.observations]
    assert all(o["source"] == "diagnose" and o["pinned_by"] == "tester" for o in shown)
    first = shown[0]["evidence"][0]
    assert first["kind"] == "log-line" and first["file"].endswith("kern.log") and first["line"] == 2


@pytest.mark.store
def test_cli_pin(store_url):
    from store import open_store
    from workbench.investigations import workflow as wf

    st = open_store(store_url)
    inv = wf.new_investigation(st, lens="training", question="Which rank hung?").to_json()
    result = CliRunner().invoke(
        cli,
        [
            "--store",
            store_url,
            "diagnose",
            "--json",
            "--pin",
            str(inv["id"]),
            str(DATA / "nvrx-fr_traces" / "lock_gil_1st"),
        ],
        catch_exceptions=False,
    )
    doc = json.loads(result.stdout)
    assert doc["pinned"] and all(ref.startswith("observation/") for ref in doc["pinned"])
    obs = wf.investigation_view(st, inv["id"]).to_json()["observations"]
    assert any(e["kind"] == "flight-recorder" for o in obs for e in o["evidence"])


def test_earlier_watchdog_timeout_elsewhere_leaves_it_undecided_but_init_warnings_do_not(tmp_path):
    (tmp_path / "node-a").mkdir()
    (tmp_path / "node-b").mkdir()
    (tmp_path / "node-a" / "kern.log").write_text(
        "2026-03-02T11:00:00.000000+00:00 node-a kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen "
        "off the bus.\n"
    )
    (tmp_path / "node-b" / "rank4.log").write_text(
        "2026-03-02 09:00:00,000 node-b:1:2 [0] init.cc:1 NCCL WARN NET/Plugin: Could not find: libnccl-net.so\n"
    )
    assert diagnose([tmp_path]).first.status == "named"
    with (tmp_path / "node-b" / "rank4.log").open("a") as fh:
        fh.write(
            "2026-03-02 10:59:00,000 [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, "
            "OpType=ALLREDUCE, Timeout(ms)=60000) ran for 60010 milliseconds before timing out.\n"
        )
    d = diagnose([tmp_path])
    assert d.first.status == "undecided" and "earlier error" in d.first.reason


def test_stuck_collectives_are_placed_on_the_timeline():
    doc = diagnose([DATA / "nvrx-fr_traces" / "lock_gil_1st"]).to_json()
    waits = {r["values"]["group"]: r for r in doc["timeline"] if r["kind"] == "collective_wait"}
    assert waits["72"]["values"]["seq"] == 45265 and waits["72"]["values"]["never_entered"] == [9, 14]
    # the earliest enqueue among the ranks that entered, read straight from the dumps
    from workbench.diagnostics import safe_pickle

    created = [
        e["time_created_ns"]
        for p in (DATA / "nvrx-fr_traces" / "lock_gil_1st").glob("_dump_*")
        for e in safe_pickle.load_path(p)["entries"]
        if e["process_group"][0] == "72" and e["collective_seq_id"] == 45265
    ]
    assert len(created) == 6
    assert waits["72"]["time"] == pytest.approx(min(created) / 1e9, abs=1e-6)
    g72 = next(g for g in doc["collectives"]["groups"] if g["group"] == "72")
    assert g72["waiting_since"] == waits["72"]["time"]


def test_dumps_and_watchdog_logs_together_name_the_ranks_that_never_entered(tmp_path):
    shutil.copytree(DATA / "nvrx-fr_traces" / "lock_gil_1st", tmp_path / "dumps")
    for r in (8, 10):
        (tmp_path / f"rank{r}.log").write_text(
            f"[rank{r}]:[E922 22:57:17.6{r}0000000 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective "
            f"operation timeout: "
            "WorkNCCL(SeqNum=45265, OpType=ALLTOALL_BASE, Timeout(ms)=600000) ran for 600050 milliseconds before "
            "timing out.\n"
        )
    d = diagnose([tmp_path])
    # glog stamps have no year: it comes from the dumps' own clocks
    assert all(e.time is not None for e in d.events)
    assert d.first.only_consequences
    fc = d.failure_class
    assert fc.klass == "communication-timeout" and fc.role == "origin"
    assert fc.where.ranks_never_entered == (9, 14)


def test_evidence_items_for_investigations():
    from workbench.diagnostics.diagnosis import evidence_items

    from workbench.diagnostics.result import Observation

    items = evidence_items(
        Observation(
            text="t",
            evidence=(
                {"file": "k.log", "line": 3, "text": "x"},
                {"kind": "size", "group": "74", "seq": 5, "ranks": [0, 3]},
                {"file": "e.json", "line": None, "values": {"error_file": True}},
                {"missing_dumps": [9]},
            ),
        )
    )
    assert [i["kind"] for i in items] == ["log-line", "flight-recorder", "error-file", "flight-recorder"]
    assert items[1]["mismatch"] == "size"


def test_the_renderer_draws_a_fresh_and_a_decoded_diagnosis_alike():
    import io

    from rich.console import Console

    from workbench.diagnostics.render import render

    d = diagnose([DATA / "nvrx-fr_traces" / "lock_gil_1st"])
    texts = []
    for report in (d.report(), DiagnosisReport.from_json(json.loads(json.dumps(d.to_json())))):
        buf = io.StringIO()
        render(report, console=Console(file=buf, width=80, highlight=False, color_system=None))
        texts.append(buf.getvalue())
    assert texts[0] == texts[1] and "Collectives" in texts[0] and "never entered" in texts[0].lower()
