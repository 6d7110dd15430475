"""The way out of a refusal: the exact commands that resolve it.

For every blocking dimension there are at most three honest ways on: declare the value
where the files do not carry it (``wb declare``, kept in each run's history), declare
that it is the change under test (``--change``), or accept the difference with a
reason (``--accept``, recorded one dimension at a time). Which of them applies follows
from the row's state; a value the data measured differently is never offered as a
declaration.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from lenses.base import WINDOW_DIMENSION
from store.records import Dimension, RunRecord
from workbench.compare.model import Comparison
from workbench.compare.results import Result
from workbench.compare.states import DIFFERENT, UNKNOWN

PLACEHOLDER = "VALUE"


class WayOut(Result, frozen=True, kw_only=True):
    """``wb compare``'s ``way_out``: each way on from a refusal, as commands to copy."""

    declare: tuple[str, ...]  # wb declare lines, where the files do not carry a value
    change: tuple[str, ...]  # the comparison again, naming the change under test
    accept: str  # the comparison again, accepting every blocking dimension with a reason ("": none can be)
    # A side that disagrees with itself: no acceptance resolves it; name only runs that agree.
    disagree: tuple[str, ...] = ()


def _q(text: Any) -> str:
    return shlex.quote(str(text))


def _known(value: Any) -> bool:
    return value is not None and not isinstance(value, (dict, list))


def _data_refuse_a_declaration(
    result: Comparison, records: dict[Any, RunRecord], run_ids: Sequence[Any], name: str
) -> bool:
    """Would the data contradict any value declared for ``name`` on these runs? (A fleet
    window whose jobs carry no eligible times shows "none in the data" against every
    declared eligibility history: declaring cannot resolve it.)"""
    for run_id in run_ids:
        record = records.get(run_id)
        if record is None:
            continue
        probe = replace(record, dimensions={**record.dimensions, name: Dimension(PLACEHOLDER, "declared")})
        seen = result.lens.observed_dimensions(probe).get(name)
        if seen is not None and seen.value is not None:
            return True
    return False


class Declarable(Result, frozen=True, kw_only=True):
    """One ``wb declare`` a refusal's way out proposes: these runs, these values
    (``VALUE`` where only the user can say it)."""

    runs: tuple[Any, ...]
    values: dict[str, str]  # dimension -> the value to declare, or PLACEHOLDER


def declarable(
    result: Comparison, baseline: Sequence[Any], candidate: Sequence[Any], records: Sequence[RunRecord] = ()
) -> tuple[Declarable, ...]:
    """The declarations the way out of a refused comparison would make: for each must-match
    dimension unknown on a side whose files do not say it, the runs (both sides, or the one
    side missing it) and the value (the other side's, where someone declared it there too).
    None where the data would refuse a declaration (only ``--accept`` resolves that), nor for
    a value the data measured differently. ``records``: the runs themselves."""
    if result.comparable:
        return ()
    by_id = {r.id: r for r in records}
    everyone = tuple([*baseline, *candidate])
    targets: dict[tuple[Any, ...], dict[str, str]] = {everyone: {}, tuple(baseline): {}, tuple(candidate): {}}
    for row in result.comparability.rows:
        b, c = row.baseline, row.candidate
        if not row.blocks or row.self_contradicting or row.state != UNKNOWN or b.problems or c.problems:
            continue
        missing = (
            everyone
            if b.value is None and c.value is None
            else tuple(baseline)
            if b.value is None
            else tuple(candidate)
        )
        if _data_refuse_a_declaration(result, by_id, missing, row.name):
            continue
        other = c if b.value is None else b
        # The other side's value is offered only when someone declared it there too;
        # a measured value is what that side's data show, not what this side's are.
        known = len(missing) < len(everyone) and other.source == "declared" and _known(other.value)
        targets[missing][row.name] = str(other.value) if known else PLACEHOLDER
    return tuple(Declarable(runs=runs, values=values) for runs, values in targets.items() if values)


def way_out(
    result: Comparison,
    baseline: Sequence[Any],
    candidate: Sequence[Any],
    command: Sequence[str],
    records: Sequence[RunRecord] = (),
) -> WayOut | None:
    """The commands that resolve a refused comparison (None when it was compared). ``command``: the words that rerun the
    comparison (``["wb", "compare", "1", "--vs", "2", ...]``). ``records``: the runs
    themselves, so that no declaration their data would refuse is offered."""
    if result.comparable:
        return None
    split = tuple(f"{r.name}: {r.disagreeing}" for r in result.comparability.rows if r.blocks and r.self_contradicting)
    blocking = [r for r in result.comparability.rows if r.blocks and not r.self_contradicting]
    changes: list[str] = []
    for row in blocking:
        b, c = row.baseline, row.candidate
        if (
            row.state == DIFFERENT
            and not row.note
            and row.name != WINDOW_DIMENSION
            and _known(b.value)
            and _known(c.value)
        ):
            changes.append(
                _q(
                    f"{row.name}={b.value}->{c.value}"
                    if ":" in f"{b.value}{c.value}"
                    else f"{row.name}={b.value}:{c.value}"
                )
            )
    declare = tuple(
        " ".join(
            [
                "wb declare",
                *map(_q, d.runs),
                *(_q(f"{k}={v}") for k, v in d.values.items()),
                "--why",
                _q("what makes it true"),
            ]
        )
        for d in declarable(result, baseline, candidate, records)
    )
    change = (" ".join([*command, *(w for ch in changes for w in ("--change", ch))]),) if changes else ()
    accept = (
        " ".join(
            [
                *command,
                "--accept",
                ",".join(r.name for r in blocking),
                "--why",
                _q("why the difference does not matter"),
            ]
        )
        if blocking
        else ""
    )
    return WayOut(declare=declare, change=change, accept=accept, disagree=split)


def render_way_out(ways: WayOut) -> list[str]:
    lines = ["To go on, resolve each blocking dimension:"]
    if ways.disagree:
        lines.append(
            "  a side disagrees with itself (no acceptance resolves it): name only runs that agree, on each side:"
        )
        lines += [f"    {d}" for d in ways.disagree]
    if ways.declare:
        lines.append(
            "  where the files do not say it, declare the value (replace VALUE; kept in each run's history, 'wb show "
            "RUN'):"
        )
        lines += [f"    {cmd}" for cmd in ways.declare]
    if ways.change:
        lines.append("  where the runs differ because that is the change under test, say so:")
        lines += [f"    {cmd}" for cmd in ways.change]
    if ways.accept:
        lines.append(
            ("  or " if ways.declare or ways.change else "  ")
            + "accept the differences with a reason (recorded with the comparison, one dimension at a time):"
        )
        lines.append(f"    {ways.accept}")
    return lines


def rerun_words(
    name: str,
    baseline: Sequence[Any],
    candidate: Sequence[Any],
    lens: str | None,
    changes: Sequence[str],
    accepts: dict[str, str],
    extensions: Sequence[str],
    control: Sequence[Any] = (),
    *,
    metric: str | None = None,
) -> list[str]:
    """The words of the command that was run, to be extended with a way out: ``lens`` and
    ``metric`` as the user gave them (the names, not the lens they made)."""
    words = ["wb", name, *map(_q, baseline), "--vs", *map(_q, candidate)]
    if control:
        words += ["--control", *map(_q, control)]
    if lens:
        words += ["--lens", lens]
    if metric:
        words += ["--metric", _q(metric)]
    for ch in changes:
        words += ["--change", _q(ch)]
    for dim, why in accepts.items():
        words += ["--accept", _q(dim), "--why", _q(why)]
    for ext in extensions:
        words += ["--extension", _q(ext)]
    return words
