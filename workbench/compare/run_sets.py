"""Run sets, ``BASE... --vs CAND... [--control APRIME...]``: checked here once, for
``wb compare``, ``wb inspect``, ``wb investigate compare`` and the TUI's selection alike.

A run belongs to one side: a run named on two sides (by id, by label, or both) is
refused, and so is a run named twice on one side (it would count as two independent
runs). The refusal names the run and the sides, in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired, TypedDict

from workbench.errors import UsageError

if TYPE_CHECKING:
    from store.records import RunRecord

SIDES = ("baseline", "candidate", "control")
SHAPE = "BASE... --vs CAND... [--control APRIME...]"


@dataclass(frozen=True)
class RunSets:
    """Resolved run ids of each side (``control``: the A/A baseline-again runs, or none)."""

    baseline: tuple[int, ...]
    candidate: tuple[int, ...]
    control: tuple[int, ...] = ()


class Selection(TypedDict):
    """The runs of each side and the parsed declarations: ``compare``'s and ``inspect``'s
    keyword arguments but the lens, as the CLI and the server load them."""

    baseline: list[RunRecord]
    candidate: list[RunRecord]
    changes: dict[str, tuple[str | None, str | None] | None]
    accepts: dict[str, str]
    extensions: list[str]
    control: NotRequired[list[RunRecord]]  # only when A' runs are named


def check_run_sets(baseline: Sequence[int], candidate: Sequence[int], control: Sequence[int] = ()) -> RunSets:
    """The three sides as :class:`RunSets`, or ``UsageError`` when a side is missing or a
    run is named on two sides (or twice on one)."""
    if not baseline:
        raise UsageError(f"name the baseline runs: {SHAPE}")
    if not candidate:
        raise UsageError(f"name the candidate runs: {SHAPE}")
    seen: dict[int, str] = {}
    for side, ids in zip(SIDES, (baseline, candidate, control)):
        for run_id in ids:
            first = seen.setdefault(int(run_id), side)
            if first == side and list(ids).count(run_id) > 1:
                raise UsageError(f"run {run_id} is named twice in the {side}: each run counts once")
            if first != side:
                why = (
                    "a control run is a separate baseline-again run"
                    if "control" in (first, side)
                    else "a run cannot be its own baseline"
                )
                raise UsageError(
                    f"run {run_id} is named in the {first} and in the {side}: a run belongs to one side ({why})"
                )
    return RunSets(tuple(int(i) for i in baseline), tuple(int(i) for i in candidate), tuple(int(i) for i in control))
