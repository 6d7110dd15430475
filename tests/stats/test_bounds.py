"""Deterministic bounds (section 8.7, oracle O-D) and the seed-001 worked examples."""

from fractions import Fraction as F

import pytest

import workbench.stats as ws
from workbench.stats.bounds import outward


def test_seed_001_direction_established():
    r = ws.bounds(99, 101, 109, 111)
    assert r.throughput_ratio == (F(33, 37), F(101, 109)) == (F(99, 111), F(101, 109))
    assert r.time_ratio == (F(109, 101), F(111, 99))
    assert r.verdict == ws.SLOWER_CERTAIN
    assert float(r.throughput_ratio[0]) == pytest.approx(0.8918918919, abs=1e-10)
    assert float(r.throughput_ratio[1]) == pytest.approx(0.9266055046, abs=1e-10)
    assert [float(x) for x in r.throughput_change_pct] == pytest.approx([-10.8108108108, -7.3394495413], abs=1e-9)
    assert [float(x) for x in r.time_change_pct] == pytest.approx([7.9207920792, 12.1212121212], abs=1e-9)


def test_seed_001_no_direction():
    r = ws.bounds(48, 52, 49, 53)
    assert r.throughput_ratio == (F(48, 53), F(52, 49))
    assert r.time_ratio == (F(49, 52), F(53, 48))
    assert r.verdict == ws.UNDETERMINED
    assert [float(x) for x in r.throughput_change_pct] == pytest.approx([-9.4339622642, 6.1224489796], abs=1e-9)
    assert [float(x) for x in r.time_change_pct] == pytest.approx([-5.7692307692, 10.4166666667], abs=1e-9)


def test_faster_certain_is_the_mirror():
    r = ws.bounds(109, 111, 99, 101)
    assert r.verdict == ws.FASTER_CERTAIN
    assert r.throughput_ratio == (F(109, 101), F(111, 99))


def test_outward_rounding_for_display():
    assert outward(F(33, 37), F(101, 109)) == ("0.89189189", "0.92660551")  # nearest would be ...550
    assert outward(F(48, 53), F(52, 49)) == ("0.90566037", "1.06122449")
    # An exact decimal stays as it is on both sides.
    assert outward(F(1, 2), F(3, 4), 3) == ("0.500", "0.750")
    doc = ws.bounds(99, 101, 109, 111).to_json()
    assert doc["throughput_ratio_display"] == ["0.89189189", "0.92660551"]
    assert doc["time_ratio_exact"] == ["109/101", "37/33"]
    assert doc["throughput_ratio_exact"] == ["33/37", "101/109"]


def test_exact_decimal_inputs_and_work():
    r = ws.bounds("99.5", "100.5", "1e2", "101", work=10_000, unit="tokens")
    assert r.baseline == (F(199, 2), F(201, 2))
    assert r.baseline_throughput == (F(10_000) / F(201, 2), F(10_000) / F(199, 2))
    assert r.to_json()["work"] == {"amount": "10000", "unit": "tokens"}


@pytest.mark.parametrize(
    "args, message",
    [
        ((0, 1, 1, 2), "positive"),
        ((-1, 1, 1, 2), "positive"),
        ((2, 1, 1, 2), "inverted"),
        ((1, 2, 3, 2), "inverted"),
        (("x", 2, 1, 2), "not a number"),
        ((float("nan"), 2, 1, 2), "finite"),
    ],
)
def test_refuses_bad_bounds(args, message):
    with pytest.raises(ValueError, match=message):
        ws.bounds(*args)


def test_refuses_non_positive_work():
    with pytest.raises(ValueError, match="work"):
        ws.bounds(1, 2, 1, 2, work=0)
