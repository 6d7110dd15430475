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
from workbench.compare import contract
from workbench.compare.comparability import Change
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
    mismatch = contract.control_mismatch(lens, baseline, control, accepts)
    if mismatch is not None:
        raise UsageError(f"--control: the control runs are not baseline-again runs: {clean(mismatch[1])}")
