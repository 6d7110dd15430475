"""Dimensions whose value is a mapping (``engine_config``), compared key by key.

A mapping is flattened to dotted keys (``env.VLLM_USE_V1``,
``speculative_config.num_speculative_tokens``) and each key is ``added``, ``removed`` or
``changed`` with both values; nothing is cut so that a key is hidden. Several keys
changed at once are said to be so: the effect cannot be given to any one of them.

An ``unparsed`` list (arguments the reader could not read, as written) makes the
dimension unknown: what was not read can never be called the same.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from typing import Any

from msgspec import UNSET, UnsetType

from lenses.base import default_equal
from workbench.compare.results import Result
from workbench.compare.states import SAME
from workbench.textsafe import clean

UNPARSED = "unparsed"
# How a dimension's keys are named in sentences.
NOUNS = {"engine_config": ("engine setting", "engine settings")}


class KeyChange(Result, frozen=True, kw_only=True):
    """One key of a mapping that differs; a side's value is absent where the key is."""

    key: str  # dotted: ``env.VLLM_USE_V1``
    change: str  # added, removed or changed
    baseline: object | UnsetType = UNSET  # as the capture gives it
    candidate: object | UnsetType = UNSET


class MappingDiff(Result, frozen=True, kw_only=True):
    """What a comparability row adds for mapping values (nothing when neither side is one)."""

    key_changes: tuple[KeyChange, ...] | UnsetType = UNSET
    several_changed: str | UnsetType = UNSET
    unparsed: dict[str, tuple[str, ...]] | UnsetType = UNSET  # side -> arguments not read


def is_mapping(value: object) -> bool:
    return isinstance(value, dict)


def flatten(value: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    """``{"env": {"A": "1"}, "tp": 2}`` -> ``{"env.A": "1", "tp": 2}`` (lists stay values).
    ``value``: a mapping as a capture gives it (raw JSON)."""
    out: dict[str, object] = {}
    for key, item in value.items():
        if not prefix and key == UNPARSED:
            continue
        name = f"{prefix}{key}"
        if isinstance(item, dict) and item:
            out.update(flatten(item, f"{name}."))
        else:
            out[name] = item
    return out


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b  # true is not 1
    if isinstance(a, list | dict) or isinstance(b, list | dict):
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    return bool(default_equal(a, b))


def key_changes(baseline: Mapping[str, object], candidate: Mapping[str, object]) -> list[KeyChange]:
    """Each key that differs, added, removed or changed, with the values it has."""
    a, b = flatten(baseline), flatten(candidate)
    out: list[KeyChange] = []
    for key in sorted(a.keys() | b.keys()):
        if key not in b:
            out.append(KeyChange(key=key, change="removed", baseline=a[key]))
        elif key not in a:
            out.append(KeyChange(key=key, change="added", candidate=b[key]))
        elif not _equal(a[key], b[key]):
            out.append(KeyChange(key=key, change="changed", baseline=a[key], candidate=b[key]))
    return out


def unparsed(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return []
    items = value.get(UNPARSED) or []
    return [str(i) for i in items] if isinstance(items, list) else [str(items)]


def unread_note(baseline: Any, candidate: Any) -> str | None:
    """Why two mappings cannot be compared: the arguments either side could not read."""
    parts = []
    for side, value in (("baseline", baseline), ("candidate", candidate)):
        items = unparsed(value)
        if items:
            parts.append(f"{side} has arguments that were not read: {', '.join(repr(i) for i in items)}")
    return "; ".join(parts) + " (what was not read cannot be called the same)" if parts else None


def _setting(key: str) -> str:
    """The setting a flattened key belongs to: a flag (``speculative_config.method`` ->
    ``speculative_config``) or one environment variable (``env.VLLM_USE_V1``)."""
    parts = key.split(".")
    return ".".join(parts[:2]) if parts[0] == "env" and len(parts) > 1 else parts[0]


def several_changed(name: str, changes: list[KeyChange]) -> str | None:
    """``2 engine settings changed at once: a, b — the effect cannot be given to either``."""
    settings = list(dict.fromkeys(_setting(c.key) for c in changes))
    if len(settings) < 2:
        return None
    noun = NOUNS.get(name, ("setting", "settings"))[1]
    which = "either" if len(settings) == 2 else "any one of them"
    return f"{len(settings)} {noun} changed at once: {', '.join(settings)} — the effect cannot be given to {which}"


def mapping_diff(name: str, state: str, baseline: object, candidate: object) -> MappingDiff:
    """What a comparability row adds for mapping values (nothing when neither side is one)."""
    changes: tuple[KeyChange, ...] | UnsetType = UNSET
    summary: str | UnsetType = UNSET
    if is_mapping(baseline) and is_mapping(candidate) and state != SAME:
        changes = tuple(key_changes(baseline, candidate))
        if not (
            unparsed(baseline) or unparsed(candidate)
        ):  # (with arguments unread, which settings changed is itself unknown)
            summary = several_changed(name, list(changes)) or UNSET
    unread = {
        side: tuple(unparsed(value))
        for side, value in (("baseline", baseline), ("candidate", candidate))
        if unparsed(value)
    }
    return MappingDiff(key_changes=changes, several_changed=summary, unparsed=unread or UNSET)


def cell(value: Any) -> str | None:
    """A mapping in a table cell: how many settings (its keys are listed below the row)."""
    if not is_mapping(value):
        return None
    n = len(flatten(value))
    extra = f", {len(unparsed(value))} unread" if unparsed(value) else ""
    return f"{n} setting{'s' if n != 1 else ''}{extra}"


def _show(value: Any) -> str:
    return clean(json.dumps(value, sort_keys=True, ensure_ascii=False))  # "0" (text) is not 0 (a number)


def table_lines(
    name: str, state: str, baseline: object, candidate: object, width: int, indent: str = "    "
) -> list[str]:
    """The lines under a mapping row: every differing key with both values, wrapped."""
    diff = mapping_diff(name, state, baseline, candidate)
    lines: list[str] = []
    for c in diff.key_changes or ():
        key = clean(c.key)
        if c.change == "added":
            text = f"+ {key}: {_show(c.candidate)} (candidate only)"
        elif c.change == "removed":
            text = f"- {key}: {_show(c.baseline)} (baseline only)"
        else:
            text = f"~ {key}: {_show(c.baseline)} → {_show(c.candidate)}"
        lines += textwrap.wrap(
            text,
            width,
            initial_indent=indent,
            subsequent_indent=indent + "    ",
            break_long_words=True,
            break_on_hyphens=False,
        )
    for side, items in (diff.unparsed or {}).items():
        text = f"not read ({side}): " + ", ".join(clean(repr(i)) for i in items)
        lines += textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "    ")
    if diff.several_changed:
        lines += textwrap.wrap(
            clean(diff.several_changed), width, initial_indent=indent, subsequent_indent=indent + "  "
        )
    return lines
