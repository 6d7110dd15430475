"""Run-level effects from the statistics engine (unpaired: baseline and candidate runs
are separate sets). Requests and steps inside a run are never samples of an interval:
each run contributes one value."""

from __future__ import annotations

import math
from typing import Sequence

import msgspec
from msgspec import UNSET

from workbench.compare.results import Effect, RunCounts, no_effect
from workbench.stats import analyze  # scipy loads inside, when an effect is computed
from workbench.stats.verdicts import MOVED, Verdict

# A phase or metric "moved" when its interval is clear of 1 (MOVED verdicts), and stayed
# when the statistics call it equivalent within the band.
STAYED = (Verdict.EQUIVALENT,)
# With one run a side there is no uncertainty; a descriptive change beyond this share
# of the baseline is reported as a change "in these runs", never as a verdict.
DESCRIPTIVE_BAND = 0.02


def _known(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def run_effect(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    lower_is_better: bool = True,
    control: Sequence[float] | None = None,
) -> Effect:
    """The statistics engine's analysis of one value per run, or why there is none.

    Always has ``verdict`` (``None`` when no verdict can be given) and ``runs``.
    ``control``: one value per A/A control run (baseline again): the noise floor, with
    the same guards as a rerun's A′ arm (UNSTABLE withholds the verdict, UNDERPOWERED
    says the runs cannot resolve δ). Fewer than two known control values: not used,
    and ``control_note`` says why.
    """
    b, c = _known(baseline), _known(candidate)
    a_prime = None
    control_note = ""
    if control is not None:
        a_prime = _known(control)
        runs = RunCounts(baseline=len(b), candidate=len(c), control=len(a_prime))
        if len(a_prime) < 2 or min(a_prime) <= 0:
            control_note = (
                f"the A/A control has {len(a_prime)} run(s) with a positive value here: "
                "two or more are needed for a noise floor"
            )
            a_prime = None
    else:
        runs = RunCounts(baseline=len(b), candidate=len(c))
    if not b or not c:
        return no_effect("unknown on a side: the effect cannot be given", runs)
    if len(b) < 2 or len(c) < 2:
        return no_effect("one run a side: no uncertainty can be given (two or more runs a side are needed)", runs)
    if min(b + c) <= 0:
        return no_effect("a value is zero or negative: no ratio effect", runs)
    try:
        analysis = analyze(b, c, a_prime, paired=False, lower_is_better=lower_is_better)
    except ValueError as exc:
        return no_effect(f"no effect: {exc}", runs)
    doc = {**analysis.to_json(), "runs": runs, **({"control_note": control_note} if control_note else {})}
    return msgspec.convert(doc, Effect)


def movement(effect: Effect | None, baseline: float | None, candidate: float | None) -> str:
    """``moved``, ``stayed`` or ``unresolved`` for observations: from the verdict when
    there is one; with one run a side, descriptively from the band (said in the text)."""
    if baseline is None or candidate is None or not (math.isfinite(baseline) and math.isfinite(candidate)):
        return "unresolved"
    verdict = effect.verdict if effect is not None else None
    if verdict in MOVED:
        return "moved"
    if verdict in STAYED:
        return "stayed"
    if verdict == Verdict.INCONCLUSIVE and effect is not None and effect.ratio:
        band = DESCRIPTIVE_BAND if effect.delta is UNSET else effect.delta
        if abs(effect.ratio - 1.0) <= band:
            # The interval holds 1 and the estimate sits inside the band: no change beyond
            # noise (not a proof of equivalence; the effect says which).
            return "stayed"
    if verdict is None:  # one run a side, or a zero value: describe these runs only
        scale = max(abs(baseline), abs(candidate))
        return "moved" if abs(candidate - baseline) > DESCRIPTIVE_BAND * scale else "stayed"
    return "unresolved"


def single_run(effect: Effect | None) -> bool:
    return effect is None or effect.single_run
