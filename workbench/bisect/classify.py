"""What one bisection step says of its candidate: like good, like bad, in between, undecided.

A step compares the candidate (B) with the reference (A, and A′ = A again) under
sequential stopping; the endpoint check measured the whole regression (bad against
good). The step's decision and its repeated 95 % interval are read against that:

- EQUIVALENT (or IMPROVEMENT): **good** — no slowdown beyond the band;
- REGRESSION (or SLOWER_UNRESOLVED: a real slowdown, not clearly beyond the band) whose
  interval lies wholly below the endpoints' estimate: **between** — a real slowdown,
  smaller than the whole one: the regression is split across changes. The endpoints'
  estimate is taken as known here (its own interval is only as narrow as its early stop
  needed), so an endpoint that happened to read high can make a split look likely: the
  report shows both effects, and the search still follows the larger part to a change;
- REGRESSION otherwise: **bad**;
- anything else (INCONCLUSIVE, an unstable A/A control, the round cap reached
  undecided): **undecided** — skipped, like ``git bisect skip``.
"""

from __future__ import annotations

GOOD, BAD, BETWEEN, UNDECIDED, SKIP, UNTESTED = "good", "bad", "between", "undecided", "skip", "untested"


def classify(decision: str | None, ci95: tuple[float, float], endpoint_ratio: float) -> str:
    high = ci95[1]
    if decision in ("EQUIVALENT", "IMPROVEMENT"):
        return GOOD
    if decision in ("REGRESSION", "SLOWER_UNRESOLVED") and high < endpoint_ratio:
        return BETWEEN
    if decision == "REGRESSION":
        return BAD
    return UNDECIDED
