"""An action's decisions and verifications are inputs, checked on the way in and on recheck:
one validator for the door (``wb action approve/reject/verify``, the TUI, the server),
bundle import and ``wb evidence verify --recompute``.

- A decision's word is one of :data:`DECISION_WORDS`, exactly (a msgspec ``Literal``): ``yes``,
  ``Approved`` or ``approve`` followed by an invisible character are not words of it.
- Its actor (``by``) and reason (``why``), and a verification's actor, say something once
  whitespace, controls and invisible characters are removed (``workbench.textsafe.meaningful``:
  one invisible set for the whole project).
- Times are ISO 8601 with a zone and keep their order: the action is proposed no later than
  any decision on it, decisions follow one another, and a verification comes no earlier than
  the approval it verifies (the latest decision before it must be an approval).

A history that breaks any of these is impossible: the door refuses the record that would
make it, import refuses the bundle, and ``--recompute`` derives no status from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

import msgspec

from workbench.textsafe import clean, meaningful

DecisionWord = Literal["approved", "rejected"]
DECISION_WORDS: tuple[DecisionWord, ...] = ("approved", "rejected")


class DecisionInput(msgspec.Struct, frozen=True):
    """One approval or rejection as it is recorded (and carried in a bundle)."""

    decision: DecisionWord
    by: str
    why: str
    at: str


class VerificationInput(msgspec.Struct, frozen=True):
    """A verification tied to an action: who and when (what it points at is read elsewhere)."""

    by: str
    at: str


class Problem(msgspec.Struct, frozen=True):
    """Why a history is impossible, and where (``decisions[1].by``)."""

    where: str
    why: str

    def __str__(self) -> str:
        return f"{self.where}: {self.why}"


def timestamp(text: object) -> datetime | None:
    """``text`` as an aware time, or ``None`` when it is not ISO 8601 with a zone."""
    if not isinstance(text, str):
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


def _says(value: str, where: str) -> list[Problem]:
    if meaningful(value):
        return []
    return [Problem(where, f"says nothing ({clean(value)!r}, once blanks and invisible characters are gone)")]


def _decoded(item: object, kind: type[msgspec.Struct], where: str) -> tuple[Any, list[Problem]]:
    try:
        return msgspec.convert(item, kind), []
    except msgspec.ValidationError as exc:
        text = str(exc)
        path = text.rpartition(" - at `$")[2].rstrip("`") if " - at `$" in text else ""
        return None, [Problem(f"{where}{path}", text.partition(" - at `$")[0])]


def history_problems(
    proposed_at: object, decisions: Sequence[object], verifications: Sequence[object] = ()
) -> list[Problem]:
    """Every reason the history (``decisions`` then ``verifications``, each as recorded) is
    impossible; empty when it holds. Paths are relative to the action (``decisions[0].why``)."""
    out: list[Problem] = []
    start = timestamp(proposed_at)
    if start is None:
        out.append(Problem("created_at", f"{clean(str(proposed_at))[:40]!r} is not a time with a zone"))
    times: list[tuple[datetime, str]] = []  # (when, decision word) in the order written
    last = start
    for i, item in enumerate(decisions):
        where = f"decisions[{i}]"
        decision, wrong = _decoded(item, DecisionInput, where)
        out += wrong
        if decision is None:
            continue
        out += _says(decision.by, f"{where}.by")
        out += _says(decision.why, f"{where}.why")
        when = timestamp(decision.at)
        if when is None:
            out.append(Problem(f"{where}.at", f"{clean(decision.at)[:40]!r} is not a time with a zone"))
            continue
        if last is not None and when < last:
            before = "the decision before it" if times else "the proposal"
            out.append(Problem(f"{where}.at", f"{decision.at} is before {before} ({last.isoformat()})"))
        times.append((when, decision.decision))
        last = max(last, when) if last is not None else when
    for i, item in enumerate(verifications):
        where = f"verifications[{i}]"
        verification, wrong = _decoded(item, VerificationInput, where)
        out += wrong
        if verification is None:
            continue
        out += _says(verification.by, f"{where}.by")
        when = timestamp(verification.at)
        if when is None:
            out.append(Problem(f"{where}.at", f"{clean(verification.at)[:40]!r} is not a time with a zone"))
            continue
        out += _verified_when_approved(times, when, verification.at, where)
    return out


def _verified_when_approved(times: list[tuple[datetime, str]], when: datetime, at: str, where: str) -> list[Problem]:
    """A verification at ``when`` needs an approval standing then: one at or before it that no
    later decision had replaced (times are to the second: a tie may fall either side)."""
    for k, (decided, word) in enumerate(times):
        replaced = k + 1 < len(times) and times[k + 1][0] < when
        if word == "approved" and decided <= when and not replaced:
            return []
    approvals = [decided for decided, word in times if word == "approved"]
    if approvals and all(when < decided for decided in approvals):
        return [Problem(f"{where}.at", f"{at} is before the approval it verifies ({approvals[0].isoformat()})")]
    return [Problem(where, "the action was not approved when it was verified")]
