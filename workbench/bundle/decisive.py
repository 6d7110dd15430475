"""What evidence can decide a hypothesis (supported or refuted): one rule for the store's
``wb hypothesis status`` and for a bundle's ``verify --recompute``.

A comparison decides only when it was comparable and its primary effect has a verdict
that says something (INCONCLUSIVE does not); a rerun comparison only when its execution
completed and the analysis gave such a verdict; a plan through such a rerun comparison
of its own; a bisection once it has a result. Each function returns why the record
cannot decide, or ``None`` when it can.
"""

from __future__ import annotations

from collections.abc import Iterable

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
