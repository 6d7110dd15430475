"""The one contract every stage keeps: comparability, work equivalence and guardrails.

``wb compare`` and ``wb inspect`` (``workbench.compare.compare``), ``wb rerun report``
(``workbench.rerun.report``), every ``wb bisect`` step (which is a rerun report), the
TUI (which calls ``compare``) and ``--recompute`` reach a verdict only through these
functions, so no stage can give a verdict that ``wb compare`` would refuse:

- ``pair``: every dimension ``same``, ``changed``, ``different``, ``mixed`` or ``unknown``;
  a must-match difference other than the declared change, or a side that disagrees with
  itself on a must-match or the declared dimension, refuses the pair (``Comparability``);
- ``control_mismatch``: why the A′ runs are not the baseline again (``None`` when they are);
- ``work``: whether the valid work per item is the same; where it differs, effects are
  on throughput (work / time), never on time alone;
- ``guardrails`` and ``withhold``: the guardrails judged, and a positive verdict withheld
  while a guardrail the user stated cannot be judged;
- ``as_declared``: a run as a comparison saw it, with the ``wb declare`` values that were in
  force for it (a comparison's ``declarations``), so that ``--recompute`` judges the same pair.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import msgspec

from lenses import builtin_lens
from lenses.base import Lens
from store.records import Dimension, RunRecord
from workbench.compare import comparability, delta
from workbench.compare.comparability import Change, Comparability, SideValue, dimension_values, run_value, unpinned
from workbench.compare.results import Guardrail, Primary, Work
from workbench.stats.verdicts import Verdict

__all__ = [
    "Comparability",
    "as_declared",
    "SideValue",
    "control_mismatch",
    "dimension_values",
    "guardrails",
    "pair",
    "run_value",
    "session_pair",
    "stated_guardrails",
    "unpinned",
    "withhold",
    "work",
]


def pair(
    lens: Lens,
    baseline: Sequence[RunRecord],
    candidate: Sequence[RunRecord],
    changes: Mapping[str, Change] | None = None,
    accepts: Mapping[str, str] | None = None,
) -> Comparability:
    """Comparability of baseline against candidate (``refusal`` set when refused)."""
    return comparability.check(lens, baseline, candidate, dict(changes or {}), dict(accepts or {}))


def as_declared(record: RunRecord, declarations: Iterable[tuple[str, object, int]]) -> RunRecord:
    """``record`` with exactly the ``wb declare`` values ``(dimension, value, declaration id)``
    a comparison relied on in place of those it holds now: one declared later, or changed
    since, was not in force for that comparison. Values the files carry (and ``--dim`` at
    import, which has no history id) stay as they are."""
    kept = {name: dim for name, dim in record.dimensions.items() if dim.declaration is None}
    declared = {name: Dimension(value, "declared", declaration) for name, value, declaration in declarations}
    return replace(record, dimensions={**kept, **declared})


# Why a must-match dimension that no capture of either arm states does not refuse a rerun.
IN_SESSION = "not in the captures of either arm: A, B and A′ ran from one plan, on one machine, in one session"


def session_pair(
    lens: Lens,
    baseline: Sequence[RunRecord],
    candidate: Sequence[RunRecord],
    changes: Mapping[str, Change] | None = None,
    accepts: Mapping[str, str] | None = None,
) -> tuple[Comparability, dict[str, str]]:
    """``pair`` for the arms of one rerun session: a must-match dimension missing from
    every capture of both arms is accepted as the session's (``IN_SESSION``: the plan ran
    them on one machine, which preflight checked); a difference, a value on one arm only,
    an unpinned identity or an arm that disagrees with itself still refuses.
    Returns the check and the acceptances it used (for the A′ check too)."""
    accepts = dict(accepts or {})
    first = pair(lens, baseline, candidate, changes, accepts)
    for row in first.rows:
        b, c = row.baseline, row.candidate
        if (
            row.blocks
            and row.state == "unknown"
            and b.value is None
            and c.value is None
            and not (b.unpinned or c.unpinned)
            and not (b.problems or c.problems)
        ):
            accepts.setdefault(row.name, IN_SESSION)
    return pair(lens, baseline, candidate, changes, accepts), accepts


def control_mismatch(
    lens: Lens, baseline: Sequence[RunRecord], control: Sequence[RunRecord], accepts: Mapping[str, str] | None = None
) -> tuple[str, str] | None:
    """``(dimension, why)`` when the control runs are not baseline-again runs: a dimension
    known on both and different (the pair's declared change included: a control shows no
    change), a must-match one unknown, or control runs that disagree with each other."""
    check = comparability.check(lens, baseline, control, None, dict(accepts or {}))
    for row in sorted(check.rows, key=lambda r: not r.disagreeing):
        if row.blocks or (row.state in ("different", "mixed") and row.accepted_why is None):
            what = "is unknown" if row.state == "unknown" else "differs"
            why = f"{row.name} {what} (baseline {_show(row.baseline.value)}, control {_show(row.candidate.value)})"
            if row.disagreeing:
                why = f"{row.name}: {row.disagreeing.replace('candidate', 'control')}"
            return row.name, why
    return None


def work(
    lens: Lens, baseline: Sequence[RunRecord], candidate: Sequence[RunRecord], primary: Primary | None = None
) -> Work:
    """Each side's work; ``same`` is False when the valid work per item differs (then no
    timing-only effect holds), ``None`` when the data cannot say."""
    return delta.work(lens, baseline, candidate, primary)


def guardrails(
    lens: Lens,
    baseline: Sequence[RunRecord],
    candidate: Sequence[RunRecord],
    control: Sequence[RunRecord] | None = None,
) -> list[Guardrail]:
    """Every guardrail of the lens (its own, a team's extension file's, the investigation's
    frame), judged on each side's mean. A guardrail is never "held" over a population that
    failed: a side with a run whose every request failed (``Lens.population``) leaves it
    unknown, with the run named (0 % vs 0 % errors of nothing is not a held guardrail)."""
    judged = delta.guardrails(lens, baseline, candidate, control)
    empty = failed_population(lens, baseline, candidate)
    if empty is None:
        return judged
    note = f"{empty}: there is no population to hold a guardrail over"
    return [msgspec.structs.replace(g, state="unknown", note=note) if g.state == "held" else g for g in judged]


def failed_population(lens: Lens, baseline: Sequence[RunRecord], candidate: Sequence[RunRecord]) -> str | None:
    """Why a side has no valid population (a run whose every item failed), or ``None``."""
    for side, runs in (("baseline", baseline), ("candidate", candidate)):
        for run in runs:
            population = lens.population(run)
            if population is not None and population[0] > 0 and population[1] == 0:
                ref = run.id if run.id is not None else repr(run.label)
                return (
                    f"every one of the {population[0]:,} {lens.item_name} of {side} run {ref} failed or returned "
                    f"nothing"
                )
    return None


def stated_guardrails(lens: Lens) -> set[str]:
    """The names of the guardrails a person stated (frame, extension file, plan), as
    against the lens's built-in defaults: an unknown value of one of them withholds a
    positive verdict."""
    try:
        builtin = set(builtin_lens(lens.name).guardrails)
    except KeyError:
        builtin = set()
    return {g.name for g in lens.guardrails if g not in builtin}


def withhold(verdict: Verdict | str | None, unknown: Sequence[str]) -> tuple[Verdict | str | None, str]:
    """A positive verdict is withheld while a stated guardrail is unknown: IMPROVEMENT
    becomes FASTER_UNRESOLVED, with the missing guardrails named (``""``: nothing withheld)."""
    if verdict != Verdict.IMPROVEMENT or not unknown:
        return verdict, ""
    names = ", ".join(unknown)
    return Verdict.FASTER_UNRESOLVED, (
        f"IMPROVEMENT withheld: guardrail {names} cannot be judged (no value on a side); "
        "faster, but not shown to keep the guardrail"
    )


def unknown_stated(lens: Lens, judged: Sequence[Guardrail]) -> list[str]:
    """The stated guardrails (``stated_guardrails``) whose value is unknown."""
    stated = stated_guardrails(lens)
    return [g.name for g in judged if g.state == "unknown" and g.name in stated]


def _show(value: object) -> str:
    return "unknown" if value is None else str(value)


# An action's expected effect on its metric (workbench.bundle.action_status).
DIRECTIONS = ("decrease", "increase", "recovery")
UNRESOLVED = (Verdict.INCONCLUSIVE, Verdict.SLOWER_UNRESOLVED, Verdict.FASTER_UNRESOLVED)


def expected_effect(direction: str, verdict: Verdict | str | None, higher_is_better: bool) -> tuple[str, str]:
    """Whether a verdict (B against A, oriented to better/worse) shows the effect an action
    expected: ``("met" | "underpowered" | "wrong direction", why)``. ``decrease`` and
    ``increase`` are the metric's own direction; ``recovery`` is B back within the
    equivalence band of A (the pre-incident baseline), or better."""
    if direction not in DIRECTIONS:
        raise ValueError(f"expected direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
    if verdict is None or verdict in UNRESOLVED:
        return "underpowered", f"the verdict is {verdict or 'missing'}: the data cannot resolve the effect"
    if direction == "recovery":
        if verdict in (Verdict.EQUIVALENT, Verdict.IMPROVEMENT):
            return "met", f"{verdict}: the metric is back within the band of the baseline"
        return "wrong direction", f"{verdict}: the metric is not back within the band of the baseline"
    better = "increase" if higher_is_better else "decrease"
    wanted = Verdict.IMPROVEMENT if direction == better else Verdict.REGRESSION
    if verdict == wanted:
        return "met", f"{verdict}: the metric moved as expected ({direction})"
    if verdict == Verdict.EQUIVALENT:
        return "wrong direction", f"EQUIVALENT: the metric held within the band; expected a {direction}"
    return "wrong direction", f"{verdict}: the metric moved the other way; expected a {direction}"
