"""What a stored comparison was asked: the one decoder of its ``parameters``.

A comparison made inside an investigation is stored with the arguments the compare
engine was called with, as JSON: ``{"lens", "changes": {dim: [from, to] or []},
"accepts": {dim: why}[, "control": [run ids]]}`` (``control`` only when there is one, so
results stored before the A/A control existed keep their bytes). Bundles carry the same
object in ``recipe.comparisons[].parameters``. The investigation workflow writes it,
``wb evidence verify --recompute`` reads it back through :class:`ComparisonParameters`;
the TUI's Inspect (``tui/services.inspect_text``) should too:
``ComparisonParameters.from_json(comp["parameters"]).engine_arguments()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

import msgspec

from workbench.compare.fmt import record_json

Value = str | int | float | bool | None


class EngineArguments(TypedDict):
    """Keyword arguments of ``workbench.compare.compare``/``inspect``."""

    lens: str | None
    changes: dict[str, tuple[Value, ...]]
    accepts: dict[str, str]


class ComparisonParameters(msgspec.Struct, frozen=True, omit_defaults=True):
    """The compare engine's arguments for one stored comparison (frozen: a record).

    ``control``: the A′ runs, by store id; in an imported (read-only) investigation by
    the bundle's run refs (``"run/6"``); left out of the JSON when there are none.
    """

    lens: str | None
    changes: dict[str, tuple[Value, ...]]
    accepts: dict[str, str]
    control: tuple[int | str, ...] = ()

    @classmethod
    def from_json(cls, doc: Mapping[str, object] | None) -> "ComparisonParameters":
        """Decode stored or bundled parameters (a missing key: none given);
        ``msgspec.ValidationError`` names the place (``$.accepts[...]``) when the
        document has another shape."""
        return msgspec.convert({"lens": None, "changes": {}, "accepts": {}, **dict(doc or {})}, cls)

    def to_json(self) -> dict[str, object]:
        """The stored form (the inverse of :meth:`from_json`)."""
        return record_json(self)  # type: ignore[no-any-return]

    def engine_arguments(self) -> "EngineArguments":
        """Keyword arguments of ``workbench.compare.compare``/``inspect`` (the control
        runs are loaded by the caller: they are ids here, records there)."""
        return {
            "lens": self.lens,
            "changes": {k: tuple(v) for k, v in self.changes.items()},
            "accepts": dict(self.accepts),
        }
