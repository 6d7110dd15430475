"""Evidence in one short line, the same in the CLI and the TUI.

Evidence items come in two shapes (a reference, ``{"kind": "comparison", "id": 1}``, and a
value, ``{"kind": "metric", "value": 1.2, ...}``) and carry optional keys that may be null.
A null is unknown and is left out, never printed as ``None``; floats show 4 significant
digits.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def brief(value: Any) -> str:
    """A value in one short line: floats to 4 significant digits, mappings as key=value, nulls left out."""
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return " ".join(f"{k}={brief(v)}" for k, v in value.items() if not _empty(v))
    if isinstance(value, list):
        return "[" + ", ".join(brief(v) for v in value) + "]"
    return str(value)


def _empty(value: Any) -> bool:
    """Nothing to say: a null, an empty string or list, or a mapping of such (``recorded={queue: {}}``
    is left out whole, never shown as ``recorded=queue=``)."""
    if isinstance(value, dict):
        return all(_empty(v) for v in value.values())
    return value is None or value == "" or value == []


def item_text(item: Any) -> str:
    """One evidence item: ``comparison 1``, ``metric ttft_p95=110``, ``run 3 window=steady``."""
    if not isinstance(item, dict):
        return brief(item)
    kind = item.get("kind")
    head = " ".join(str(p) for p in (kind, item.get("id")) if p is not None)
    rest = {k: v for k, v in item.items() if k not in ("kind", "id") and not _empty(v)}
    tail = brief(rest)
    return " ".join(p for p in (head, tail) if p) or "-"


def evidence_text(items: Iterable[Any] | Any, *, limit: int = 200) -> str:
    """Every item, ``; ``-separated, elided at ``limit`` characters ("-" when there is none)."""
    if not items:
        return "-"
    seq = items if isinstance(items, list) else [items]
    text = "; ".join(item_text(i) for i in seq)
    return text if len(text) <= limit else text[: limit - 1] + "…"
