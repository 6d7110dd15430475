"""The shared vocabulary: runs, their dimensions and columns (pure data, no database).

A ``RunRecord`` is one observation window of one workload, normalized: every importer
(native captures, Kineto traces, benchmark results, scrapes, sacct) produces these,
and nothing downstream knows which file format a run came from.

Missing values are unknown, never zero: numeric columns are float64 with NaN for a
missing value, string columns use ``""``; a dimension that is absent is simply not
in ``dimensions``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from store.run_meta import RunMeta, RunWindow

if TYPE_CHECKING:
    import numpy as np

DimensionSource = Literal["declared", "measured", "derived"]
DIMENSION_SOURCES: tuple[str, ...] = ("declared", "measured", "derived")

# The kinds a window may state (store.run_meta.WindowKind, which adds "unknown").
WINDOW_KINDS: tuple[str, ...] = ("steady", "startup", "checkpointing", "mixed", "incident")
# A capture that does not say which window it is gets kind "unknown", never a guess.
UNKNOWN_WINDOW = "unknown"

LENSES: tuple[str, ...] = ("inference", "training", "fleet")

# Ids are SQL INTEGERs: ASCII decimal digits (never "٣" or "²", which str.isdigit()
# accepts), at most 2^63 - 1. Anything else a user types is a label or a name.
MAX_ID = (1 << 63) - 1
_DECIMAL = re.compile(r"[0-9]+")


def decimal_id(text: str | int) -> int | None:
    """``text`` as a row id when it is ASCII decimal digits; ``None`` when it is not.

    A number past :data:`MAX_ID` is an id no row can have: ``0`` then, so a lookup
    finds nothing (and says "no such ...") instead of overflowing the database.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        return text if 0 <= text <= MAX_ID else 0
    text = str(text).strip()
    if not _DECIMAL.fullmatch(text):
        return None
    if len(text) > 19 or int(text) > MAX_ID:
        return 0
    return int(text)


def utcnow_iso() -> str:
    """The time rows are stamped with (UTC, to the second)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# The columnar table every run has; importers may add others ("operations",
# "timeline", "gpu", ...), each a mapping of column name to a 1-D array.
SAMPLES = "samples"


@dataclass(frozen=True)
class Dimension:
    """A dimension's value and where it came from.

    ``declared``: stated by a label, a file's metadata or the user (``--dim``);
    ``measured``: read from the data itself (device identity in a trace);
    ``derived``: computed from the samples (request mix from token counts).
    """

    value: Any
    source: DimensionSource = "declared"
    # The id of the ``wb declare`` history row that set it (None: it came with the import).
    declaration: int | None = None

    def to_json(self) -> dict[str, object]:  # store sits below workbench.vocabulary's JSONDoc
        out: dict[str, object] = {"value": self.value, "source": self.source}
        if self.declaration is not None:
            out["declaration"] = self.declaration
        return out


@dataclass(frozen=True)
class Work:
    """The valid work a run completed: ``amount`` of ``unit`` (tokens, samples, GPU-hours)."""

    unit: str
    amount: float | None = None


@dataclass
class RunRecord:
    lens: str
    label: str
    dimensions: dict[str, Dimension] = field(default_factory=dict)
    # {"kind": "steady", "warmup_excluded": 20, "policy": "...", ...}
    window: dict[str, Any] = field(default_factory=lambda: {"kind": UNKNOWN_WINDOW})
    work: Work | None = None
    quality: dict[str, float] = field(default_factory=dict)
    # Everything else worth keeping: recorded_at, unknown keys, pool capacity, ...
    meta: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    # The input files this run came from (a subset of what was imported).
    sources: list[Path] = field(default_factory=list)
    # Set once the run is in a store.
    id: int | None = None

    @property
    def samples(self) -> dict[str, np.ndarray]:
        return self.tables.setdefault(SAMPLES, {})

    @property
    def sample_count(self) -> int:
        cols = self.tables.get(SAMPLES) or {}
        return len(next(iter(cols.values()))) if cols else 0

    @property
    def window_kind(self) -> str:
        return str(self.window.get("kind", UNKNOWN_WINDOW))

    @property
    def typed_meta(self) -> RunMeta:
        """``meta``'s keys that wb writes, typed (read afresh: ``meta`` is the mutable store copy)."""
        return RunMeta.of(self.meta)

    @property
    def typed_window(self) -> RunWindow:
        """``window``'s keys that wb writes, typed (read afresh, as ``typed_meta``)."""
        return RunWindow.of(self.window)
