"""Kineto importer on synthetic traces with known figures: formats, ranks, bad input, diagnostics."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from workbench.errors import BadInput
from workbench.importers import detect
from workbench.importers.base import ImportOptions
from workbench.importers import kineto
from workbench.importers.kineto import IMPORTER
from tests.training import synth


@pytest.fixture(params=["runs", "small-runs"])
def reader(request, monkeypatch):
    """The one reader, with runs of events as it cuts them and cut into 1 KiB runs (cut at many places)."""
    if request.param == "small-runs":
        monkeypatch.setattr(kineto, "RUN_BYTES", 1024)
    return request.param


def job(tmp_path: Path, generation: str = "absolute", ranks=(0, 1), **kw):
    paths = [
        synth.write(tmp_path / "job" / f"rank{r}.json.gz", synth.trace(r, generation=generation, **kw)) for r in ranks
    ]
    records = list(IMPORTER.read(paths, ImportOptions()))
    assert len(records) == 1
    return records[0]


def row(record, step: int, rank: int) -> dict[str, float]:
    s = record.tables["samples"]
    i = np.flatnonzero((s["step"] == step) & (s["rank"] == rank))
    assert len(i) == 1, (step, rank)
    return {k: float(v[i[0]]) for k, v in s.items()}


EXPECTED = {  # (rank) -> figures of a middle step (2) in ms
    0: {
        "step_ms": 100.0,
        "compute_ms": 50.0,
        "communication_ms": 29.95,
        "communication_overlapped_ms": 2.0,
        "input_ms": 10.0,
        "memcpy_ms": 0.0,
        "checkpoint_ms": 0.0,
        "other_ms": 10.05,
        "gpu_busy_ms": 80.95,
        "idle_ms": 19.05,
        "kernel_sum_ms": 81.95,
        "host_api_ms": 0.015,
        "input_wait_ms": 10.0,
        "host_submission_ms": 10.05,
        "idle_unresolved_ms": 0.0,
    },
    1: {
        "step_ms": 100.0,
        "compute_ms": 60.0,
        "communication_ms": 19.95,
        "communication_overlapped_ms": 2.0,
        "input_ms": 10.0,
        "memcpy_ms": 0.0,
        "checkpoint_ms": 0.0,
        "other_ms": 10.05,
        "gpu_busy_ms": 80.95,
        "idle_ms": 19.05,
        "kernel_sum_ms": 81.95,
        "host_api_ms": 0.015,
        "input_wait_ms": 10.0,
        "host_submission_ms": 10.05,
        "idle_unresolved_ms": 0.0,
    },
}


@pytest.mark.parametrize("generation", ["legacy", "absolute", "relative"])
def test_known_wait_overlap_and_straggler_give_exactly_those_figures(tmp_path, generation, reader):
    record = job(tmp_path, generation)
    assert record.lens == "training"
    for rank, expected in EXPECTED.items():
        got = row(record, 2, rank)
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, abs=1e-9), (generation, rank, key)
    # Step 3 has a 5 ms checkpoint save in the idle tail: it is taken out of "other" and host submission.
    got = row(record, 3, 0)
    assert got["checkpoint_ms"] == pytest.approx(5.0) and got["other_ms"] == pytest.approx(5.05)
    assert got["host_submission_ms"] == pytest.approx(5.05)
    # Exposed phases plus the remainder add up to the step, on one clock.
    s = record.tables["samples"]
    parts = (
        s["compute_ms"] + s["communication_ms"] + s["checkpoint_ms"] + s["input_ms"] + s["memcpy_ms"] + s["other_ms"]
    )
    np.testing.assert_allclose(parts, s["step_ms"])
    # Warm-up step 1 excluded, the policy recorded; the last step is complete and kept.
    # Step 3 holds a checkpoint save: the window is checkpointing, from the data.
    assert record.window["kind"] == "checkpointing" and record.window["warmup_excluded"] == 1
    assert record.window["step_kinds"] == {"3": "checkpoint"}
    assert record.window["excluded_steps"] == {"1": "warm-up"}
    assert sorted(set(s["step"].tolist())) == [2.0, 3.0, 4.0]
    findings = {f["check"]: f for f in record.meta["diagnostics"]}
    assert findings["straggler"]["status"] == "found"
    assert findings["straggler"]["evidence"]["straggler_rank"] == 1
    assert findings["straggler"]["evidence"]["comm_spread_ms_median"] == pytest.approx(10.0)
    assert findings["input_stall"]["status"] == "found"
    assert findings["input_stall"]["evidence"]["input_ms_mean"] == pytest.approx(10.0)
    assert all("observation, not cause" in f["summary"] for f in findings.values() if f["status"] == "found")
    skew = record.tables["skew"]
    assert skew["straggler_rank"].tolist() == [1.0, 1.0, 1.0]
    np.testing.assert_allclose(skew["comm_spread_ms"], [10.0, 10.0, 10.0])


def test_dimensions_and_operations(tmp_path):
    record = job(tmp_path)
    dims = {k: (v.value, v.source) for k, v in record.dimensions.items()}
    assert dims["hardware"] == ("NVIDIA A100-SXM4-80GB", "measured")
    assert dims["rank_count"] == (2, "measured")
    ops = record.tables["operations"]
    assert set(ops) == {"name", "kind", "step", "rank", "count", "total_ms"}
    sel = (ops["step"] == 2) & (ops["rank"] == 1)
    by = {
        (n, k): (c, t)
        for n, k, c, t in zip(ops["name"][sel], ops["kind"][sel], ops["count"][sel], ops["total_ms"][sel])
    }
    assert by[("volta_sgemm_128x64_nn", "kernel")] == (1.0, pytest.approx(60.0))
    assert by[("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "collective")] == (
        1.0,
        pytest.approx(21.95),
    )
    assert by[("Memcpy HtoD (Pageable -> Device)", "memcpy")] == (1.0, pytest.approx(1.0))
    assert by[("aten::mm", "op")] == (1.0, pytest.approx(0.02))
    assert 1.0 not in ops["step"]  # warm-up step excluded here too


def test_clock_skew_shows_in_start_skew_only(tmp_path):
    record = job(tmp_path, skew_us=3_000)
    assert row(record, 2, 1)["compute_ms"] == pytest.approx(60.0)
    np.testing.assert_allclose(record.tables["skew"]["start_skew_ms"], [3.0, 3.0, 3.0])
    strag = {f["check"]: f for f in record.meta["diagnostics"]}["straggler"]
    assert "not aligned" in strag["caveat"]


def test_incomplete_last_step_is_excluded_and_recorded(tmp_path):
    record = job(tmp_path, drop_last_kernels=True)
    assert record.window["last_step_excluded"] is True
    assert "incomplete" in record.window["excluded_steps"]["4"]
    assert sorted(set(record.tables["samples"]["step"].tolist())) == [2.0, 3.0]


def test_compact_json_keeps_its_rank_and_detection_is_by_content(tmp_path, reader):
    a = synth.write(tmp_path / "j" / "x.data", synth.trace(0), compact=True)
    b = synth.write(tmp_path / "j" / "y.data", synth.trace(1), compact=True)
    assert b'"rank":1' in b.read_bytes()
    assert detect(a)[0].name == "kineto"
    record = next(iter(IMPORTER.read([a, b], ImportOptions())))
    assert sorted(set(record.tables["samples"]["rank"].tolist())) == [0.0, 1.0]


def test_two_files_claiming_one_rank_is_an_error(tmp_path):
    a = synth.write(tmp_path / "j" / "a.json", synth.trace(1))
    b = synth.write(tmp_path / "j" / "b.json", synth.trace(1, skew_us=1))
    with pytest.raises(BadInput, match="claims rank 1, as does"):
        list(IMPORTER.read([a, b], ImportOptions()))


def test_world_sizes_that_disagree_are_not_one_job(tmp_path):
    a = synth.write(tmp_path / "j" / "a.json", synth.trace(0, world=2))
    b = synth.write(tmp_path / "j" / "b.json", synth.trace(1, world=4))
    with pytest.raises(BadInput, match="disagree on the world size"):
        list(IMPORTER.read([a, b], ImportOptions()))


def test_directories_are_separate_jobs(tmp_path):
    a = synth.write(tmp_path / "one" / "r.json", synth.trace(0))
    b = synth.write(tmp_path / "two" / "r.json", synth.trace(0))
    assert len(list(IMPORTER.read([a, b], ImportOptions()))) == 2


def test_without_device_properties_the_hardware_is_unknown(tmp_path):
    record = job(tmp_path, device=None)
    assert "hardware" not in record.dimensions


def test_trailer_and_header_members_are_read(tmp_path, reader):
    # baseTimeNanoseconds after the event array (as Kineto writes it) shifts the clock.
    doc = synth.trace(0, generation="relative")
    path = synth.write(tmp_path / "r.json", doc)
    record = next(iter(IMPORTER.read([path], ImportOptions())))
    assert record.meta["rank_meta"]["0"]["timestamps"].startswith("relative")
    assert row(record, 2, 0)["compute_ms"] == pytest.approx(50.0)


@pytest.mark.parametrize("damage", ["truncate", "corrupt_gzip", "bad_json", "bad_ts", "bad_rank"])
def test_damaged_traces_fail_cleanly(tmp_path, damage, reader):
    path = synth.write(tmp_path / "r.json.gz", synth.trace(0))
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "corrupt_gzip":
        mid = len(data) // 2
        path.write_bytes(data[:mid] + bytes(b ^ 0xFF for b in data[mid : mid + 64]) + data[mid + 64 :])
    elif damage == "bad_json":
        text = json.dumps(synth.trace(0)).replace('"ph": "X"', '"ph": X', 1)
        path.write_bytes(gzip.compress(text.encode()))
    elif damage == "bad_ts":
        doc = synth.trace(0)
        doc["traceEvents"][3]["ts"] = "soon"
        synth.write(path, doc)
    elif damage == "bad_rank":
        doc = synth.trace(0)
        doc["distributedInfo"]["rank"] = "zero"
        synth.write(path, doc)
    with pytest.raises(BadInput) as err:
        list(IMPORTER.read([path], ImportOptions()))
    assert str(path) in str(err.value)


def test_a_kernel_without_a_duration_is_bad_input_not_zero_time(tmp_path, reader):
    doc = synth.trace(0)
    assert doc["traceEvents"][6]["cat"] == "kernel"
    del doc["traceEvents"][6]["dur"]
    path = synth.write(tmp_path / "r.json.gz", doc)
    with pytest.raises(BadInput, match="dur None") as err:
        list(IMPORTER.read([path], ImportOptions()))
    assert "traceEvents[6]" in str(err.value)


def test_import_into_store_then_bad_rank_file_writes_nothing(tmp_path, store_url):
    from store import open_store
    from workbench.ingest import import_files

    good = tmp_path / "job"
    synth.write(good / "rank0.json.gz", synth.trace(0))
    synth.write(good / "rank1.json.gz", synth.trace(1))
    st = open_store(store_url)
    report = import_files(st, [good])
    assert len(report.run_ids) == 1
    run = st.load_run(report.run_ids[0])
    assert run.lens == "training" and run.dimensions["rank_count"].value == 2
    assert "operations" in run.tables and len(run.tables["operations"]["name"]) > 0
    bad = tmp_path / "bad"
    synth.write(bad / "rank0.json.gz", synth.trace(0, skew_us=7))
    truncated = synth.write(bad / "rank1.json.gz", synth.trace(1, skew_us=7))
    truncated.write_bytes(truncated.read_bytes()[:300])
    with pytest.raises(BadInput):
        import_files(st, [bad])
    assert len(st.list_runs()) == 1


def test_worker_processes_give_the_same_job_and_carry_errors_back(tmp_path):
    paths = [synth.write(tmp_path / "job" / f"rank{r}.json.gz", synth.trace(r)) for r in (0, 1)]
    serial = next(iter(IMPORTER.read(paths, ImportOptions(params={"jobs": 1}))))
    pooled = next(iter(IMPORTER.read(paths, ImportOptions(params={"jobs": 2}))))
    for key, values in serial.tables["samples"].items():
        np.testing.assert_array_equal(values, pooled.tables["samples"][key])
    paths[1].write_bytes(paths[1].read_bytes()[:200])
    with pytest.raises(BadInput) as err:
        list(IMPORTER.read(paths, ImportOptions(params={"jobs": 2})))
    assert err.value.file == str(paths[1])


def _write_job(tmp_path: Path, docs) -> list[Path]:
    return [synth.write(tmp_path / "job" / f"rank{i}.json.gz", doc) for i, doc in enumerate(docs)]


def test_idle_without_correlation_ids_is_unresolved_not_guessed(tmp_path):
    doc = synth.trace(0)
    for ev in doc["traceEvents"]:
        if ev.get("cat") in ("kernel", "gpu_memcpy"):
            del ev["args"]["correlation"]
    record = next(iter(IMPORTER.read(_write_job(tmp_path, [doc]), ImportOptions())))
    got = row(record, 2, 0)
    assert got["host_submission_ms"] == 0.0
    assert got["idle_unresolved_ms"] == pytest.approx(got["idle_ms"]) == pytest.approx(19.05)  # every idle gap
    assert got["compute_ms"] == pytest.approx(50.0)  # the breakdown itself does not need the ids


def test_without_runtime_events_host_figures_are_unknown(tmp_path):
    doc = synth.trace(0)
    doc["traceEvents"] = [ev for ev in doc["traceEvents"] if ev.get("cat") != "cuda_runtime"]
    record = next(iter(IMPORTER.read(_write_job(tmp_path, [doc]), ImportOptions())))
    s = record.tables["samples"]
    assert np.all(np.isnan(s["host_api_ms"])) and np.all(np.isnan(s["host_submission_ms"]))
    findings = {f["check"]: f for f in record.meta["diagnostics"]}
    assert findings["host_submission"]["status"] == "undecided"
    assert findings["straggler"]["status"] == "undecided"  # one rank


def test_a_step_whose_collectives_differ_across_ranks_is_not_compared(tmp_path):
    docs = [synth.trace(0), synth.trace(1)]
    t2 = synth.T0_US + synth.STEP_US  # step 2 of rank 1: drop its collective kernel
    docs[1]["traceEvents"] = [
        ev
        for ev in docs[1]["traceEvents"]
        if not (ev.get("cat") == "kernel" and ev["name"].startswith("nccl") and t2 <= ev["ts"] < t2 + synth.STEP_US)
    ]
    record = next(iter(IMPORTER.read(_write_job(tmp_path, docs), ImportOptions())))
    skew = record.tables["skew"]
    assert skew["step"].tolist() == [2.0, 3.0, 4.0]
    assert np.isnan(skew["straggler_rank"][0]) and skew["straggler_rank"][1:].tolist() == [1.0, 1.0]
    strag = {f["check"]: f for f in record.meta["diagnostics"]}["straggler"]
    assert strag["evidence"]["steps_compared"] == 2


def test_a_field_the_typed_decoder_refuses_is_read_untyped(tmp_path):
    doc = synth.trace(0)
    for ev in doc["traceEvents"]:
        if ev.get("cat") == "kernel":
            ev["pid"] = 0.0  # a float pid: legal JSON, not what the typed decoder expects
    record = next(iter(IMPORTER.read(_write_job(tmp_path, [doc]), ImportOptions())))
    assert row(record, 2, 0)["compute_ms"] == pytest.approx(50.0)


def test_cli_warmup_steps_reaches_the_importer(tmp_path):
    """`wb import --warmup-steps N` is recorded in the run's window policy."""
    import json as _json
    import subprocess
    import sys

    data = Path(__file__).resolve().parents[1] / "data" / "training" / "sampled"
    store = f"sqlite:///{tmp_path / 's.sqlite'}"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "workbench",
            "--store",
            store,
            "import",
            str(data),
            "--warmup-steps",
            "0",
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    shown = subprocess.run(
        [sys.executable, "-m", "workbench", "--store", store, "show", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "the first 0 step(s) excluded" in _json.loads(shown.stdout)["window"]["policy"]
