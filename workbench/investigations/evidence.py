"""One evidence syntax, ``KIND=VALUE``, for pinned observations and hypothesis decisions,
in the CLI (``wb observe --evidence``, ``wb hypothesis status --evidence``) and the TUI
dialogs alike. A wrong form is refused with one line that lists the accepted kinds (and,
for the old ``kind:value`` form, the exact ``kind=value`` to write instead).

- Observations: ``run=ID|LABEL`` (checked to exist when a store is given),
  ``comparison=N``, ``metric=NAME``, ``window=KIND``, ``value=TEXT``, or another
  ``KIND=TEXT`` of your own.
- Hypothesis decisions: ``plan=ID|NAME`` (a rerun plan; also ``rerun_plan=``),
  ``comparison=N`` (a stored comparison), ``rerun_comparison=N``, ``bisection=ID|NAME``,
  ``diagnosis=N`` (an observation pinned by ``wb diagnose --pin``). Each must belong to
  the hypothesis's investigation and be able to decide it (``hypotheses.check_links``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from store.records import decimal_id
from workbench.bundle.canonical import nfc
from workbench.errors import UsageError
from workbench.investigations.common import parse_id, resolve_runs

if TYPE_CHECKING:
    from store.api import Store

OBSERVATION_KINDS = "run=ID|LABEL, comparison=N, metric=NAME, window=KIND, value=TEXT (or another KIND=TEXT)"
DECISION_KINDS = (
    "plan=ID|NAME (or rerun_plan=ID|NAME), comparison=N, rerun_comparison=N, bisection=ID|NAME, diagnosis=N"
)
# What a decision's kind is stored as; "-" and "_" are the same, case does not count.
_DECISION = {
    "plan": "rerun_plan",
    "rerun_plan": "rerun_plan",
    "comparison": "comparison",
    "rerun_comparison": "rerun_comparison",
    "bisection": "bisection",
    "diagnosis": "diagnosis",
}
_BY_NAME = ("rerun_plan", "bisection")  # kinds that can be named by their name


def split_items(text: str) -> list[str]:
    """A dialog's one-line evidence ("plan=3, comparison=2") as items."""
    return [part.strip() for part in str(text).split(",") if part.strip()]


def _kind_value(item: Any, kinds: str) -> tuple[str, str]:
    text = nfc(str(item)).strip()
    kind, sep, value = text.partition("=")
    kind, value = kind.strip(), value.strip()
    if sep and kind and value:
        return kind, value
    old_kind, colon, old_value = text.partition(":")
    hint = ""
    if colon and old_kind.strip() and old_value.strip() and "=" not in text:
        hint = f" (write {old_kind.strip()}={old_value.strip()})"
    elif text.isdigit():
        hint = f" (a plan? write plan={text})" if kinds == DECISION_KINDS else f" (a run? write run={text})"
    raise UsageError(f"evidence {text!r} is not KIND=VALUE{hint}; accepted kinds: {kinds}")


def parse_observation_evidence(items: Iterable[str], store: "Store | None" = None) -> list[dict[str, object]]:
    """``KIND=VALUE`` items of an observation; runs resolve to ids when a store is given."""
    out = []
    for item in items:
        kind, value = _kind_value(item, OBSERVATION_KINDS)
        entry: dict[str, object] = {"kind": kind, "value": value}
        if kind == "run" and store is not None:
            entry = {"kind": "run", "id": resolve_runs(store, [value])[0]}
        elif kind == "comparison":
            entry = {"kind": "comparison", "id": parse_id(value, "comparison")}
        out.append(entry)
    return out


def parse_decision_evidence(items: Iterable[str]) -> list[dict[str, object]]:
    """``KIND=VALUE`` items that decide a hypothesis: a rerun plan, a comparison."""
    out = []
    for item in items:
        kind, value = _kind_value(item, DECISION_KINDS)
        stored = _DECISION.get(kind.casefold().replace("-", "_"))
        if stored is None:
            raise UsageError(
                f"evidence {str(item).strip()!r}: {kind!r} cannot decide a hypothesis; accepted kinds: {DECISION_KINDS}"
            )
        if (as_id := decimal_id(value)) is not None:
            out.append({"kind": stored, "id": as_id})
        elif stored in _BY_NAME:
            out.append({"kind": stored, "name": value})
        else:
            raise UsageError(f"evidence {str(item).strip()!r}: {kind} needs a number; accepted kinds: {DECISION_KINDS}")
    return out
