"""Run lists for real stores: runs grouped by label prefix, each row the id and the part of
its label that differs from its neighbours, a filter, and Verify's runs folded under their plan.

A demo store's labels all start "engine v0.8.2 run …", so a row cut at the list's width
shows only what every run shares; and every Verify plan adds its A, B and A′ runs (labelled
``PLAN eE rR ARM`` by the rerun executor) to the same lists. Here the shared words become a
heading and the row keeps what tells the run apart; a plan's runs are one folded row unless
asked for (``t``). Headings and folded rows are not runs: they cannot be highlighted, so
``End`` and the arrows land on runs only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

# The label the rerun executor gives a run it imported (workbench/rerun/execute.py).
PLAN_RUN = re.compile(r"^(?P<plan>.+) e(?P<execution>\d+) r(?P<round>\d+) (?P<arm>\S+)$")
RERUN_ORIGIN = "rerun"


class RunLike(Protocol):
    """What a row needs of a run (``store.api.RunSummary`` has it)."""

    @property
    def id(self) -> int: ...

    @property
    def label(self) -> str: ...

    @property
    def origin(self) -> str: ...


@dataclass(frozen=True)
class Row:
    """One line of a run list: a run (``run_id``) or, with ``run_id`` None, a heading."""

    text: str  # a run's part of its label, a shared prefix, or a folded plan's name
    run_id: int | None = None
    folded: int = 0  # a folded plan's heading: how many runs it hides

    @property
    def tail(self) -> str:
        """What follows the text and is never elided (a folded plan's count)."""
        return f": {self.folded} runs" if self.folded else ""

    def shown(self) -> str:
        return f"▸ {self.text}{self.tail}" if self.folded else self.text

    @property
    def is_run(self) -> bool:
        return self.run_id is not None


def plan_of(run: RunLike) -> str | None:
    """The Verify plan that made the run, or None for a run imported by a person."""
    if run.origin != RERUN_ORIGIN:
        return None
    match = PLAN_RUN.match(run.label)
    return match["plan"] if match else run.label


def matches(run: RunLike, needle: str) -> bool:
    """Whether a filter's text is in the run's id or label (case-insensitive); empty: every run."""
    needle = needle.strip().lower()
    return not needle or needle in f"{run.id} {run.label}".lower()


def _common_words(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def split_labels(labels: Sequence[str]) -> list[tuple[str, str]]:
    """Each label as (prefix it shares with a neighbour, the rest), by whole words.

    The prefix is the longer of those shared with the label before and the one after, so
    a row shows what tells it from its neighbours; the rest is never empty (a label equal
    to its neighbour keeps its last word)."""
    words = [label.split(" ") for label in labels]
    out = []
    for i, w in enumerate(words):
        shared = max(
            _common_words(w, words[i - 1]) if i > 0 else 0, _common_words(w, words[i + 1]) if i + 1 < len(words) else 0
        )
        shared = min(shared, len(w) - 1)
        out.append((" ".join(w[:shared]), " ".join(w[shared:])))
    return out


def group(runs: Sequence[RunLike]) -> list[Row]:
    """Headings (the shared prefix, when there is one) and a row a run with the rest."""
    rows: list[Row] = []
    heading: str | None = None
    for run, (prefix, rest) in zip(runs, split_labels([r.label for r in runs])):
        if prefix != heading:
            heading = prefix
            if prefix:
                rows.append(Row(f"{prefix} …"))
        rows.append(Row(rest if prefix else run.label, run.id))
    return rows


def run_rows(runs: Sequence[RunLike], needle: str = "", *, plan_runs: bool = False) -> list[Row]:
    """The rows of a run list: the filter's runs, grouped; Verify's runs folded under one
    heading a plan unless ``plan_runs`` (then grouped like the others, after them)."""
    shown = [r for r in runs if matches(r, needle)]
    own = [r for r in shown if plan_of(r) is None]
    rows = group(own)
    by_plan: dict[str, list[RunLike]] = {}
    for r in shown:
        plan = plan_of(r)
        if plan is not None:
            by_plan.setdefault(plan, []).append(r)
    for plan, made in by_plan.items():
        if plan_runs:
            rows.extend(group(made))
        else:
            rows.append(Row(plan, folded=len(made)))
    return rows
