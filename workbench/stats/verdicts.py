"""The words the statistics engine decides with, defined once (statistics.md section 8).

String enums: a member *is* its string, so JSON, the store and bundles carry the same
text as before (``json.dumps(Verdict.REGRESSION) == '"REGRESSION"'``) and comparisons
with plain strings read back from JSON hold.
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """The verdict on a ratio θ (> 1 is worse), section 8.6."""

    REGRESSION = "REGRESSION"
    IMPROVEMENT = "IMPROVEMENT"
    EQUIVALENT = "EQUIVALENT"
    SLOWER_UNRESOLVED = "SLOWER_UNRESOLVED"
    FASTER_UNRESOLVED = "FASTER_UNRESOLVED"
    INCONCLUSIVE = "INCONCLUSIVE"


class Gate(StrEnum):
    """The CI gate."""

    PASS = "PASS"
    FAIL = "FAIL"
    RERUN = "RERUN"


class Flag(StrEnum):
    """Flags on an analysis (documented in docs/methods.md)."""

    UNSTABLE = "UNSTABLE"  # A/A guard failed: numbers reported, verdict withheld (INCONCLUSIVE)
    UNDERPOWERED = "UNDERPOWERED"  # A/A CI90 not inside the band: this session cannot resolve δ
    TOO_FEW_ROUNDS = "TOO_FEW_ROUNDS"  # below the hard minimum: no verdict, never a pass
    FEW_ROUNDS = "FEW_ROUNDS"  # below the recommended minimum of 5
    NO_AA_CONTROL = "NO_AA_CONTROL"  # no A′ arm: stability and noise floor unchecked
    SIGNIFICANT_BELOW_THRESHOLD = "SIGNIFICANT_BELOW_THRESHOLD"  # EQUIVALENT, yet the CI95 excludes 1
    UNBOUNDED_INTERVAL = "UNBOUNDED_INTERVAL"  # Fieller gave no bounded interval
    METHODS_DISAGREE = "METHODS_DISAGREE"  # primary and cross-check intervals differ: skew or outliers
    DRIFT = "DRIFT"  # an arm's log run values trend across the session
    OUTLIER_RUNS = "OUTLIER_RUNS"  # runs with |modified z| > 3.5 (flagged, never dropped)
    WIDENED = "WIDENED"  # the control rule: the A/A noise floor is above the band, the verdict read a wider interval


VERDICTS = tuple(Verdict)
# A verdict that says the estimate is clear of 1 (the ratio moved), and the one that says
# it stayed within the band: compare's observations and rerun reports read these.
MOVED = (Verdict.REGRESSION, Verdict.IMPROVEMENT, Verdict.SLOWER_UNRESOLVED, Verdict.FASTER_UNRESOLVED)
DECIDED = (Verdict.REGRESSION, Verdict.IMPROVEMENT, Verdict.EQUIVALENT)
