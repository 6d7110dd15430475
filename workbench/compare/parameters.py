"""What a stored comparison was asked: the one decoder of its ``parameters``.

A comparison made inside an investigation is stored with the arguments the compare
engine was called with, as JSON: ``{"lens", "changes": {dim: [from, to] or []},
"accepts": {dim: why}[, "control": [run ids]][, "guardrails": [lines]]}`` (``control`` and
``guardrails`` only when there are some, so results stored before they existed keep their
bytes; ``guardrails`` are the investigation's frame guardrails, ``METRIC RULE LIMIT``). Bundles carry the same
object in ``recipe.comparisons[].parameters``. The investigation workflow writes it,
``wb evidence verify --recompute`` reads it back through :class:`ComparisonParameters`;
the TUI's Inspect (``tui/services.inspect_text``) should too:
``ComparisonParameters.from_json(comp["parameters"]).engine_arguments()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NotRequired, TypedDict

import msgspec

from lenses import get_lens
from workbench.vocabulary import record_json

if TYPE_CHECKING:
    from lenses.base import GuardrailSpec

Value = str | int | float | bool | None


class EngineArguments(TypedDict):
    """Keyword arguments of ``workbench.compare.compare``/``inspect``."""

    lens: str | None
    changes: dict[str, tuple[Value, ...]]
    accepts: dict[str, str]
    guardrails: NotRequired[tuple["GuardrailSpec", ...]]


class ComparisonParameters(msgspec.Struct, frozen=True, omit_defaults=True):
    """The compare engine's arguments for one stored comparison (frozen: a record).

    ``control``: the A′ runs, by store id; in an imported (read-only) investigation by
    the bundle's run refs (``"run/6"``); left out of the JSON when there are none.
    """

    lens: str | None
    changes: dict[str, tuple[Value, ...]]
    accepts: dict[str, str]
    control: tuple[int | str, ...] = ()
    guardrails: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, doc: Mapping[str, object] | None) -> "ComparisonParameters":
        """Decode stored or bundled parameters (a missing key: none given);
        ``msgspec.ValidationError`` names the place (``$.accepts[...]``) when the
        document has another shape."""
        return msgspec.convert({"lens": None, "changes": {}, "accepts": {}, **dict(doc or {})}, cls)

    def to_json(self) -> dict[str, object]:
        """The stored form (the inverse of :meth:`from_json`)."""
        return record_json(self)

    def engine_arguments(self) -> "EngineArguments":
        """Keyword arguments of ``workbench.compare.compare``/``inspect`` (the control
        runs are loaded by the caller: they are ids here, records there). Frame
        guardrails are read in the lens grammar (``ValueError`` names a bad line)."""
        out: EngineArguments = {
            "lens": self.lens,
            "changes": {k: tuple(v) for k, v in self.changes.items()},
            "accepts": dict(self.accepts),
        }
        if self.guardrails:
            # lenses.base: numpy, only for comparisons with frame guardrails
            from lenses.extensions import parse_guardrail

            lens = get_lens(self.lens or "")
            out["guardrails"] = tuple(parse_guardrail(g, lens) for g in self.guardrails)
        return out
