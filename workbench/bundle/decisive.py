"""What evidence can decide a hypothesis (supported or refuted): one rule for the store's
``wb hypothesis status`` and for a bundle's ``verify --recompute``.

A comparison decides only when it was comparable and its primary effect has a verdict
that says something (INCONCLUSIVE does not); a rerun comparison only when its execution
completed and the analysis gave such a verdict; a plan through such a rerun comparison
of its own; a bisection once it has a result. Each function returns why the record
cannot decide, or ``None`` when it can.

And a hypothesis is decided by its own test (:class:`Origin`): the evidence is of the kind
its test names (``not_its_test``), recorded after the hypothesis was written
(``recorded_before``: by the ids that existed then, exact where times are to the second),
and not what the observations it was derived from rest on (``same_as_origin``: the same
comparison or the same figures, the same rerun).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

SILENT_VERDICTS = ("INCONCLUSIVE",)  # a verdict that decides nothing


def comparison_cannot_decide(ref: str, comparable: bool, verdict: str | None) -> str | None:
    if not comparable:
        return f"{ref} was refused (not comparable): a refusal has no effect to decide with"
    if verdict is None:
        return f"{ref} has no verdict on its primary effect (one run a side gives no uncertainty)"
    if verdict in SILENT_VERDICTS:
        return f"{ref} is {verdict}: it decides nothing"
    return None


def rerun_cannot_decide(ref: str, verdict: str | None, execution_status: str | None = "complete") -> str | None:
    if execution_status is not None and execution_status != "complete":
        return f"{ref}: its execution is {execution_status}, not complete"
    if verdict is None:
        return f"{ref} has no verdict"
    if verdict in SILENT_VERDICTS:
        return f"{ref} is {verdict}: it decides nothing"
    return None


def plan_cannot_decide(ref: str, rerun_reasons: Iterable[str | None]) -> str | None:
    """A plan decides through one of its rerun comparisons (``None`` in ``rerun_reasons``)."""
    reasons = list(rerun_reasons)
    if not reasons:
        return f"{ref} has not been run (no completed execution with a verdict)"
    if any(r is None for r in reasons):
        return None
    return f"{ref} has no completed execution with a verdict ({reasons[-1]})"


def bisection_cannot_decide(ref: str, has_result: bool) -> str | None:
    return None if has_result else f"{ref} has no result yet"


# -- a hypothesis is decided by its own test ------------------------------------------------

# The kind of evidence each kind of test is (``TestKind``): a rerun hypothesis is decided by a
# rerun execution (its comparison, or its plan through one) or a bisection's reruns.
DECIDED_BY: dict[str, tuple[str, ...]] = {
    "rerun": ("rerun_comparison", "rerun_plan", "bisection"),
    "bisection": ("bisection", "rerun_comparison"),
    "comparison": ("comparison",),
    "diagnosis": ("diagnosis",),
}
TEST_KINDS = tuple(DECIDED_BY)
# evidence kind -> the table whose ids say when it was recorded (``Origin.before``)
RECORDED_IN = {
    "comparison": "comparison",
    "rerun_comparison": "rerun_comparison",
    "bisection": "bisection",
    "diagnosis": "observation",
}
TABLES = ("comparison", "rerun_comparison", "bisection", "observation")


@dataclass(frozen=True)
class Origin:
    """Where a hypothesis came from: the kind of its test, the evidence that existed when it was
    written (``before``: table -> highest id; ``None``: not known), and what the observations
    it was derived from (those pinned before it) rest on: comparisons, their run sets
    (figures), rerun comparisons and their executions."""

    test_kind: str | None
    before: Mapping[str, int] | None
    comparisons: frozenset[int] = frozenset()
    figures: frozenset[tuple[tuple[str, ...], tuple[str, ...]]] = frozenset()
    reruns: frozenset[int] = frozenset()
    executions: frozenset[int] = frozenset()


def figures_of(baseline: Iterable[object], candidate: Iterable[object]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A comparison's figures: its run sets, in one form for store ids and bundle refs."""
    key = lambda runs: tuple(sorted(str(r).removeprefix("run/") for r in runs))  # noqa: E731
    return key(baseline), key(candidate)


def not_its_test(test_kind: str | None, kind: str) -> str | None:
    """Why evidence of ``kind`` is not the test the hypothesis names (``None``: it is, or the
    hypothesis names no kind: written before wb asked)."""
    if test_kind is None or kind in DECIDED_BY.get(test_kind, ()):
        return None
    wanted = " or ".join(DECIDED_BY.get(test_kind, ("?",)))
    return f"its test is a {test_kind}: it is decided by {wanted} evidence, not a {kind}"


def recorded_before(origin: Origin, kind: str, ref: str, record_id: int) -> str | None:
    """Why the record (``kind``, its id) cannot be evidence recorded after the hypothesis."""
    table = RECORDED_IN.get(kind)
    if table is None:
        return None
    if origin.before is None:
        return f"{ref}: it is not known what existed when the hypothesis was written, so not whether this came after"
    if record_id <= int(origin.before.get(table, 0)):
        return f"{ref} was recorded before the hypothesis: evidence that decides it is recorded after it"
    return None


def same_as_origin(
    origin: Origin,
    kind: str,
    ref: str,
    record_id: int,
    *,
    figures: tuple[tuple[str, ...], tuple[str, ...]] | None = None,
    execution: int | None = None,
) -> str | None:
    """Why the record is the evidence of the observations the hypothesis was derived from
    (the same comparison or its figures, the same rerun comparison or execution)."""
    if kind == "comparison" and (
        record_id in origin.comparisons or (figures is not None and figures in origin.figures)
    ):
        return (
            f"{ref} is what the observation it was derived from rests on (the same comparison or figures), not its test"
        )
    if kind == "rerun_comparison" and (
        record_id in origin.reruns or (execution is not None and execution in origin.executions)
    ):
        return f"{ref} is what the observation it was derived from rests on (the same rerun), not its test"
    return None
