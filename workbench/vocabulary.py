"""The words every layer shares: the one frozen record base with its JSON round trip, what a run
reference, a side of a comparison and a change under test are, and the strict-JSON helpers.

Bottom layer, beside ``errors.py``: the standard library and msgspec only, so the recorder (inside
training jobs), the store-free paths and every package's records can use it.

Strict JSON has no word for nan, ±inf or a numpy scalar: :func:`jsonable` writes nan and ±inf as
``null`` with the reason beside the key (``"x": null, "x_null_reason": "..."``: unknown, never zero),
and :func:`from_jsonable` reads them back, so a decoded document encodes to the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, ClassVar, Literal, Self, TypeAlias, Union

import msgspec

# Beside a key whose value was not finite: ``"x": null, "x_null_reason": "..."``. In a list,
# the reason sits beside the list's key, by index (``{"3": "..."}``).
NULL_REASON = "_null_reason"
_NONFINITE = {
    "nan": "not a number (NaN): unknown",
    "inf": "+infinity: not a finite number",
    "-inf": "-infinity: not a finite number",
}
_FROM_REASON = {text: float(key) for key, text in _NONFINITE.items()}

# A run as a result names it: a store id, or a label or a bundle's ref ("run/6") for runs that are
# not (or not yet) in this store.
RunRef = int | str

# A JSON value, as json.loads returns it and a ``--json`` document holds it. ``JSONDoc``: a document
# whose keys are its writer's (a stored body, a bundle member, a response): typed records decode the
# parts a reader needs. Annotations of functions only: msgspec cannot resolve the recursive alias in
# a record's field (there, the record's own types say the shape).
JSON: TypeAlias = Union[str, int, float, bool, None, list["JSON"], dict[str, "JSON"]]
JSONDoc: TypeAlias = dict[str, JSON]

# The change under test, as ``--change`` states it: dimension -> (FROM, TO), or () when declared
# without values.
Change = dict[str, tuple[str, ...]]

# What a check found (a trace diagnostic, an inspect finding): stated, ruled out, or not decidable from the data.
FindingStatus = Literal["found", "not_found", "undecided"]

# What a guardrail's rule says of a side's mean (lenses.base.Guardrail.judge says the same words).
GuardrailState = Literal["held", "broken", "unknown"]

# How a record's JSON document treats what strict JSON has no word for (see the module's doc):
# "null" (every ``--json`` and stored document) or "keep" (left to the writer: the recorder's capture).
NonFinite = Literal["null", "keep"]


class Side(StrEnum):
    """The sides of a comparison: A (baseline), B (candidate) and A′ (the A/A control)."""

    BASELINE = "baseline"
    CANDIDATE = "candidate"
    CONTROL = "control"


class Record(msgspec.Struct, frozen=True, kw_only=True):
    """A frozen record whose JSON document is its fields, key for key in field order (tuples as
    arrays; a field left ``UNSET`` is not written). A subclass states msgspec's own encoding options
    as class arguments (``omit_defaults=True``) and this one's as ``json_nonfinite``; ``to_json`` and
    ``from_json`` take it as a parameter too. Decoding validates: ``msgspec.ValidationError`` names
    the place (``$.effect.verdict``), including a value outside a ``StrEnum`` or ``Literal``."""

    json_nonfinite: ClassVar[NonFinite] = "null"

    def to_json(self, *, nonfinite: NonFinite | None = None) -> dict[str, Any]:
        if (nonfinite or self.json_nonfinite) == "keep":
            doc: dict[str, Any] = msgspec.to_builtins(self)
            return doc
        return record_json(self)  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, nonfinite: NonFinite | None = None) -> Self:
        """A stored, printed or bundled document as the record."""
        value = dict(doc) if (nonfinite or cls.json_nonfinite) == "keep" else from_jsonable(doc)
        return msgspec.convert(value, cls)


def jsonable(value: Any) -> Any:
    """Strict JSON values (the one encoder of every ``--json``): nan and ±inf become
    ``None`` (unknown, never zero) with the reason beside them (``NULL_REASON``); numpy
    scalars and arrays become the numbers and lists they hold; keys become strings."""
    return _strict(value)[0]


def _strict(value: Any) -> tuple[Any, Any]:
    """(the JSON value, why it or what it holds became null: a text, a dict by index, or None)."""
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value, None
    if isinstance(value, float):
        return (value, None) if math.isfinite(value) else (None, _NONFINITE[repr(value)])
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out[str(k)], why = _strict(v)
            if why is not None and f"{k}{NULL_REASON}" not in value:
                out[f"{k}{NULL_REASON}"] = why
        return out, None
    if isinstance(value, list | tuple):
        items, reasons = [], {}
        for i, v in enumerate(value):
            item, why = _strict(v)
            items.append(item)
            if why is not None:
                reasons[str(i)] = why
        return items, reasons or None
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy scalars and arrays, known without importing numpy
        return _strict(value.tolist())
    return value, None


def from_jsonable(value: Any, why: Any = None) -> Any:
    """``jsonable`` undone: a null with its ``NULL_REASON`` beside it is the nan or ±inf it
    was (so a decoded document encodes back to itself); the reason keys go. ``why``: the
    reason ``jsonable`` gave this value (a text, or a dict by index for a list)."""
    if value is None and isinstance(why, str):
        return _FROM_REASON.get(why)
    if isinstance(value, Mapping):
        return {
            k: from_jsonable(v, value.get(f"{k}{NULL_REASON}"))
            for k, v in value.items()
            if not (k.endswith(NULL_REASON) and k[: -len(NULL_REASON)] in value)
        }
    if isinstance(value, list):
        by_index = why if isinstance(why, dict) else {}
        return [from_jsonable(v, by_index.get(str(i))) for i, v in enumerate(value)]
    return value


def record_json(record: Any) -> Any:
    """A msgspec record as its JSON document: field order, tuples as arrays, numpy scalars
    as the numbers they hold, nan and ±inf as ``None`` (with the reason beside them)."""
    return jsonable(msgspec.to_builtins(record, enc_hook=_numpy_scalar))


def _numpy_scalar(value: Any) -> Any:
    # known without importing numpy
    if hasattr(value, "tolist") and callable(value.tolist):
        return value.tolist()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")
