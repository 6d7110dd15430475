"""The base of the rerun harness's typed results: frozen ``msgspec`` records whose
``to_json()`` is the JSON document, key for key, in field order."""

from __future__ import annotations

from typing import Any

import msgspec

from workbench.compare.fmt import record_json


class Record(msgspec.Struct, frozen=True, kw_only=True):
    def to_json(self) -> dict[str, Any]:
        return record_json(self)
