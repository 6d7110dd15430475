"""GPU observations: sampled through NVML when it works, *unknown* (never zero) when not."""

from __future__ import annotations

import pytest

from .helpers import FakeNvml, load, record_steps
from workbench.recorder.gpu import GPU_FIELDS, GpuSampler, NvmlSource
from workbench.recorder.ring import SegmentRing


def gpu_ring():
    return SegmentRing(
        "gpu", GPU_FIELDS, max_bytes=1 << 20, max_age_ns=None, segment_rows=64, seal_every_ns=float("inf")
    )


def snapshot_with(make_recorder, clock, nvml, ticks=3):
    rec = make_recorder(gpu_interval_s=0.1, gpu_source=NvmlSource(nvml), start_threads=False)
    sampler = rec._sampler
    opened = sampler.open()
    for _ in range(ticks if opened else 0):
        clock.advance_ms(100)
        sampler.sample_once(rec._now())
    record_steps(rec, clock, [10.0] * 5)
    path = rec.snapshot("test")
    return rec, load(path)


def test_nvml_unavailable_records_unknown_not_zeros(make_recorder, clock):
    rec, doc = snapshot_with(make_recorder, clock, FakeNvml(fail_init=True))
    gpu = doc["gpu"]
    assert gpu["status"] == "unavailable"
    assert "NVML could not start" in gpu["reason"]
    assert "samples" not in gpu  # no rows at all: unknown, not a table of zeros
    assert "hardware" not in doc["dimensions"]  # nothing measured, nothing claimed
    assert rec.stats()["faults"] == 0  # no GPU is a normal condition, not a fault


def test_real_pynvml_without_a_gpu_is_unavailable():
    """On a machine with no driver the real bindings fail to start: status unavailable."""
    source = NvmlSource()
    try:
        source.open()
    except Exception:  # noqa: BLE001 - any failure to start is what this test wants
        pass
    else:  # pragma: no cover - only on a GPU machine
        source.close()
        pytest.skip("NVML works here: this test is for machines without a GPU")
    sampler = GpuSampler(gpu_ring(), interval_s=0.1, clock_ns=lambda: 0, source=NvmlSource())
    assert sampler.open() is False
    assert sampler.status == "unavailable"
    assert sampler.describe().status == "unavailable"


def test_samples_are_recorded_with_units_and_device_identity(make_recorder, clock):
    rec, doc = snapshot_with(make_recorder, clock, FakeNvml(devices=2, xids=[79]))
    gpu = doc["gpu"]
    assert gpu["status"] == "ok"
    assert [d["name"] for d in gpu["devices"]] == ["NVIDIA H200", "NVIDIA H200"]
    assert gpu["devices"][0]["uuid"] == "GPU-h0" and gpu["devices"][0]["driver"] == "570.86.15"
    assert len(gpu["samples"]) == 6  # 3 ticks x 2 devices
    first = gpu["samples"][0]
    assert first["util_pct"] == 97 and first["sm_clock_mhz"] == 1980 and first["power_w"] == 650.0
    assert first["temperature_c"] == 61 and first["memory_used_bytes"] == 70 << 30
    assert first["throttle_reasons"] == 4
    assert gpu["fields"]["power_w"] == "W"
    assert doc["dimensions"]["hardware"] == "2x NVIDIA H200"
    xids = [e for e in doc["recorder"]["events"] if e["kind"] == "xid"]
    assert xids == [{"t": xids[0]["t"], "kind": "xid", "device": 0, "xid": 79}]


def test_unsupported_metrics_are_absent_not_zero(make_recorder, clock):
    nvml = FakeNvml(unsupported={"power", "throttle", "utilization", "events"})
    rec, doc = snapshot_with(make_recorder, clock, nvml)
    sample = doc["gpu"]["samples"][0]
    for absent in ("power_w", "throttle_reasons", "util_pct", "mem_util_pct"):
        assert absent not in sample
    assert sample["sm_clock_mhz"] == 1980
    assert doc["gpu"]["xid_events"].startswith("not available")


def test_declared_hardware_wins_over_measured(make_recorder, clock):
    rec = make_recorder(
        gpu_interval_s=0.1,
        gpu_source=NvmlSource(FakeNvml()),
        start_threads=False,
        dimensions={"hardware": "1x H200 SXM 141GB"},
    )
    rec._sampler.open()
    record_steps(rec, clock, [10.0] * 3)
    doc = load(rec.snapshot("x"))
    assert doc["dimensions"]["hardware"] == "1x H200 SXM 141GB"


def test_gpu_ring_has_its_own_budget(make_recorder, clock):
    """A fast GPU sampler cannot evict the step timings that explain an incident."""
    from workbench.recorder import Budget

    rec = make_recorder(
        gpu_interval_s=0.01,
        gpu_source=NvmlSource(FakeNvml()),
        start_threads=False,
        gpu=Budget(max_bytes=16 * 1024, segment_rows=16),
    )
    rec._sampler.open()
    record_steps(rec, clock, [10.0] * 50)
    for _ in range(2000):
        clock.advance_ms(10)
        rec._sampler.sample_once(rec._now())
    stats = rec.stats()
    assert stats["gpu"]["evicted_records"] > 1500
    assert stats["gpu"]["retained_bytes"] <= 16 * 1024
    assert stats["spans"]["evicted_records"] == 0
    doc = load(rec.snapshot("x"))
    assert len(doc["samples"]) == 50
    assert doc["gpu"]["evicted_samples"] >= stats["gpu"]["evicted_records"]


def test_sampler_thread_runs_and_stops():
    import threading
    import time

    ring = gpu_ring()
    sampler = GpuSampler(ring, interval_s=0.001, clock_ns=time.perf_counter_ns, source=NvmlSource(FakeNvml()))
    sampler.start()
    deadline = time.monotonic() + 10
    while sampler.samples < 3 and time.monotonic() < deadline:
        time.sleep(0.005)
    sampler.stop()
    assert sampler.samples >= 3
    assert sampler.status == "stopped"
    assert not any(t.name == "wb-recorder-gpu" and t.is_alive() for t in threading.enumerate())
