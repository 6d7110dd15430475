"""A dimension's state in a comparison, defined once (docs/compare.md, "Comparability comes first").

A string enum: a member *is* its word, so the JSON and the stored results carry the same text.
"""

from __future__ import annotations

from enum import StrEnum


class DimensionState(StrEnum):
    SAME = "same"  # equal on both sides
    CHANGED = "changed"  # declared as the change and actually different
    # different and not declared (or a label against its data; runs of a side that disagree
    # on a must-match or declared dimension)
    DIFFERENT = "different"
    UNKNOWN = "unknown"  # missing on either side (or an unpinned identity)
    MIXED = "mixed"  # the runs of a side disagree on a dimension that neither must match nor is the change


SAME, CHANGED, DIFFERENT, UNKNOWN, MIXED = DimensionState
STATES = tuple(DimensionState)
