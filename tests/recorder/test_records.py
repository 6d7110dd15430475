"""The capture a snapshot writes is the typed ``Capture`` record, byte for byte: decoding
the file into the records and writing them again gives the same bytes."""

from __future__ import annotations

import json

import msgspec

from workbench.recorder import TriggerRule
from workbench.recorder.capture import iter_json
from workbench.recorder.gpu import NvmlSource
from workbench.recorder.records import Capture, GpuSample

from .helpers import FakeNvml, record_steps


def _round_trip(path) -> tuple[bytes, Capture]:
    raw = path.read_bytes()
    capture = msgspec.convert(json.loads(raw), Capture)
    return raw, capture


def test_a_snapshot_with_gpu_samples_and_an_incident_decodes_to_records_and_back(make_recorder, clock):
    rec = make_recorder(
        gpu_interval_s=0.1,
        gpu_source=NvmlSource(FakeNvml(devices=2, xids=[79])),
        start_threads=False,
        trigger=TriggerRule(slower_than_ms=50),
        dimensions={"model": "toy"},
    )
    rec._sampler.open()
    for _ in range(3):
        clock.advance_ms(100)
        rec._sampler.sample_once(rec._now())
    record_steps(rec, clock, [10.0] * 40 + [200.0])
    rec.mark("epoch", epoch=1)
    path = rec.snapshot("test")
    raw, capture = _round_trip(path)
    assert "".join(iter_json(capture, chunk=4)).encode() == raw
    assert capture.gpu.status == "ok" and len(capture.gpu.devices) == 2
    assert all(isinstance(s, GpuSample) for s in capture.gpu.samples) and len(capture.gpu.samples) == 6
    assert capture.recorder.config.gpu_interval_s == 0.1 and capture.recorder.host
    assert [e["kind"] for e in capture.recorder.events][:1] == ["xid"]
    assert capture.dimensions["hardware"] == "2x NVIDIA H200"  # from the devices NVML named


def test_without_samples_or_gpu_the_window_and_gpu_keys_are_left_out(make_recorder):
    rec = make_recorder()
    path = rec.snapshot("empty")
    raw, capture = _round_trip(path)
    assert "".join(iter_json(capture)).encode() == raw
    doc = json.loads(raw)
    assert set(doc["window"]) == {"kind", "source", "snapshot_reason"}  # no bounds: no samples
    assert doc["gpu"] == {"status": "off", "reason": "GPU sampling not configured"}
    assert capture.work is msgspec.UNSET and "work" not in doc


def test_stats_stay_a_plain_dict(make_recorder):
    stats = make_recorder().stats()
    assert stats["enabled"] is True and stats["config"]["spans"]["max_bytes"] == 16 << 20
    json.dumps(stats)  # plain JSON values
