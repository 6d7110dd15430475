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
from typing import Any

from lenses.base import default_equal
from workbench.compare.states import SAME
from workbench.textsafe import clean

UNPARSED = "unparsed"
# How a dimension's keys are named in sentences.
NOUNS = {"engine_config": ("engine setting", "engine settings")}


def is_mapping(value: Any) -> bool:
    return isinstance(value, dict)


def flatten(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"env": {"A": "1"}, "tp": 2}`` -> ``{"env.A": "1", "tp": 2}`` (lists stay values)."""
    out: dict[str, Any] = {}
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


def key_changes(baseline: dict[str, Any], candidate: dict[str, Any]) -> list[dict[str, Any]]:
    """Each key that differs: ``{"key", "change": added|removed|changed, "baseline", "candidate"}``
    (a side's value is absent where the key is)."""
    a, b = flatten(baseline), flatten(candidate)
    out: list[dict[str, Any]] = []
    for key in sorted(a.keys() | b.keys()):
        if key not in b:
            out.append({"key": key, "change": "removed", "baseline": a[key]})
        elif key not in a:
            out.append({"key": key, "change": "added", "candidate": b[key]})
        elif not _equal(a[key], b[key]):
            out.append({"key": key, "change": "changed", "baseline": a[key], "candidate": b[key]})
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


def several_changed(name: str, changes: list[dict[str, Any]]) -> str | None:
    """``2 engine settings changed at once: a, b — the effect cannot be given to either``."""
    settings = list(dict.fromkeys(_setting(c["key"]) for c in changes))
    if len(settings) < 2:
        return None
    noun = NOUNS.get(name, ("setting", "settings"))[1]
    which = "either" if len(settings) == 2 else "any one of them"
    return f"{len(settings)} {noun} changed at once: {', '.join(settings)} — the effect cannot be given to {which}"


def row_json(name: str, state: str, baseline: Any, candidate: Any) -> dict[str, Any]:
    """What a comparability row adds for mapping values (nothing when neither side is one)."""
    out: dict[str, Any] = {}
    if is_mapping(baseline) and is_mapping(candidate) and state != SAME:
        changes = key_changes(baseline, candidate)
        out["key_changes"] = changes
        summary = None if unparsed(baseline) or unparsed(candidate) else several_changed(name, changes)
        if summary:  # (with arguments unread, which settings changed is itself unknown)
            out["several_changed"] = summary
    for side, value in (("baseline", baseline), ("candidate", candidate)):
        if unparsed(value):
            out.setdefault("unparsed", {})[side] = unparsed(value)
    return out


def cell(value: Any) -> str | None:
    """A mapping in a table cell: how many settings (its keys are listed below the row)."""
    if not is_mapping(value):
        return None
    n = len(flatten(value))
    extra = f", {len(unparsed(value))} unread" if unparsed(value) else ""
    return f"{n} setting{'s' if n != 1 else ''}{extra}"


def _show(value: Any) -> str:
    return clean(json.dumps(value, sort_keys=True, ensure_ascii=False))  # "0" (text) is not 0 (a number)


def table_lines(name: str, state: str, baseline: Any, candidate: Any, width: int, indent: str = "    ") -> list[str]:
    """The lines under a mapping row: every differing key with both values, wrapped."""
    extra = row_json(name, state, baseline, candidate)
    lines: list[str] = []
    for c in extra.get("key_changes", []):
        key = clean(c["key"])
        if c["change"] == "added":
            text = f"+ {key}: {_show(c['candidate'])} (candidate only)"
        elif c["change"] == "removed":
            text = f"- {key}: {_show(c['baseline'])} (baseline only)"
        else:
            text = f"~ {key}: {_show(c['baseline'])} → {_show(c['candidate'])}"
        lines += textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "    ",
                               break_long_words=True, break_on_hyphens=False)
    for side, items in extra.get("unparsed", {}).items():
        text = f"not read ({side}): " + ", ".join(clean(repr(i)) for i in items)
        lines += textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "    ")
    if extra.get("several_changed"):
        lines += textwrap.wrap(clean(extra["several_changed"]), width, initial_indent=indent, subsequent_indent=indent + "  ")
    return lines
