"""Compare's `m`: declare what a refusal says the files do not (worker threads).

The declarations offered are the way out's own (``way_out.declarable``: the lines ``wb
compare`` prints), and they are made through the same use case as ``wb declare``
(``usecases.runs.Declare``: checked against the data, one append-only history write a run set).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workbench.compare.way_out import PLACEHOLDER, Declarable
from workbench.errors import UsageError
from workbench.investigations.common import current_user
from workbench.investigations.views import ComparisonView
from workbench.usecases.comparisons import WayOutOfStored
from workbench.usecases.runs import Declare
from workbench.usecases.transport import Workbench


def missing_declarations(wb: Workbench, comparison: ComparisonView) -> tuple[Declarable, ...]:
    """What the stored refused comparison's way out would declare (none when it was compared)."""
    if comparison.comparison().comparable:
        return ()
    return wb.call(WayOutOfStored(comparison=comparison.id)).declarable


def field_name(index: int, dimension: str) -> str:
    """The dialog's field for one dimension of the ``index``-th proposed declaration."""
    return f"d{index}-{dimension}"


def fields_missing(proposals: Sequence[Declarable], form: Mapping[str, str]) -> str | None:
    """The first field left empty or as ``VALUE``: nothing is declared until every value is said."""
    for i, proposal in enumerate(proposals):
        for name in proposal.values:
            value = form.get(field_name(i, name), "").strip()
            if not value or value == PLACEHOLDER:
                return field_name(i, name)
    return None


def declare_missing(wb: Workbench, proposals: Sequence[Declarable], form: Mapping[str, str], why: str) -> list[str]:
    """Make the proposed declarations with the values typed into ``form``; one line a run set said."""
    if fields_missing(proposals, form) is not None or not why.strip():
        raise UsageError("every value and the reason must be given")
    said = []
    for i, proposal in enumerate(proposals):
        values = {name: form[field_name(i, name)].strip() for name in proposal.values}
        runs = [int(r) for r in proposal.runs]
        wb.call(Declare(runs=[str(r) for r in runs], values=values, why=why, by=current_user()))
        said.append(f"runs {', '.join(map(str, runs))}: " + ", ".join(f"{k}={v}" for k, v in values.items()))
    return said
