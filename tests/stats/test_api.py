"""The package's public surface: light import, vocabulary, small helpers."""

import math
import subprocess
import sys

import pytest

import workbench.stats as ws


def test_importing_the_package_does_not_import_scipy():
    code = "import sys, workbench.stats; print(any(m == 'scipy' or m.startswith('scipy.') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_vocabulary():
    assert ws.VERDICTS == (
        "REGRESSION",
        "IMPROVEMENT",
        "EQUIVALENT",
        "SLOWER_UNRESOLVED",
        "FASTER_UNRESOLVED",
        "INCONCLUSIVE",
    )
    assert (ws.PASS, ws.FAIL, ws.RERUN) == ("PASS", "FAIL", "RERUN")
    assert (ws.SLOWER_CERTAIN, ws.FASTER_CERTAIN, ws.UNDETERMINED) == (
        "SLOWER_CERTAIN",
        "FASTER_CERTAIN",
        "UNDETERMINED",
    )
    assert ws.UNSTABLE == "UNSTABLE" and ws.UNDERPOWERED == "UNDERPOWERED"


def test_interval_inversion_maps_time_to_throughput():
    i = ws.Interval("fieller-paired", 0.95, 1.0219099057, 1.0324743033)
    inv = i.inverted()
    assert (inv.low, inv.high) == pytest.approx((1 / 1.0324743033, 1 / 1.0219099057))
    unbounded = ws.Interval("fieller-paired", 0.95, -math.inf, math.inf).inverted()
    assert not unbounded.bounded and unbounded.to_json()["low"] is None


def test_fieller_is_stable_when_the_arms_coincide():
    # Identical arms: the exact interval is the single point 1. The expanded discriminant
    # keeps it there instead of widening it by the square root of a rounding error.
    x = [127.0, 111.0, 52.5625, 72.0, 73.1875, 96.0, 89.0, 53.0, 84.0, 70.5]
    i = ws.paired_fieller([3 * v for v in x], [3 * v for v in x])
    assert i.low == pytest.approx(1.0, abs=1e-12) and i.high == pytest.approx(1.0, abs=1e-12)


def test_rounds_needed_conservative_plans_more():
    sd = 0.0041847117
    plain = ws.rounds_needed(sd, 0.005)
    careful = ws.rounds_needed(sd, 0.005, conservative=True, sd_from_n=8)
    assert careful > plain == 8
    assert ws.rounds_needed(math.nan, 0.02) is None
    assert ws.rounds_needed(1.0, 1e-6) is None  # more than the cap
    with pytest.raises(ValueError):
        ws.rounds_needed(0.01, 0.02, goal="other")


def test_gate_metrics_ignores_untrusted_holm_rejections():
    few = ws.analyze([100.0, 100.1], [150.0, 150.2], paired=True, n_boot=0)
    summary = ws.gate_metrics([few])
    assert summary.gate == ws.RERUN
