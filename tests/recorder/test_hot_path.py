"""The span hot path: closures over the recorder's state (the sequence restarts and a
swapped clock reach them), and the trigger's integer threshold fires exactly above the
configured one."""

from __future__ import annotations

import math

import pytest

from workbench.recorder import TriggerRule
from workbench.recorder.capture import SEQ_LIMIT, SEQ_UNIT
from workbench.recorder.trigger import NEVER_NS, LatencyTrigger

from .helpers import load


def test_the_span_sequence_restarts_in_the_bound_span_class(make_recorder, clock):
    rec = make_recorder(trigger=None)
    step = rec.step  # a loop keeps the bound class, as the docs' examples do
    rec._restart_seq(SEQ_LIMIT - 8 * SEQ_UNIT)  # 8 spans before the limit
    seqs = []
    for _ in range(40):
        with step() as s:
            clock.advance_ms(1.0)
        seqs.append(s.seq)
    assert seqs[0] == SEQ_LIMIT // SEQ_UNIT - 8
    assert max(seqs) <= SEQ_LIMIT // SEQ_UNIT and 0 in seqs  # restarted at the limit, nothing lost
    doc = load(rec.snapshot("x"))
    assert len(doc["samples"]) == 40


def test_a_swapped_clock_reaches_spans_and_phases(make_recorder, clock):
    rec = make_recorder(trigger=None)
    step, phase = rec.step, rec.phase
    ticks = iter(range(10**12, 10**12 + 10**9, 10**6))  # 1 ms a read
    rec._set_clock(lambda: next(ticks))
    with step():
        with phase("input"):
            pass
    doc = load(rec.snapshot("x"))
    (sample,) = doc["samples"]
    assert sample["input_ms"] == pytest.approx(1.0)
    assert sample["step_ms"] == pytest.approx(3.0)


@pytest.mark.parametrize("ms", [2.5, 1000.0, 0.0000001])
def test_the_integer_threshold_fires_exactly_above_the_rule(ms):
    trig = LatencyTrigger(TriggerRule(slower_than_ms=ms, k_median=None))
    assert trig.threshold_ns == ms * 1e6
    assert trig.fires_above_ns == math.floor(ms * 1e6)
    below = math.floor(ms * 1e6)  # the longest integer duration not above the threshold
    assert not (below > ms * 1e6) and not (below > trig.fires_above_ns)
    assert (below + 1 > ms * 1e6) and (below + 1 > trig.fires_above_ns)


def test_a_disarmed_or_unarmed_trigger_never_fires():
    trig = LatencyTrigger(TriggerRule(k_median=3.0))  # relative only: nothing known yet
    assert trig.threshold_ns == math.inf and trig.fires_above_ns == NEVER_NS
    trig = LatencyTrigger(TriggerRule(slower_than_ms=5.0))
    trig.disarm()
    assert trig.fires_above_ns == NEVER_NS and not (10**18 > trig.fires_above_ns)
