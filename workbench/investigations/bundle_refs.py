"""Every reference of an imported bundle, remapped in one place.

A bundle's records cite each other by the ids of the store that exported them. An
import copies comparisons, observations and hypotheses into this store under new ids;
runs, rerun plans, rerun comparisons and bisections stay in the bundle (nothing a
bundle carries is made runnable). So a citation becomes:

- a copied record (comparison, observation): its new id in this store;
- a record that stays in the bundle (run, plan, rerun comparison, bisection): the
  bundle's ref (``"run/16"``, ``"rerun-comparison/3"``), the form an imported
  investigation already keeps its run sets in.

Observation evidence, hypothesis decisions, observation sources (``comparison:N``),
retractions and the run lists inside stored comparison documents all go through
:class:`Remap`, so no id of the exporting store is left to be read as one of this one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# evidence kind -> the ref prefix of the record it cites (as the bundle names it)
PREFIX = {
    "comparison": "comparison",
    "observation": "observation",
    "diagnosis": "observation",
    "run": "run",
    "rerun_plan": "rerun-plan",
    "rerun_comparison": "rerun-comparison",
    "bisection": "bisection",
}


class Remap:
    """Old ids to new: fill ``copied`` (bundle ref -> new id) as records are inserted."""

    def __init__(self) -> None:
        self.copied: dict[str, int] = {}

    def ref(self, kind: str, old: Any) -> Any:
        """What a citation of ``kind`` with the exporting store's id ``old`` becomes here."""
        prefix = PREFIX.get(kind)
        if prefix is None or isinstance(old, bool) or not isinstance(old, (int, str)):
            return old
        text = str(old)
        ref = text if text.startswith(f"{prefix}/") else f"{prefix}/{text}"
        return self.copied.get(ref, ref)

    def evidence(self, items: Any) -> list[Any]:
        return [self._item(item) for item in items] if isinstance(items, list) else []

    def _item(self, item: Any) -> Any:
        if not isinstance(item, dict):
            return item
        out = self.document(item)
        kind = item.get("kind")
        if isinstance(kind, str) and "id" in item:
            out["id"] = self.ref(kind, item["id"])
        return out

    def source(self, source: str) -> str:
        """``comparison:N`` (an observation taken from a stored comparison) -> its new id."""
        kind, sep, old = source.partition(":")
        if sep and kind == "comparison" and old.isdigit():
            return f"comparison:{self.ref('comparison', int(old))}"
        return source

    def document(self, doc: Any) -> Any:
        """A compare engine's document: every ``runs`` side list of run ids -> bundle refs
        (``runs`` that count runs, ``{"control": 5}``, are left as they are)."""
        if isinstance(doc, list):
            return [self.document(v) for v in doc]
        if not isinstance(doc, Mapping):
            return doc
        out = {}
        for key, value in doc.items():
            if key == "runs" and isinstance(value, Mapping) and all(isinstance(v, list) for v in value.values()):
                out[key] = {side: [self.ref("run", r) for r in ids] for side, ids in value.items()}
            else:
                out[key] = self.document(value)
        return out
