"""Inspect's checks that test explanations (issue 34, issue 29 items 7-8): window kind from
the data, measurement boundaries, clock checks, operations by shape, memory pressure,
host-bound headlines, forward-only traces, and findings printed in plain sight.

Each check has a constructed case with a hand-computed answer (synthetic traces from
``tests/training/synth.py`` or hand-built runs) and a real trace: the checked-in copies in
``tests/data/training`` (always run) or ``../shared/real-captures/training`` (skipped when
absent); each test says which."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from store.records import Dimension
from tests.compare.factories import training_run
from tests.conftest import REAL_CAPTURES
from tests.training import synth
from workbench.compare import compare, inspect
from workbench.compare.render import render_inspect
from workbench.importers.base import ImportOptions
from workbench.importers.kineto import IMPORTER
from workbench.training import pair_findings, window_kind
from workbench.usecases.transport import Local

DATA = Path(__file__).resolve().parent.parent / "data" / "training"
REAL = REAL_CAPTURES / "training"


# What a Kineto trace cannot say, declared as a user would (wb declare).
DECLARED = {"model": "bert-small", "objective": "masked LM", "topology": "1 node", "effective_batch": "64 samples"}
ACCEPT = (
    "--accept",
    "model",
    "--accept",
    "objective",
    "--accept",
    "topology",
    "--accept",
    "effective_batch",
    "--why",
    "synthetic traces",
)


def job(tmp_path: Path, name: str = "job", generation: str = "absolute", ranks=(0, 1), params=None, **kw):
    paths = [
        synth.write(tmp_path / name / f"rank{r}.json.gz", synth.trace(r, generation=generation, **kw)) for r in ranks
    ]
    (record,) = IMPORTER.read(paths, ImportOptions(params=params or {}))
    record.dimensions.update({k: Dimension(v, "declared") for k, v in DECLARED.items()})
    return record


def declared(record):
    record.dimensions.update({k: Dimension(v, "declared") for k, v in DECLARED.items()})
    return record


def real(path: Path, params=None):
    if not path.exists():
        pytest.skip(f"{path} not present (../shared/real-captures)")
    paths = sorted(path.glob("*.json.gz")) if path.is_dir() else [path]
    (record,) = IMPORTER.read(paths, ImportOptions(params=params or {}))
    return record


def checks(record) -> dict[str, dict]:
    return {f["check"]: f for f in record.meta["diagnostics"]}


# -- 34.1 window kind from the data ---------------------------------------------------------


def test_startup_trend_by_hand():
    # Late half [99, 100, 100, 100]: ref 100, MAD 0; slow above 100 + 10 % = 110: steps 1 and 2.
    got = window_kind.classify(
        [1, 2, 3, 4, 5, 6, 7, 8], [200, 150, 100, 101, 99, 100, 100, 100], [np.nan] * 8, [0.0] * 8, warmup_excluded=0
    )
    assert got["kind"] == "startup" and got["step_kinds"] == {"1": "startup", "2": "startup"}
    assert got["kind_evidence"]["reference_step_ms"] == pytest.approx(100.0)


def test_checkpoint_by_annotation_and_by_outlier_with_copies_by_hand():
    got = window_kind.classify([1, 2, 3, 4], [100, 100, 130, 100], [0, 0, 5.0, 0], [1, 1, 1, 1], warmup_excluded=1)
    assert got["kind"] == "checkpointing" and got["step_kinds"] == {"3": "checkpoint"}
    # No annotation: step 3 is 80 ms over a ref of 100 (threshold 125) with 19 ms more copy (>= 8): a save.
    got = window_kind.classify(
        [1, 2, 3, 4, 5], [100, 100, 180, 100, 100], [np.nan] * 5, [1, 1, 20, 1, 1], warmup_excluded=1
    )
    assert got["step_kinds"] == {"3": "checkpoint"} and "copy" in got["kind_evidence"]["steps"]["3"]
    # The same outlier without copies stays steady, and the evidence says so.
    got = window_kind.classify(
        [1, 2, 3, 4, 5], [100, 100, 180, 100, 100], [np.nan] * 5, [1, 1, 1, 1, 1], warmup_excluded=1
    )
    assert got["kind"] == "steady" and "outlier" in got["kind_evidence"]["notes"][0]


def test_synthetic_checkpoint_step_makes_the_window_checkpointing_and_steps_steady_leaves_it_out(tmp_path):
    base, cand = job(tmp_path, "a"), job(tmp_path, "b")
    assert base.window["kind"] == "checkpointing" and base.window["step_kinds"] == {"3": "checkpoint"}
    result = inspect([base], [cand], steps="steady")
    assert result.comparison.comparable
    assert [e["steps"] for e in result.steps.excluded] == [{"3": "checkpoint"}, {"3": "checkpoint"}]
    assert result.comparison.primary.baseline == pytest.approx(100.0)  # steps 2 and 4 only
    text = render_inspect(result)
    assert "left out 3 (checkpoint)" in text


def test_a_declared_window_the_data_contradict_is_different(tmp_path):
    base, cand = job(tmp_path, "a"), job(tmp_path, "b")
    cand.dimensions["window"] = Dimension("steady", "declared")
    result = compare([base], [cand])
    row = next(r for r in result.comparability.rows if r.name == "window")
    assert row.state == "different" and "the label says 'steady' but the data show 'checkpointing'" in row.note


def test_real_trace_window_kinds():
    # tests/data: two steps, no warm-up excluded (2 steps): too few to vouch for steadiness.
    (sampled,) = IMPORTER.read(sorted((DATA / "sampled").glob("*.json.gz")), ImportOptions())
    assert sampled.window["kind"] == "mixed" and "too few" in sampled.window["kind_evidence"]["reason"]
    # ../shared/real-captures: HTA's df_index_resolver, 5 steps, one warm-up excluded: steady.
    record = real(REAL / "hta-df_index_resolver")
    assert record.window["kind"] == "steady" and record.window["step_kinds"] == {}


# -- 34.2 measurement boundaries ------------------------------------------------------------


def test_gradient_accumulation_moves_the_boundary_and_refuses_with_both_values(tmp_path):
    base, cand = job(tmp_path, "a"), job(tmp_path, "b", accumulation=4)
    assert base.window["boundary"]["backward_passes_per_step"] == 1.0
    assert cand.window["boundary"]["backward_passes_per_step"] == 4.0
    result = compare([base], [cand])
    assert not result.comparable and result.comparability.refusal.dimension == "measurement_boundary"
    row = next(r for r in result.comparability.rows if r.name == "measurement_boundary")
    assert (
        row.baseline.value["backward_passes_per_step"] == 1.0 and row.candidate.value["backward_passes_per_step"] == 4.0
    )
    assert "backward passes per step (gradient accumulation): 1.0 against 4.0" in row.note
    assert result.primary is None  # a finding, not a delta
    accepted = compare([base], [cand], accepts={"measurement_boundary": "accumulation is the change under test"})
    assert accepted.comparable


def test_real_trace_boundaries():
    # tests/data: HTA's sampled ranks (DLRM, two optimizers): the boundary as recorded.
    (sampled,) = IMPORTER.read(sorted((DATA / "sampled").glob("*.json.gz")), ImportOptions())
    assert sampled.window["boundary"]["marker"] == "ProfilerStep#N" and sampled.window["boundary"]["step_stride"] == 1.0
    assert sampled.window["boundary"]["optimizer_steps_per_step"] == 2.0
    assert sampled.window["boundary"]["backward_passes_per_step"] == 1.0  # one burst of autograd nodes per step
    # ../shared/real-captures: df_index_resolver (5 steps) with warm-up 1 against warm-up 2.
    a = declared(real(REAL / "hta-df_index_resolver", {"warmup_steps": 1}))
    b = declared(real(REAL / "hta-df_index_resolver", {"warmup_steps": 2}))
    assert a.window["boundary"]["backward_passes_per_step"] == 1.0
    result = compare([a], [b])
    row = next(r for r in result.comparability.rows if r.name == "measurement_boundary")
    assert row.state == "different" and "warm-up steps excluded: 1 against 2" in row.note
    assert result.comparability.refusal.dimension == "measurement_boundary"


def test_same_boundary_is_same(tmp_path):
    result = compare([job(tmp_path, "a")], [job(tmp_path, "b")])
    row = next(r for r in result.comparability.rows if r.name == "measurement_boundary")
    assert row.state == "same" and result.comparable


# -- 34.3 clock checks ----------------------------------------------------------------------


def test_ranks_clocks_that_disagree_leave_the_straggler_unresolved(tmp_path):
    # Rank 1's clock 50 ms ahead: its all-reduce starts at t+118.05 ms, rank 0's ended at t+90 ms: offset >= 28.05 ms.
    record = job(tmp_path, skew_us=50_000)
    found = checks(record)
    assert found["clock_ranks"]["status"] == "found"
    assert found["clock_ranks"]["evidence"]["min_clock_offset_ms"] == pytest.approx(28.05)
    assert found["straggler"]["status"] == "undecided" and found["straggler"]["summary"].startswith(
        "unresolved: clocks"
    )
    assert found["straggler"]["evidence"]["measured_skew_ms"] == pytest.approx(28.05)
    # 3 ms of skew is within the collective's overlap: consistent, and the straggler stands.
    ok = checks(job(tmp_path, "b", skew_us=3_000))
    assert ok["clock_ranks"]["status"] == "not_found" and ok["straggler"]["status"] == "found"


def test_device_clock_behind_the_host_leaves_host_submission_unresolved(tmp_path):
    # Device 1 ms behind: the copy (launched 10 us before it) and the compute kernel (50 us) start
    # 0.99 and 0.95 ms before their launch calls; the all-reduce (launched 48 ms earlier) does not.
    record = job(tmp_path, device_lag_us=1_000)
    found = checks(record)
    clock = found["clock_host_device"]
    assert clock["status"] == "found" and clock["evidence"]["worst_lead_ms"] == pytest.approx(0.99)
    assert clock["evidence"]["kernels_before_launch"] == 2 * 4 * 2  # two per step, four steps, two ranks
    assert (
        found["host_submission"]["status"] == "undecided"
        and "unresolved: clocks" in found["host_submission"]["summary"]
    )


def test_real_traces_clocks():
    # tests/data: the sampled ranks: host and device agree; their only collectives are send/recv, so ranks cannot be
    # compared.
    (record,) = IMPORTER.read(sorted((DATA / "sampled").glob("*.json.gz")), ImportOptions())
    found = checks(record)
    assert found["clock_host_device"]["status"] == "not_found"
    assert found["clock_host_device"]["evidence"]["kernels_before_launch"] == 0
    assert found["clock_ranks"]["status"] == "undecided"


# -- 34.4 kernels by shape ------------------------------------------------------------------


def _shape_run(label, rows):
    run = training_run(label, steps=2, ranks=1, rank_count=1, effective_batch=32)
    run.tables["op_shapes"] = {
        "name": np.array([r[0] for r in rows for _ in range(2)]),
        "kind": np.array(["op"] * 2 * len(rows)),
        "shape": np.array([r[1] for r in rows for _ in range(2)]),
        "step": np.array([0.0, 1.0] * len(rows)),
        "rank": np.zeros(2 * len(rows)),
        "count": np.ones(2 * len(rows)),
        "total_ms": np.array([r[2] for r in rows for _ in range(2)]),
    }
    return run


def test_new_shape_in_the_candidate_by_hand():
    base = _shape_run("b", [("aten::mm", "[[1024,1024]]", 2.0)])
    cand = _shape_run("c", [("aten::mm", "[[1024,1024]]", 2.02), ("aten::mm", "[[4096,5120]]", 3.0)])
    (f,) = pair_findings.shapes([base], [cand])
    assert f.status == "found"
    assert f.summary.startswith(
        "aten::mm (op) at [[4096,5120]]: new in the candidate (3.000 ms per step); "
        "at the 1 shape(s) both sides share, unchanged within 5% (2.000 → 2.020 ms per step)"
    )


def test_shapes_from_a_synthetic_trace_wherever_the_runs_are_cut(tmp_path, monkeypatch):
    from workbench.importers import kineto

    for run_bytes in (4 << 20, 1024):
        monkeypatch.setattr(kineto, "RUN_BYTES", run_bytes)
        record = job(tmp_path, f"s{run_bytes}", mm_dims=[[4096, 5120], [5120, 1024], []])
        t = record.tables["op_shapes"]
        mm = t["name"] == "aten::mm"
        assert set(t["shape"][mm]) == {"[[4096,5120],[5120,1024]]"}  # the scalar's empty entry left out
        assert np.all(t["count"][mm] == 1) and np.allclose(t["total_ms"][mm], 0.02)
        assert set(t["step"][mm]) == {2.0, 3.0, 4.0}  # the warm-up step is out


def test_real_trace_shapes():
    # tests/data: the sampled ranks record shapes; aten::mm appears at its recorded dims, kernels by grid and block.
    (record,) = IMPORTER.read(sorted((DATA / "sampled").glob("*.json.gz")), ImportOptions())
    t = record.tables["op_shapes"]
    assert "[[2,2048],[2048,1]]" in set(t["shape"][t["name"] == "aten::mm"])
    assert any(s.startswith("grid [") and " block [" in s for s in t["shape"][t["kind"] == "kernel"])
    # The same job against itself: every shape shared, unchanged.
    (f,) = pair_findings.shapes([record], [record])
    assert f.status == "not_found" and "every shape on both sides and unchanged within 5%" in f.summary


# -- 34.5 memory pressure -------------------------------------------------------------------


def test_memory_pressure_rose_with_step_time_synthetic(tmp_path):
    base, cand = job(tmp_path, "a", memory_mb=1000.0), job(tmp_path, "b", memory_mb=1500.0)
    m = base.tables["memory"]
    assert np.allclose(m["peak_allocated_mb"], 1000.0) and np.allclose(m["peak_reserved_mb"], 2000.0)
    assert np.allclose(m["allocated_mb"], 1000.0) and np.all(m["allocations"] == 1)
    cand.tables["samples"]["step_ms"] = cand.tables["samples"]["step_ms"] + 5.0
    f = pair_findings.memory([base], [cand])
    assert f.status == "found" and "peak reserved 2,000 → 3,000 MiB" in f.summary and "100.00 → 105.00 ms" in f.summary
    assert pair_findings.memory([base], [base]).status == "not_found"


def test_real_trace_memory_peaks_match_the_raw_events():
    # ../shared/real-captures: HTA's df_index_resolver was profiled with profile_memory.
    path = REAL / "hta-df_index_resolver" / "df_index_resolver.json.gz"
    record = real(path)
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    kept = [
        e
        for e in events
        if e.get("name", "").startswith("ProfilerStep#")
        and int(e["name"].split("#")[1]) in {int(s) for s in record.window["steps_included"]}
    ]
    peaks = []
    for step in kept:
        inside = [
            e["args"]["Total Reserved"]
            for e in events
            if e.get("name") == "[memory]"
            and e["args"].get("Device Type") != 0
            and step["ts"] <= e["ts"] < step["ts"] + step["dur"]
        ]
        peaks.append(max(inside) / 2**20)
    m = record.tables["memory"]
    assert sorted(m["peak_reserved_mb"].tolist()) == pytest.approx(sorted(peaks))


# -- 29.7 host-bound steps said so -----------------------------------------------------------


def _host_bound(label, step, idle, submission, compute):
    run = training_run(
        label,
        steps=20,
        ranks=1,
        noise=0.0,
        input_ms=0.0,
        compute=compute,
        comm=0.0,
        checkpoint=0.0,
        rank_count=1,
        effective_batch=32,
    )
    s = run.tables["samples"]
    n = len(s["step"])
    s["step_ms"] = np.full(n, step)
    s["idle_ms"] = np.full(n, idle)
    s["host_submission_ms"] = np.full(n, submission)
    return run


def test_host_bound_headline_is_about_host_time_by_hand():
    # The BERT-small case: idle 4.12 -> 3.62 ms of 4.43 -> 4.01 ms steps (93 % and 90 %).
    base = _host_bound("h100", 4.43, 4.12, 3.60, 0.31)
    cand = _host_bound("mi300x", 4.01, 3.62, 3.00, 0.39)
    result = compare([base], [cand])
    head = result.observations[0].text
    assert head.startswith("The GPU is idle for most of each step on both sides (93 % and 90 % of the step)")
    assert (
        "is host time, not compute" in head
        and "host submission 3.60 → 3.00 ms" in head
        and "compute 0.31 → 0.39 ms" in head
    )
    assert result.observations[0].evidence.values["idle_share_baseline"] == pytest.approx(4.12 / 4.43)


def test_busy_gpu_gets_no_host_headline_unless_host_time_moved_most():
    # GPU busy 90 %, compute moved 0.4 ms of the step's 0.5: compute leads, no host headline.
    assert (
        pair_findings.host_time([_host_bound("a", 10.0, 1.0, 0.5, 9.0)], [_host_bound("b", 10.5, 1.1, 0.6, 9.4)])
        is None
    )
    moved = pair_findings.host_time([_host_bound("a", 10.0, 1.0, 0.5, 9.0)], [_host_bound("b", 12.0, 3.0, 2.5, 9.0)])
    assert moved is not None and moved.summary.startswith("Host submission moved most: 0.50 → 2.50 ms per step")


def test_host_bound_on_a_real_trace():
    # ../shared/real-captures: TraceLens's B200 eager trace keeps the GPU idle 83 % of the time. It has no
    # steps (no ProfilerStep#, optimizer-step or data-loader annotation): the figures are the whole trace's.
    record = real(REAL / "tracelens-b200" / "eager_trace.json.gz")
    lead = pair_findings.host_time([record], [record])
    assert lead is not None and "idle for most of the whole trace (no steps)" in lead.summary
    assert "host submission" in lead.summary and "per step" not in lead.summary


# -- 29.8 forward-only traces ----------------------------------------------------------------


def test_forward_only_synthetic(tmp_path):
    record = job(tmp_path, backward=False)
    f = checks(record)["profile_kind"]
    assert f["status"] == "found" and "forward passes only" in f["summary"]
    assert record.window["step_is"].startswith("a forward pass")
    training = job(tmp_path, "t")
    assert checks(training)["profile_kind"]["status"] == "not_found"
    # A forward pass is not a training step: a boundary finding with both values.
    row = next(r for r in compare([training], [record]).comparability.rows if r.name == "measurement_boundary")
    assert row.state == "different" and "a step is: 'training step' against 'forward pass'" in row.note


def test_forward_only_real_trace():
    # ../shared/real-captures: TraceLens's B200 eager trace is inference (no backward, no optimizer).
    record = real(REAL / "tracelens-b200" / "eager_trace.json.gz")
    assert checks(record)["profile_kind"]["status"] == "found"
    # tests/data: the sampled training ranks have both.
    (training,) = IMPORTER.read(sorted((DATA / "sampled").glob("*.json.gz")), ImportOptions())
    assert checks(training)["profile_kind"]["status"] == "not_found"


# -- 34.6 findings in plain sight -------------------------------------------------------------


def test_findings_print_in_inspect_and_show_and_are_typed_in_json(tmp_path, wb_env):
    from tests.conftest import run_wb

    for name, kw in (("a", {}), ("b", {"skew_us": 50_000})):
        for r in (0, 1):
            synth.write(tmp_path / name / f"rank{r}.json.gz", synth.trace(r, **kw))
        out = run_wb("import", str(tmp_path / name), "--label", name)
        assert out.returncode == 0, out.stderr
    show = run_wb("show", "b", env=None)
    assert show.returncode == 0, show.stderr
    text = " ".join(show.stdout.split())
    assert (
        "trace findings" in text
        and "clocks, across ranks: FOUND" in text
        and "straggler: undecided: unresolved: clocks" in text
    )
    assert "input stall: FOUND" in text and "step 3: checkpoint save on the host" in text
    ins = run_wb("inspect", "a", "--vs", "b", "--steps", "steady", *ACCEPT, env=None)
    assert ins.returncode == 0, ins.stderr
    flat = " ".join(ins.stdout.split())
    assert "Trace findings (observations, not causes)" in flat and "clocks, across ranks: FOUND" in flat
    assert "host submission: FOUND" in flat and "left out 3 (checkpoint)" in flat
    doc = json.loads(run_wb("inspect", "a", "--vs", "b", "--json", *ACCEPT, env=None).stdout)
    by = {(f["side"], f["check"]): f for f in doc["findings"]}
    assert by[("candidate", "clock_ranks")]["status"] == "found"
    assert by[("candidate", "clock_ranks")]["evidence"]["min_clock_offset_ms"] == pytest.approx(28.05)
    assert by[("baseline", "straggler")]["status"] == "found"


def test_tui_inspect_pane_shows_the_findings(tmp_path, sqlite_url):
    """The TUI's Inspect pane text (services.inspect_text) carries the same findings."""
    from store import open_store
    from workbench.ingest import import_files
    from workbench.investigations import workflow as wf
    from workbench.tui import services

    store = open_store(sqlite_url)
    ids = []
    for name, kw in (("a", {}), ("b", {"skew_us": 50_000})):
        for r in (0, 1):
            synth.write(tmp_path / name / f"rank{r}.json.gz", synth.trace(r, **kw))
        report = import_files(store, [tmp_path / name], ImportOptions(label=name))
        ids.append(report.imported[0][1][0])
    inv = wf.new_investigation(store, lens="training", question="which rank?")
    wf.store_comparison(store, inv.id, [ids[0]], [ids[1]], accepts={k: "synthetic" for k in DECLARED})
    inv = wf.investigation_view(store, inv.id)
    text = " ".join(services.inspect_text(Local(store), inv).split())
    assert "Trace findings (observations, not causes)" in text and "clocks, across ranks: FOUND" in text
