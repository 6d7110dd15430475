"""The host sampler's schedule on an injected clock: the achieved rate is the configured
one when a tick's delay (the wait for the GIL) stays under a period, deadlines missed by a
longer delay are skipped and counted (no catch-up burst), and the two streams keep their
own rates whichever is faster."""

from __future__ import annotations

import math

import pytest

from workbench.recorder.host import HostSampler, StackTables, TickSchedule


class FakeTime:
    """A monotonic clock that only ``sleep`` moves: each sleep lasts what was asked plus
    ``late`` seconds (what waking and taking the GIL back cost), and the sampler is
    stopped after ``seconds`` of simulated time."""

    def __init__(self, sampler_stop, *, seconds: float, late: float = 0.0) -> None:
        self.now = 1000.0
        self.end = self.now + seconds
        self.late = late
        self.stop = sampler_stop
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        assert s >= 0
        self.sleeps.append(s)
        self.now += s + self.late
        if self.now >= self.end:
            self.stop()


def run_sampler(*, stack_hz, host_interval_s, seconds, late=0.0):
    class Ring:
        rows = 0

        def append(self, row):
            Ring.rows += 1

    sampler = HostSampler(
        stacks_ring=Ring() if stack_hz else None,
        host_ring=Ring() if host_interval_s else None,
        tables=StackTables(max_frames=64, max_stacks=64, max_depth=8),
        stack_hz=stack_hz,
        host_interval_s=host_interval_s,
        clock_ns=lambda: 0.0,
        on_fault=lambda exc, where: pytest.fail(f"{where}: {exc}"),
        seal=lambda now: None,
        thread_time=lambda: 0.0,
    )
    fake = FakeTime(lambda: setattr(sampler, "_stopping", True), seconds=seconds, late=late)
    sampler.monotonic, sampler.sleep = fake.monotonic, fake.sleep
    sampler._run()
    return sampler, fake


@pytest.mark.parametrize("late", [0.0, 0.002, 0.005, 0.0099])
def test_the_rate_holds_while_each_tick_comes_late_by_less_than_a_period(late):
    sampler, _ = run_sampler(stack_hz=100.0, host_interval_s=0.25, seconds=10.0, late=late)
    assert sampler.status == "ok"
    assert sampler.ticks in (1000, 1001)  # the first tick is at t=0; the last at or before 10 s
    assert sampler.host_ticks in (40, 41)
    assert sampler.overruns == 0
    assert sampler.achieved_hz() == pytest.approx(100.0, rel=1e-3)


def test_a_tick_later_than_a_period_skips_the_missed_deadlines_without_a_burst():
    # Every wake-up costs 25 ms: two deadlines of the 10 ms grid are missed each time.
    sampler, fake = run_sampler(stack_hz=100.0, host_interval_s=None, seconds=3.0, late=0.025)
    assert sampler.ticks == pytest.approx(3.0 / 0.03, abs=2)
    assert sampler.overruns == pytest.approx(2 * sampler.ticks, abs=3)
    assert sampler.achieved_hz() == pytest.approx(1 / 0.03, rel=0.02)
    # No catch-up: every sleep waits for the next deadline on the grid, none is skipped to zero.
    assert min(fake.sleeps) > 0.0


def test_each_stream_keeps_its_own_rate():
    # Host metrics faster than stacks: stacks still at 2 Hz, not at the host's 10 Hz.
    sampler, _ = run_sampler(stack_hz=2.0, host_interval_s=0.1, seconds=5.0)
    assert sampler.ticks in (10, 11)
    assert sampler.host_ticks in (50, 51)
    # Stacks off: the host stream alone.
    sampler, _ = run_sampler(stack_hz=None, host_interval_s=0.5, seconds=5.0)
    assert sampler.ticks == 0 and sampler.host_ticks in (10, 11)
    assert sampler.achieved_hz() is None


def test_schedule_grid():
    sched = TickSchedule(0.01, None, now=5.0)
    assert sched.due(5.0) == (True, False)
    assert sched.wait(5.0) == pytest.approx(0.01)
    assert sched.due(5.004) == (False, False)
    assert sched.due(5.013) == (True, False)  # late by 3 ms: the grid stays at 5.02
    assert sched.next_stack == pytest.approx(5.02)
    assert sched.due(5.0551) == (True, False)  # 5.02, 5.03, 5.04, 5.05 due: three missed
    assert sched.missed == 3
    assert sched.next_stack == pytest.approx(5.06)
    assert math.isinf(sched.next_host)
