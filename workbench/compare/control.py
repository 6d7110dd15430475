"""The A/A control of a comparison of stored runs: baseline-again (A′) runs.

Two runs of the same baseline differ by the noise of the setup; A′ against A measures
it. Every effect then carries the rerun harness's A/A guards (``workbench.stats.analyze``
with its A′ arm, unpaired because stored runs have no rounds): UNSTABLE when A′/A is
clear of 1 beyond δ/2 (the verdict is withheld), UNDERPOWERED when A′/A's CI90 is not
inside the band. A control is only a control when it matches the baseline: a dimension
known on both and different (the declared change included) or a must-match dimension
unknown refuses it, unless accepted (``--accept DIM --why``) as for the pair.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lenses.base import Lens
from store.records import RunRecord
from workbench.compare import comparability
from workbench.compare.comparability import Change
from workbench.compare.fmt import jsonable
from workbench.errors import UsageError
from workbench.textsafe import clean


def check_control(
    lens: Lens,
    baseline: Sequence[RunRecord],
    control: Sequence[RunRecord],
    changes: Mapping[str, Change] | None = None,
    accepts: Mapping[str, str] | None = None,
) -> None:
    """Raise ``UsageError`` (one line) when the control runs are not baseline-again runs.
    ``changes``: the pair's declared change, which the control must *not* show (so it is
    not passed on: every dimension must match the baseline)."""
    check = comparability.check(lens, baseline, control, None, accepts)
    for row in check.rows:
        if row.blocks or (row.state == "different" and row.accepted_why is None):
            what = "is unknown" if row.state == "unknown" else "differs"
            raise UsageError(f"--control: the control runs are not baseline-again runs: {row.name} {what} ({_sides(row)})")


def _sides(row: comparability.DimensionRow) -> str:
    """Each side's value, or what is wrong with it: a side whose runs disagree has no
    one value (its first run's would name the wrong side)."""
    parts = []
    for side, value in (("baseline", row.baseline), ("control", row.candidate)):
        if value.problems:
            parts.append("; ".join(clean(p if p.startswith("run ") and ": " in p else f"{side} {p}") for p in value.problems))
        else:
            parts.append(f"{side} {clean(_show(jsonable(value.value)))}")
    return ", ".join(parts)


def _show(value: object) -> str:
    return "unknown" if value is None else str(value)
