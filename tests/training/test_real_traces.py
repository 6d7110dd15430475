"""Real traces: the checked-in copies (tests/data/training, see its README) and, when the
shared real captures are present, every real training trace there."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REAL_CAPTURES
from workbench.errors import BadInput
from workbench.importers import detect
from workbench.importers.base import ImportOptions

DATA = Path(__file__).resolve().parent.parent / "data" / "training"
REAL_TRAINING = REAL_CAPTURES / "training"


def read(paths: list[Path]):
    importer, _ = detect(paths[0])
    records = list(importer.read(paths, ImportOptions()))
    assert len(records) == 1
    return importer.name, records[0]


def test_sampled_rank_pair_imports_as_two_ranks_of_a_128_rank_job_with_unknown_hardware():
    name, record = read(sorted((DATA / "sampled").glob("*.json.gz")))
    assert name == "kineto"
    s = record.tables["samples"]
    assert sorted(set(s["rank"].tolist())) == [0.0, 1.0]
    assert sorted(set(s["step"].tolist())) == [551.0, 552.0]
    assert record.dimensions["rank_count"].value == 128 and record.dimensions["rank_count"].source == "measured"
    assert "hardware" not in record.dimensions  # no deviceProperties: unknown, not guessed
    # Step wall times as the trace records them (ProfilerStep#551: 607 ms on rank 0, 608 ms on rank 1).
    assert s["step_ms"][(s["rank"] == 0) & (s["step"] == 551)][0] == pytest.approx(607.3, abs=0.1)
    assert s["step_ms"][(s["rank"] == 1) & (s["step"] == 551)][0] == pytest.approx(607.9, abs=0.1)
    # The four timing measures stay apart: busy <= wall, kernel sum >= busy minus copies.
    assert np.all(s["gpu_busy_ms"] <= s["step_ms"])
    assert np.all(s["kernel_sum_ms"] >= s["compute_ms"] + s["communication_ms"] - 1e-9)
    assert np.all(np.isnan(s["input_ms"]))  # no data-loader annotations: unknown, not zero
    strag = {f["check"]: f for f in record.meta["diagnostics"]}["straggler"]
    assert strag["status"] in {"found", "not_found", "undecided"} and "not aligned" in strag["caveat"]
    assert len(record.tables["skew"]["step"]) == 2


def test_trace_diff_pair_differs_in_hardware_and_rank_count():
    _, control = read([DATA / "trace_diff" / "control" / "control.json.gz"])
    _, test = read([DATA / "trace_diff" / "test" / "test.json.gz"])
    assert control.dimensions["hardware"].value == "NVIDIA A100-PG509-200"
    assert test.dimensions["hardware"].value == "Tesla V100-SXM2-16GB"
    assert (control.dimensions["rank_count"].value, test.dimensions["rank_count"].value) == (8, 2)


def test_trace_diff_pair_refused_by_the_training_lens_hardware_and_rank_count():
    compare_mod = pytest.importorskip("workbench.compare")
    _, control = read([DATA / "trace_diff" / "control" / "control.json.gz"])
    _, test = read([DATA / "trace_diff" / "test" / "test.json.gz"])
    result = compare_mod.compare([control], [test], lens="training")
    assert not result.comparable
    refused = {result.refusal.dimension, *(result.refusal.also or ())}
    assert {"hardware", "rank_count"} <= refused
    assert "A100" in result.refusal.reason or "A100" in str(result.to_json())
    assert result.primary is None


def test_inspect_on_two_real_ranks_shows_operations_aligned_by_name():
    compare_mod = pytest.importorskip("workbench.compare")
    _, a = read([DATA / "sampled" / "sampled_rank-0.json.gz"])
    _, b = read([DATA / "sampled" / "sampled_rank-1.json.gz"])
    # Model, objective, topology and batch are not in a trace (and these ranks have no device
    # properties): unknown, so the pair is refused until each is accepted with a reason.
    refused = compare_mod.compare([a], [b], lens="training")
    assert not refused.comparable
    why = "ranks 0 and 1 of one job"
    accepts = {name: why for name in ("model", "objective", "hardware", "topology", "effective_batch")}
    result = compare_mod.inspect([a], [b], lens="training", accepts=accepts)
    assert result.comparison.comparable, result.comparison.refusal
    assert result.operations and {"name", "kind", "delta_ms"} <= set(result.operations[0].to_json())


def test_nsys_export_imports_with_the_device_and_kernel_names():
    name, record = read([DATA / "nsys" / "report1.sqlite"])
    assert name == "nsys"
    assert record.dimensions["hardware"].value == "NVIDIA H200"
    ops = record.tables["operations"]
    kernels = ops["name"][ops["kind"] == "kernel"]
    assert any(k.startswith("nvjet_") for k in kernels) and any("nvfuser" in k for k in kernels)
    assert set(ops["name"][ops["kind"] == "memcpy"]) == {"Memcpy HtoD", "Memcpy DtoD", "Memset"}
    s = record.tables["samples"]
    assert record.window["kind"] == "mixed" and np.isnan(s["step"][0])  # no NVTX steps: one window
    assert s["kernel_sum_ms"][0] == pytest.approx(10.1676, abs=1e-3)
    assert s["gpu_busy_ms"][0] >= s["kernel_sum_ms"][0]


def _nsys_db(path: Path, schema: str = "3.17.1", rank: int | None = 1, steps: int = 3) -> Path:
    con = sqlite3.connect(path)
    con.executescript(
        """
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
        CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
        CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT);
        CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, "end" INTEGER, deviceId INTEGER, streamId INTEGER,
            correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, "end" INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER);
        CREATE TABLE NVTX_EVENTS (start INTEGER, "end" INTEGER, eventType INTEGER, text TEXT, textId INTEGER, globalTid INTEGER);
        """
    )
    con.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', ?)", (schema,))
    if rank is not None:
        con.execute("INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', ?)", (f'RANK="{rank}"',))
        con.execute("INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', 'WORLD_SIZE=\"4\"')")
    con.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3')")
    con.executemany(
        "INSERT INTO StringIds VALUES (?, ?)",
        [
            (1, "gemm_kernel"),
            (2, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"),
            (3, "cudaLaunchKernel_v7000"),
            (4, "train_step"),
        ],
    )
    gpid = 77 << 24
    ms = 1_000_000
    for s in range(steps):
        t = 5_000 * ms + s * 100 * ms
        con.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, ?, NULL, 0)", (t, t + 100 * ms, f"step {s}"))
        con.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, NULL, 4, 0)", (t + ms, t + 2 * ms))
        con.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, 3)",
            (t + 10 * ms, t + 10 * ms + 5000, gpid + 1, 10 * s + 1),
        )
        con.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 7, ?, ?, 1, 1)",
            (t + 11 * ms, t + 61 * ms, 10 * s + 1, gpid),
        )
        con.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, 3)",
            (t + 10 * ms + 6000, t + 10 * ms + 9000, gpid + 1, 10 * s + 2),
        )
        con.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 20, ?, ?, 2, 2)",
            (t + 51 * ms, t + 81 * ms, 10 * s + 2, gpid),
        )
    con.commit()
    con.close()
    return path


def test_nsys_steps_from_nvtx_rank_from_the_environment(tmp_path):
    name, record = read([_nsys_db(tmp_path / "r1.sqlite")])
    assert name == "nsys"
    s = record.tables["samples"]
    assert s["step"].tolist() == [1.0, 2.0]  # step 0 excluded as warm-up
    assert s["rank"].tolist() == [1.0, 1.0]
    np.testing.assert_allclose(s["compute_ms"], [50.0, 50.0])
    np.testing.assert_allclose(s["communication_ms"], [20.0, 20.0])
    np.testing.assert_allclose(s["communication_overlapped_ms"], [10.0, 10.0])
    assert record.dimensions["rank_count"].value == 4
    assert record.dimensions["hardware"].value == "NVIDIA H100 80GB HBM3"
    ops = record.tables["operations"]
    assert "train_step" in set(ops["name"][ops["kind"] == "op"])  # NVTX text through StringIds


@pytest.mark.parametrize("damage", ["schema", "no_meta", "truncated"])
def test_nsys_bad_exports_fail_cleanly(tmp_path, damage):
    path = _nsys_db(tmp_path / "r.sqlite", schema="4.0.0" if damage == "schema" else "3.17.1")
    if damage == "no_meta":
        con = sqlite3.connect(path)
        con.execute("DROP TABLE META_DATA_EXPORT")
        con.commit()
        con.close()
    if damage == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2 + 100])
    from workbench.importers.nsys import IMPORTER

    with pytest.raises(BadInput) as err:
        list(IMPORTER.read([path], ImportOptions()))
    assert str(path) in str(err.value)
    if damage == "schema":
        assert "schema version 4.0.0" in str(err.value)


REAL_FILES = (
    sorted(REAL_TRAINING.rglob("*.json.gz")) + sorted(REAL_TRAINING.rglob("*.sqlite")) if REAL_TRAINING.is_dir() else []
)


@pytest.mark.slow
@pytest.mark.skipif(not REAL_FILES, reason="the shared real captures are not here")
@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name)
def test_each_real_trace_imports(path):
    _, record = read([path])
    s = record.tables["samples"]
    assert len(s["step_ms"]) >= 1
    assert np.all(s["step_ms"] > 0)
    assert np.all(np.nan_to_num(s["gpu_busy_ms"]) <= s["step_ms"] + 1e-9)
    assert len(record.tables["operations"]["name"]) > 0
    assert "rank_count" in record.dimensions
