"""Clock checks before any attribution that needs them.

- **Host and device on one rank**: a kernel cannot start before its launch call does.
  Kernels that start more than ``LAUNCH_TOLERANCE_NS`` before their (correlated) launch
  show the host and device timelines are not aligned; then every attribution that
  matches host time against device idle (host submission, input stall) is
  "unresolved: clocks", with the measured lead.
- **Across ranks**: a synchronous collective cannot finish on one rank before another
  rank has started it. For each step's first collective, ``max(start) - min(end)``
  across ranks above the tolerance is a lower bound on the clock offset between ranks;
  then the cross-rank attribution (which rank the others wait for, start skew) is
  "unresolved: clocks". The start skew is also set beside the collective's duration:
  a skew larger than the collective itself is not a wait the collective can show.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from workbench.training.step_findings import Figures, Finding, _finding
from workbench.training.rank_summary import RankSummary
from workbench.training.step_facts import LAUNCH_TOLERANCE_NS

EARLY_SHARE = 0.01  # kernels starting before their launch, as a share of the matched ones
UNRESOLVED = "unresolved: clocks"


def host_device(ranks: Sequence[RankSummary]) -> Finding:
    tol_ms = LAUNCH_TOLERANCE_NS / 1e6
    rows = [(r.rank, r.host_device_clock) for r in ranks if r.host_device_clock.get("matched")]
    if not rows:
        return _finding(
            "clock_host_device",
            "undecided",
            "no kernel matched to its launch call: host and device alignment cannot be checked",
            caveat="the check needs correlation ids on kernels and on their launch calls",
        )
    matched = sum(c["matched"] for _, c in rows)
    early = sum(c["early"] for _, c in rows)
    worst_rank, worst = max(((r, c["worst_lead_ms"]) for r, c in rows), key=lambda x: np.nan_to_num(x[1], nan=-np.inf))
    evidence: Figures = {
        "kernels_matched": int(matched),
        "kernels_before_launch": int(early),
        "worst_lead_ms": worst,
        "worst_rank": worst_rank,
        "tolerance_ms": tol_ms,
    }
    if early > EARLY_SHARE * matched:
        return _finding(
            "clock_host_device",
            "found",
            f"host and device clocks disagree: {int(early)} of {int(matched)} kernels start before their launch call "
            f"(by up to {worst:.3f} ms, rank {worst_rank}); host/device attribution is {UNRESOLVED}",
            evidence,
            f"a kernel cannot start before its launch; tolerance {tol_ms:g} ms",
        )
    return _finding(
        "clock_host_device",
        "not_found",
        f"host and device timelines agree: {int(matched) - int(early)} of {int(matched)} kernels start after their "
        f"launch call "
        f"(tolerance {tol_ms:g} ms)",
        evidence,
        "checked on kernels matched to their launch call by correlation id",
    )


def across_ranks(ranks: Sequence[RankSummary], kept_steps: Sequence[float]) -> Finding:
    tol_ms = LAUNCH_TOLERANCE_NS / 1e6
    if len(ranks) < 2:
        return _finding("clock_ranks", "undecided", "one rank: there are no clocks to compare across ranks")
    per_step: dict[tuple[float, str], list[tuple[int, int]]] = {}
    kept = set(float(s) for s in kept_steps)
    for r in ranks:
        fc = r.first_collectives
        if not fc:
            continue
        for number, start, end, name in zip(r.windows.numbers, fc["start"], fc["end"], fc["name"]):
            if start >= 0 and float(number) in kept:
                per_step.setdefault((float(number), str(name)), []).append((int(start), int(end)))
    offsets, skews, durations = [], [], []
    for pairs in per_step.values():
        if len(pairs) < 2:
            continue
        starts = np.array([p[0] for p in pairs])
        ends = np.array([p[1] for p in pairs])
        offsets.append((starts.max() - ends.min()) / 1e6)
        skews.append((starts.max() - starts.min()) / 1e6)
        durations.append(float(np.median(ends - starts)) / 1e6)
    if not offsets:
        return _finding(
            "clock_ranks",
            "undecided",
            "no step has the same group collective on two ranks: the ranks' clocks cannot be compared",
            caveat="the check needs the same all-reduce, all-gather, reduce-scatter or broadcast on several ranks; "
            "point-to-point kernels (send/recv) are not used",
        )
    worst = float(max(offsets))
    evidence: Figures = {
        "steps_compared": len(offsets),
        "min_clock_offset_ms": max(worst, 0.0),
        "collective_start_skew_ms_median": float(np.median(skews)),
        "collective_ms_median": float(np.median(durations)),
        "tolerance_ms": tol_ms,
    }
    if worst > tol_ms:
        return _finding(
            "clock_ranks",
            "found",
            f"the ranks' clocks disagree by at least {worst:.3f} ms: a collective starts on one rank after it ended on "
            f"another; "
            f"cross-rank attribution is {UNRESOLVED}",
            evidence,
            "a synchronous collective cannot end on one rank before every rank has started it",
        )
    return _finding(
        "clock_ranks",
        "not_found",
        f"the ranks' clocks are consistent: every step's first collective overlaps on all ranks (start skew median "
        f"{evidence['collective_start_skew_ms_median']:.3f} ms against a median collective of "
        f"{evidence['collective_ms_median']:.3f} ms)",
        evidence,
        "consistent is not aligned: clocks that agree within the collective's overlap may still be offset by less",
    )


def unresolved(finding: Finding, clock: Finding) -> Finding:
    """``finding`` made undecided because ``clock`` found the clocks it relies on disagree."""
    lead = clock.evidence.get("worst_lead_ms", clock.evidence.get("min_clock_offset_ms"))
    evidence: Figures = {"clock_check": clock.check, "measured_skew_ms": lead}
    what = "host and device clocks disagree" if clock.check == "clock_host_device" else "the ranks' clocks disagree"
    return _finding(
        finding.check,
        "undecided",
        f"{UNRESOLVED}: {what} by {lead:.3f} ms, so this attribution is not made",
        evidence,
        f"see {clock.check}; {finding.caveat}" if finding.caveat else f"see {clock.check}",
    )
