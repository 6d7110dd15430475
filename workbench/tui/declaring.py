"""Compare's `m`: declare what a refusal says the files do not (worker threads).

The declarations offered are the way out's own (``way_out.declarable``: the lines ``wb
compare`` prints), and they are made through the same door as ``wb declare``
(``workbench.declare``: checked against the data, one append-only history write a run set).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from workbench.compare.way_out import PLACEHOLDER, Declarable, declarable
from workbench.declare import declare_dimensions
from workbench.errors import UsageError
from workbench.investigations.views import ComparisonView

if TYPE_CHECKING:
    from store.api import Store


def missing_declarations(store: "Store", comparison: ComparisonView) -> tuple[Declarable, ...]:
    """What the stored refused comparison's way out would declare (none when it was compared)."""
    result = comparison.comparison()
    if result.comparable:
        return ()
    base, cand = [int(r) for r in comparison.baseline_runs], [int(r) for r in comparison.candidate_runs]
    return declarable(result, base, cand, store.load_runs(base + cand, tables=[]))


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


def declare_missing(store: "Store", proposals: Sequence[Declarable], form: Mapping[str, str], why: str) -> list[str]:
    """Make the proposed declarations with the values typed into ``form``; one line a run set said."""
    if fields_missing(proposals, form) is not None or not why.strip():
        raise UsageError("every value and the reason must be given")
    said = []
    for i, proposal in enumerate(proposals):
        values = {name: form[field_name(i, name)].strip() for name in proposal.values}
        runs = [int(r) for r in proposal.runs]
        declare_dimensions(store, runs, values, why=why)
        said.append(f"runs {', '.join(map(str, runs))}: " + ", ".join(f"{k}={v}" for k, v in values.items()))
    return said
