"""Step-less traces, under-recorded kernels and old Nsight exports (issue 44).

The files are tests/data/training/{stepless,cuda-graph}/*.json.gz and nsys-schema2/schema2.sqlite,
written by tests/data/training/make_traces.py from PyTorch 2.5's profiler output format
(its docstring states the figures checked here by hand)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from workbench.cli import cli
from workbench.errors import BadInput
from workbench.importers.base import ImportOptions
from workbench.importers.kineto import IMPORTER, read_rank
from workbench.importers.nsys import IMPORTER as NSYS
from workbench.training import breakdown as bd
from workbench.training import iterations as it
from workbench.training import model as m
from workbench.training import pair_findings

DATA = Path(__file__).resolve().parent.parent / "data" / "training"
OPTIMIZER = DATA / "stepless" / "optimizer-steps.json.gz"
BARE = DATA / "stepless" / "no-annotations.json.gz"
GRAPHS = DATA / "cuda-graph" / "graph-replay.json.gz"


def record_of(path: Path):
    (record,) = IMPORTER.read([path], ImportOptions())
    return record


def findings(record) -> dict[str, dict]:
    return {f["check"]: f for f in record.meta["diagnostics"]}


def iteration_ms(k: int) -> float:  # make_traces.py: iteration k lasts 200 + 3 * (k % 4) ms
    return 200.0 + 3.0 * (k % 4)


def human(tmp_path: Path, path: Path) -> str:
    """What `wb import` and `wb show` print for the trace, together."""
    store = ["--store", f"sqlite:///{tmp_path / 's.sqlite'}"]
    runner = CliRunner()
    out = runner.invoke(cli, [*store, "import", str(path)], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    shown = runner.invoke(cli, [*store, "show", "1"], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    return out.output + shown.output


# ---------------------------------------------------------------- iterations from annotations


def test_optimizer_steps_give_thirty_iterations_with_the_right_mean():
    record = record_of(OPTIMIZER)
    w = record.window
    assert w["steps_total"] == 30
    assert w["steps_included"] == [float(k) for k in range(2, 31)]  # iteration 1 excluded as warm-up
    assert w["steps_from"].startswith("Optimizer.step# annotations")
    assert w["boundary"]["marker"] == w["steps_from"]
    assert w["boundary"]["optimizer_steps_per_step"] == 1.0
    s = record.tables["samples"]
    np.testing.assert_allclose(s["step_ms"], [iteration_ms(k) for k in range(2, 31)])
    # by hand: k % 4 over k = 2..30 is 2,3,0,1 seven times, then 2: 3 * (7 * 6 + 2) = 132 ms over 29 x 200 ms
    assert float(np.mean(s["step_ms"])) == pytest.approx((29 * 200 + 132) / 29)
    np.testing.assert_allclose(s["input_wait_ms"], 4.0)  # the loader's 4 ms __next__ in each iteration


def test_the_data_loader_marks_iterations_when_no_optimizer_step_is_recorded(tmp_path):
    with gzip.open(OPTIMIZER, "rt") as f:
        doc = json.load(f)
    doc["traceEvents"] = [e for e in doc["traceEvents"] if not e["name"].startswith("Optimizer.step#")]
    path = tmp_path / "loader-only.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    record = record_of(path)
    assert record.window["steps_from"].startswith("DataLoader __next__ annotations")
    assert record.window["steps_total"] == 30
    s = record.tables["samples"]
    # each iteration runs from one __next__ to the next; the last to the trace's last event
    # (the optimizer kernel ends 0.2 ms before the iteration would)
    np.testing.assert_allclose(s["step_ms"], [iteration_ms(k) for k in range(2, 30)] + [iteration_ms(30) - 0.2])


def test_no_annotations_say_no_steps_and_never_per_step(tmp_path):
    record = record_of(BARE)
    assert record.window["steps_from"].startswith("no steps")
    assert record.window["steps_total"] == 0 and "boundary" not in record.window
    f = findings(record)
    assert "over the whole trace (no steps)" in f["host_submission"]["summary"]
    assert "worst rank" not in json.dumps(record.meta["diagnostics"])
    text = human(tmp_path, BARE)
    assert "no steps" in text
    assert "per step" not in text


def test_worst_rank_is_named_only_where_ranks_differ():
    f = findings(record_of(OPTIMIZER))
    assert "per step" in f["input_stall"]["summary"] and "worst rank" not in f["input_stall"]["summary"]


def test_two_optimizers_stepped_back_to_back_end_one_iteration():
    names = ["Optimizer.step#Adam.step", "Optimizer.step#SGD.step", "aten::mm", "aten::add_"]
    ms = 1_000_000
    trace = m.RankTrace(source=Path("x"), rank=None, world_size=None, names=names)
    # per iteration: an mm, then the two optimizers one after the other (a nested add_ inside the first)
    rows = []
    for k in range(3):
        t = k * 100 * ms
        rows += [(t, t + 50 * ms, 2), (t + 90 * ms, t + 95 * ms, 0), (t + 91 * ms, t + 92 * ms, 3)]
        rows += [(t + 95 * ms, t + 100 * ms, 1)]
    start, end, name = (np.array(c, dtype=np.int64) for c in zip(*rows))
    trace.ops = {"start": start, "end": end, "name": name.astype(np.int32)}
    found = it.infer(trace)
    assert found is not None and found.boundary == it.OPTIMIZER
    assert found.ends.tolist() == [100 * ms, 200 * ms, 300 * ms]
    assert found.starts.tolist() == [0, 100 * ms, 200 * ms]


# ---------------------------------------------------------------- kernels the trace did not record


def test_graph_replays_without_kernels_make_the_breakdown_incomplete(tmp_path):
    record = record_of(GRAPHS)
    f = findings(record)
    cov = f["kernel_coverage"]
    assert cov["status"] == "found" and "incomplete" in cov["summary"]
    # 8 graph launches + 8 kernel launches against 8 recorded kernels; 7 kept steps have a graph launch each
    assert cov["evidence"] == {
        "launch_calls": 16,
        "graph_launches": 8,
        "kernels_recorded": 8,
        "launches_without_kernel": 7,
    }
    assert f["host_submission"]["status"] == "undecided" and "withheld" in f["host_submission"]["summary"]
    # the graph launches every step has are not a cut-off last step
    assert record.window["steps_included"] == [float(s) for s in range(2, 9)]
    text = human(tmp_path, GRAPHS)
    assert "host submission: FOUND" not in text
    assert "kernel coverage: FOUND: the breakdown is incomplete" in text


def test_a_complete_trace_passes_the_coverage_check():
    cov = findings(record_of(OPTIMIZER))["kernel_coverage"]
    assert cov["status"] == "not_found" and cov["evidence"]["launches_without_kernel"] == 0


def test_launch_coverage_counts_graph_launches():
    trace = read_rank(GRAPHS)
    assert bd.launch_coverage(trace) == {"launches": 16.0, "graph_launches": 8.0, "kernels": 8.0, "unmatched": 8.0}


# ---------------------------------------------------------------- Nsight Systems schema 2.x


def test_an_nsys_export_of_schema_2_is_refused_with_its_table_and_the_way_forward():
    path = DATA / "nsys-schema2" / "schema2.sqlite"
    with pytest.raises(BadInput) as err:
        list(NSYS.read([path], ImportOptions()))
    text = str(err.value)
    assert "EXPORT_META_DATA.EXPORT_SCHEMA_VERSION" in text and "META_DATA_EXPORT" not in text
    assert "2.7.1" in text
    assert "nsys export --type sqlite --force-overwrite true --output REPORT.sqlite REPORT.nsys-rep" in text


def test_an_nsys_export_of_schema_3_under_the_old_table_name_is_read(tmp_path):
    path = tmp_path / "report.sqlite"
    shutil.copy(DATA / "nsys" / "report1.sqlite", path)
    con = sqlite3.connect(path)
    con.execute("ALTER TABLE META_DATA_EXPORT RENAME TO EXPORT_META_DATA")
    con.execute("UPDATE EXPORT_META_DATA SET value = '3.1.0' WHERE name = 'EXPORT_SCHEMA_VERSION'")
    con.commit()
    con.close()
    (record,) = NSYS.read([path], ImportOptions())
    assert record.dimensions["hardware"].value == "NVIDIA H200"
    assert record.meta["rank_meta"]["None"]["export_schema"] == "3.1.0"


def test_pair_findings_of_two_stepless_runs_speak_of_the_whole_trace(tmp_path):
    spec = importlib.util.spec_from_file_location("make_traces", DATA / "make_traces.py")
    assert spec is not None and spec.loader is not None
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    make.iteration_ms = lambda k: 230.0 + 3.0 * (k % 4)  # 30 ms more of host time in each iteration
    slower = tmp_path / "slower.json.gz"
    make.write(slower, make.stepless(annotated=False))
    lead = pair_findings.host_time([record_of(BARE)], [record_of(slower)])
    assert lead is not None and lead.summary.startswith("Host submission moved most:")
    assert "ms over the whole trace" in lead.summary and "per step" not in lead.summary
    # one side with steps, the other without: no per-step figure is set against a whole trace
    assert pair_findings.host_time([record_of(BARE)], [record_of(OPTIMIZER)]) is None
