"""Two documents compared whole: the one a bundle states, the one ``--recompute`` rebuilt.

Nothing is listed and nothing is left out: every key on either side, every list entry,
every leaf. Numbers are equal within the documented tolerance (another machine or numpy
version may differ in the last bits); everything else is equal exactly (a boolean is not a
number, ``1`` and ``1.0`` are one JSON number). A part the rebuild could not make is an
:class:`Unrebuilt` in its place: reported with its reason, never equal to anything.
Each difference is named by its path (``results.comparisons[0].result.primary.effect.verdict``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

REL_TOL = 1e-9
ABS_TOL = 1e-12


@dataclass(frozen=True)
class Unrebuilt:
    """A part of the derived document that could not be rebuilt, and why."""

    reason: str


def _number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _shown(value: object) -> str:
    text = (
        repr(value) if not isinstance(value, (dict, list)) else ("an object" if isinstance(value, dict) else "a list")
    )
    return text if len(text) <= 60 else text[:57] + "..."


def differences(stated: object, fresh: object, path: str) -> Iterator[tuple[str, str]]:
    """``(path, what differs)`` for every place the stated document is not the rebuilt one."""
    if isinstance(fresh, Unrebuilt):
        yield path, f"cannot be rebuilt: {fresh.reason}; what the bundle states there is not evidence"
    elif _number(stated) and _number(fresh):
        if not math.isclose(stated, fresh, rel_tol=REL_TOL, abs_tol=ABS_TOL):  # type: ignore[arg-type]
            yield path, f"stated {stated!r}, rebuilt {fresh!r}"
    elif isinstance(stated, dict) and isinstance(fresh, dict):
        for key in sorted(set(stated) | set(fresh)):
            where = f"{path}.{key}" if path else key
            if key not in fresh:
                yield where, "stated, but the rebuilt document has no such field"
            elif key not in stated:
                yield where, f"missing: the rebuilt document has {_shown(fresh[key])}"
            else:
                yield from differences(stated[key], fresh[key], where)
    elif isinstance(stated, list) and isinstance(fresh, list):
        if len(stated) != len(fresh):
            yield path, f"{len(stated)} entries stated, {len(fresh)} rebuilt"
        for i, (a, b) in enumerate(zip(stated, fresh)):
            yield from differences(a, b, f"{path}[{i}]")
        for i in range(len(fresh), len(stated)):
            yield f"{path}[{i}]", "stated, but the rebuilt document has no such entry"
    elif stated != fresh or type(stated) is not type(fresh):  # (two numbers were compared above)
        yield path, f"stated {_shown(stated)}, rebuilt {_shown(fresh)}"


def leaves(doc: object) -> int:
    """How many leaves (values that are neither objects nor lists, empty ones included) ``doc`` has."""
    if isinstance(doc, dict):
        return sum(leaves(v) for v in doc.values()) or 1
    if isinstance(doc, list):
        return sum(leaves(v) for v in doc) or 1
    return 1
