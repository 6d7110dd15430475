"""Phases timed with CUDA events through cupy (faked here: no GPU in CI)."""

from __future__ import annotations

import sys
from types import ModuleType, SimpleNamespace

import pytest

from .helpers import load


class FakeEvent:
    gpu_ms = 0.0  # the fake GPU's clock, moved by the test

    def __init__(self) -> None:
        self.t: float | None = None
        self.done = False

    def record(self) -> None:
        self.t = FakeEvent.gpu_ms

    def synchronize(self) -> None:
        self.done = True


@pytest.fixture
def fake_cupy(monkeypatch):
    cupy = ModuleType("cupy")
    cupy.cuda = SimpleNamespace(Event=FakeEvent, get_elapsed_time=lambda a, b: b.t - a.t)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    return cupy


def test_cuda_phase_is_resolved_without_waiting_on_the_gpu(make_recorder, clock, fake_cupy):
    rec = make_recorder()
    with rec.step():
        with rec.phase("compute", cuda=True):
            clock.advance_ms(2.0)  # host time: the launch
            FakeEvent.gpu_ms += 7.5  # GPU time: the kernels
    [(_code, _start, ev0, ev1)] = list(rec._cuda_pending)
    # The kernels have not finished: the snapshot does not wait for them.
    doc = load(rec.snapshot("early"))
    assert doc["samples"][0]["compute_ms"] == pytest.approx(2.0)
    assert "compute_gpu_ms" not in doc["samples"][0]  # unknown yet, not zero
    ev1.done = True
    doc = load(rec.snapshot("later"))
    assert doc["samples"][0]["compute_gpu_ms"] == pytest.approx(7.5)
    assert not rec._cuda_pending and rec.stats()["faults"] == 0


def test_without_cupy_the_phase_is_host_timed_and_the_fault_counted_once(make_recorder, clock, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    rec = make_recorder()
    for _ in range(3):
        with rec.step():
            with rec.phase("compute", cuda=True):
                clock.advance_ms(1.0)
    doc = load(rec.snapshot("x"))
    assert [s["compute_ms"] for s in doc["samples"]] == [1.0, 1.0, 1.0]
    assert rec.stats()["fault_places"] == {"cupy import": 1}
