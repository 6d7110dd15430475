"""Fixtures for recorder tests (helpers are in helpers.py)."""

from __future__ import annotations

import pytest

from workbench.recorder import Recorder

from .helpers import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_recorder(tmp_path, clock, monkeypatch):
    """A recorder on the fake clock writing to tmp_path; closed after the test."""
    monkeypatch.delenv("WB_RECORDER", raising=False)
    monkeypatch.delenv("WB_STORE", raising=False)
    made = []

    def make(**fields):
        fields.setdefault("out_dir", tmp_path / "snapshots")
        fields.setdefault("gpu_interval_s", None)
        # The host sampler thread is off here (tests drive its ticks by hand, test_host.py).
        fields.setdefault("stack_hz", None)
        fields.setdefault("host_interval_s", None)
        # Process-wide hooks stay off unless a test is about them (test_hangs.py, test_termination.py).
        fields.setdefault("handle_signals", False)
        fields.setdefault("control", False)
        rec = Recorder(clock=clock, wall_clock=lambda: 1_796_000_000.0, **fields)
        made.append(rec)
        return rec

    yield make
    for rec in made:
        rec.close()
