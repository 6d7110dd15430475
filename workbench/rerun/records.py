"""The base of the rerun harness's typed results: frozen ``msgspec`` records whose
``to_json()`` is the JSON document, key for key, in field order."""

from __future__ import annotations

from typing import Any

import msgspec


def _plain(value: Any) -> Any:
    """NumPy scalars (in an analysis document) as the Python numbers they hold."""
    if hasattr(value, "item"):
        return value.item()
    raise NotImplementedError(f"cannot encode {type(value).__name__}")


def json_lists(value: Any) -> Any:
    """Tuples as JSON arrays (``msgspec.to_builtins`` keeps them as tuples)."""
    if isinstance(value, dict):
        return {k: json_lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_lists(v) for v in value]
    return value


class Record(msgspec.Struct, frozen=True, kw_only=True):
    def to_json(self) -> dict[str, Any]:
        return json_lists(msgspec.to_builtins(self, enc_hook=_plain))  # type: ignore[no-any-return]
