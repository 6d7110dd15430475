"""The bundled Xid catalog: code -> name, triage class and recommended action.

Data lives in ``data/xid_catalog.json`` (dated; NVIDIA adds codes every few driver
releases). A code missing from the catalog is reported as unknown, never guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

import msgspec

# The triage classes the catalog uses (a new one in the data file fails its read, not a report).
XidClass = Literal[
    "application",
    "sympathetic",
    "informational",
    "gpu-hardware",
    "gpu-memory-hardware",
    "driver-firmware",
    "interconnect",
]

#: Classes that point at the node or GPU (the job cannot fix them by itself).
HARDWARE_CLASSES = frozenset({"gpu-hardware", "gpu-memory-hardware", "driver-firmware", "interconnect"})


@dataclass(frozen=True)
class XidInfo:
    code: int
    name: str
    description: str
    klass: XidClass
    immediate: str
    action: str

    @property
    def is_hardware(self) -> bool:
        return self.klass in HARDWARE_CLASSES

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "name": self.name,
            "description": self.description,
            "class": self.klass,
            "immediate": self.immediate,
            "action": self.action,
        }


@lru_cache(maxsize=1)
def _catalog() -> dict:
    text = resources.files("workbench.diagnostics").joinpath("data/xid_catalog.json").read_text("utf-8")
    return json.loads(text)


def catalog_date() -> str:
    return str(_catalog()["as_of"])


def lookup(code: int) -> XidInfo | None:
    row = _catalog()["codes"].get(str(code))
    if row is None:
        return None
    return XidInfo(
        code, row["name"], row["description"], msgspec.convert(row["class"], XidClass), row["immediate"], row["action"]
    )
