"""Comparability first: every dimension of the lens is ``same``, ``changed`` (declared and
actually different), ``different`` (not declared) or ``unknown`` (missing on either side).

Values are checked from the data wherever the lens can read them (request mix from token
lengths, rank count and effective batch from the steps, eligibility from the jobs, the
window kind); a label that disagrees with the data makes the dimension ``different``.
A must-match dimension that is different or unknown refuses the pair, unless the user
recorded an acceptance with a reason (``--accept DIM --why TEXT``).

A side must agree with itself: runs of one side that differ on a must-match dimension,
or on the dimension declared as the change, refuse the pair with the runs named; on any
other dimension the side is ``mixed``. An unpinned identity ("revision not pinned",
"latest", an image tag without a digest) says nothing about what ran: it is unknown,
never ``same``. Every stage reaches these rules through ``workbench.compare.contract``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from msgspec import UNSET

from lenses.base import WINDOW_DIMENSION, DimensionSpec, Lens, normalize_text
from store.records import RunRecord
from workbench.compare import dict_diff
from workbench.compare.results import Refusal
from workbench.compare.states import CHANGED, DIFFERENT, MIXED, SAME, UNKNOWN, DimensionState
from workbench.errors import UsageError
from workbench.training import boundaries


Change = tuple[str | None, str | None] | None


@dataclass
class SideValue:
    """One side's value of a dimension (``None`` = unknown), where it came from, and
    what is wrong with it: a label against its data (``problems``), runs of the side that
    disagree (``disagree``, naming them), values that are unpinned identities (``unpinned``)."""

    value: Any = None
    source: str | None = None
    problems: list[str] = field(default_factory=list)
    disagree: str = ""
    unpinned: list[str] = field(default_factory=list)


# Identities that do not pin what ran: a hub model without a revision, "latest", an image
# tag (mutable) without its digest. Such a value is unknown, never ``same``.
_UNPINNED = re.compile(r"not pinned|unpinned|(^|[:@/\s])latest$", re.IGNORECASE)
_IMAGE_TAG = re.compile(r"^[a-z0-9.\-]+(:\d+)?/[\w.\-/]+:[\w.\-]+$", re.IGNORECASE)


def unpinned(value: Any) -> bool:
    """Whether ``value`` names an identity without pinning it (see ``_UNPINNED``)."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    return bool(_UNPINNED.search(text)) or ("@" not in text and bool(_IMAGE_TAG.match(text)))


@dataclass
class DimensionRow:
    name: str
    title: str
    must_match: bool
    state: DimensionState
    baseline: SideValue
    candidate: SideValue
    note: str = ""
    declared_change: bool = False
    accepted_why: str | None = None
    # The runs of one side disagree on this dimension (``disagreeing`` names them).
    disagreeing: str = ""

    @property
    def self_contradicting(self) -> bool:
        """A side disagrees with itself on a dimension that decides the comparison."""
        return bool(self.disagreeing) and (self.must_match or self.declared_change)

    @property
    def blocks(self) -> bool:
        if self.self_contradicting:
            return True  # no acceptance makes a side that disagrees with itself one side
        return self.must_match and self.state in (DIFFERENT, UNKNOWN) and self.accepted_why is None

    @property
    def source(self) -> str | None:
        b, c = self.baseline.source, self.candidate.source
        if b == c or c is None:
            return b
        return c if b is None else f"{b}/{c}"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "name": self.name,
            "state": self.state,
            "baseline": self.baseline.value,
            "candidate": self.candidate.value,
            "source": self.source,
            "must_match": self.must_match,
        }
        if self.note:
            out["note"] = self.note
        if self.disagreeing and self.disagreeing != self.note:
            out["runs_disagree"] = self.disagreeing
        out.update(dict_diff.mapping_diff(self.name, self.state, self.baseline.value, self.candidate.value).to_json())
        if self.declared_change:
            out["declared_change"] = True
        if self.accepted_why is not None:
            out["accepted"] = {"why": self.accepted_why}
        return out


@dataclass
class Comparability:
    rows: list[DimensionRow]
    refusal: Refusal | None
    unrealized_changes: list[str]

    @property
    def comparable(self) -> bool:
        return self.refusal is None


def _equal(spec: DimensionSpec, a: Any, b: Any) -> bool:
    if dict_diff.is_mapping(a) and dict_diff.is_mapping(b):
        return not dict_diff.key_changes(a, b)  # key by key, as the table shows them
    eq = spec.equal(a, b)
    return normalize_text(a) == normalize_text(b) if eq is None else bool(eq)


def _show(value: Any) -> str:
    return "unknown" if value is None else repr(value) if isinstance(value, str) else str(value)


def _run_name(run: RunRecord) -> str:
    return f"run {run.id}" if run.id is not None else f"run {run.label!r}"


def run_value(spec: DimensionSpec, run: RunRecord, observed: dict) -> SideValue:
    """The one reading of a run's dimension (its value and source) that every stage uses,
    ``wb declare`` included. ``observed``: ``lens.observed_dimensions(run)``.

    A value the importer measured (source other than ``declared``) is the value; else what
    the lens reads from the data (``derived``), which a label must agree with; else the
    label. An unpinned identity is unknown (``unpinned`` keeps what it said)."""
    value = _reading(spec, run, observed)
    if unpinned(value.value):
        return SideValue(None, value.source, value.problems, unpinned=[_show(value.value)])
    return value


def _reading(spec: DimensionSpec, run: RunRecord, observed: dict) -> SideValue:
    declared = run.dimensions.get(spec.name)
    seen = observed.get(spec.name)
    if declared is not None and declared.source != "declared":
        return SideValue(declared.value, declared.source)  # the importer already measured it
    if seen is None:
        if declared is None:
            return SideValue()
        return SideValue(declared.value, declared.source)
    if declared is not None and spec.equal(declared.value, seen.value) is False:
        return SideValue(
            seen.value,
            seen.source,
            [f"{_run_name(run)}: the label says {_show(declared.value)} but the data show {_show(seen.value)}"],
        )
    return SideValue(seen.value, seen.source)


def dimension_values(lens: Lens, run: RunRecord) -> dict[str, SideValue]:
    """Every dimension of ``run`` (the lens's and the run's own) as the comparison reads it."""
    observed = lens.observed_dimensions(run)
    specs = {s.name: s for s in lens.dimensions}
    for name in [*run.dimensions, *observed]:
        specs.setdefault(name, DimensionSpec(name, name.replace("_", " ").capitalize(), False))
    return {name: run_value(spec, run, observed) for name, spec in specs.items()}


def side_value(lens: Lens, spec: DimensionSpec, runs: Sequence[RunRecord], observed: list[dict]) -> SideValue:
    """The value of ``spec`` over a side's runs: unknown if any run lacks it, with a
    problem when a label disagrees with its data or the runs disagree among themselves."""
    values = [run_value(spec, run, obs) for run, obs in zip(runs, observed)]
    problems = [p for v in values for p in v.problems]
    pins = [p for v in values for p in v.unpinned]
    known = [v for v in values if v.value is not None]
    if len(known) < len(values):
        if known:
            missing = ", ".join(_run_name(r) for r, v in zip(runs, values) if v.value is None)
            problems.append(f"unknown for {missing}")
        return SideValue(None, None, problems, unpinned=pins)
    groups: list[tuple[Any, list[RunRecord]]] = []  # the side's distinct values, with their runs
    for run, v in zip(runs, values):
        group = next((g for g in groups if _equal(spec, g[0], v.value)), None)
        if group is None:
            groups.append((v.value, [run]))
        else:
            group[1].append(run)
    disagree = ""
    if len(groups) > 1:
        disagree = "runs disagree: " + "; ".join(
            f"{', '.join(_run_name(r) for r in rs)} {'has' if len(rs) == 1 else 'have'} {_show(value)}"
            for value, rs in groups
        )
    first = known[0]
    sources = {v.source for v in values}
    return SideValue(
        first.value,
        first.source if len(sources) == 1 else "/".join(sorted(s or "" for s in sources)),
        problems,
        disagree=disagree,
    )


def _matches(spec: DimensionSpec, expected: str | None, actual: Any) -> bool:
    return expected is None or _equal(spec, expected, actual)


def disagreement(b: SideValue, c: SideValue) -> str:
    """Which runs of a side disagree with the others, both sides named ("" when none)."""
    return "; ".join(f"{side} {v.disagree}" for side, v in (("baseline", b), ("candidate", c)) if v.disagree)


_CANNOT_CHECK = "; the declared change cannot be checked"


def _state(
    spec: DimensionSpec, b: SideValue, c: SideValue, change: Change, declared: bool
) -> tuple[DimensionState, str]:
    """The first that applies: the sides contradict themselves, what ran is unknown, or the values decide."""
    problems = [f"baseline {p}" if p.startswith("unknown") else p for p in b.problems]
    problems += [f"candidate {p}" if p.startswith("unknown") else p for p in c.problems]
    conflict = [p for p in problems if not p.startswith(("baseline unknown", "candidate unknown"))]
    return (
        _disagreeing_state(spec, b, c, conflict, declared)
        or _unknown_state(b, c, [p for p in problems if p not in conflict], declared)
        or _value_state(spec, b.value, c.value, change, declared)
    )


def _disagreeing_state(
    spec: DimensionSpec, b: SideValue, c: SideValue, conflict: list[str], declared: bool
) -> tuple[DimensionState, str] | None:
    """Different when the records conflict, or when a side disagrees with itself where it matters; else mixed."""
    mixed = disagreement(b, c)
    if conflict or (mixed and (spec.must_match or declared)):
        return DIFFERENT, "; ".join([*conflict, *([mixed] if mixed else [])])
    if mixed:
        return MIXED, mixed
    return None


def _unknown_state(b: SideValue, c: SideValue, partial: list[str], declared: bool) -> tuple[DimensionState, str] | None:
    """Unknown when a side is not pinned, a value is missing, or the values cannot be read."""
    cannot_check = _CANNOT_CHECK if declared else ""
    if b.unpinned or c.unpinned:
        shown = "; ".join(
            f"{side} {', '.join(dict.fromkeys(v.unpinned))}"
            for side, v in (("baseline", b), ("candidate", c))
            if v.unpinned
        )
        return UNKNOWN, f"not pinned, so what ran is unknown: {shown}" + cannot_check
    if b.value is None or c.value is None:
        side = {(True, True): "both sides", (True, False): "the baseline", (False, True): "the candidate"}[
            (b.value is None, c.value is None)
        ]
        note = f"missing on {side}" + (f" ({'; '.join(partial)})" if partial else "")
        return UNKNOWN, note + cannot_check
    unread = dict_diff.unread_note(b.value, c.value)
    if unread:
        return UNKNOWN, unread + cannot_check
    return None


def _value_state(
    spec: DimensionSpec, baseline: Any, candidate: Any, change: Change, declared: bool
) -> tuple[DimensionState, str]:
    """Both values known: same, different, or the declared change as it was declared."""
    if _equal(spec, baseline, candidate):
        return SAME, "declared as the change, but it did not happen: both sides are the same" if declared else ""
    if not declared:
        return DIFFERENT, ""
    if not spec.changeable:
        return DIFFERENT, f"{spec.title.lower()} cannot be the change under test: the windows cannot isolate a change"
    frm, to = change if change else (None, None)
    if not (_matches(spec, frm, baseline) and _matches(spec, to, candidate)):
        return (
            DIFFERENT,
            f"declared {_show(frm)} → {_show(to)}, but the runs show {_show(baseline)} → {_show(candidate)}",
        )
    return CHANGED, ""


def _refusal(row: DimensionRow, also: Sequence[DimensionRow]) -> Refusal:
    what = f"{row.title} ({row.name})"
    also_names = tuple(r.name for r in also) if also else UNSET
    if row.self_contradicting:
        role = "is the declared change" if row.declared_change else "must match"
        reason = (
            f"{what} {role}, but a side disagrees with itself ({row.disagreeing}); "
            "to compare: name only runs that agree on it on each side"
        )
        return Refusal(dimension=row.name, reason=reason, also=also_names)
    if row.state == UNKNOWN:
        reason = (
            f"{what} must match but is unknown: baseline {_show(row.baseline.value)}, "
            f"candidate {_show(row.candidate.value)} ({row.note})"
        )
    elif row.note and _show(row.baseline.value) == _show(row.candidate.value):
        # Both sides read alike; what blocks is a label its own data contradict.
        reason = f"{what} must match, but the data contradict the label: {row.note}"
    else:
        reason = (
            f"{what} must match but differs: baseline {_show(row.baseline.value)}, candidate "
            f"{_show(row.candidate.value)}"
        )
        if row.note:
            reason += f" ({row.note})"
    hint = (
        f"--change {row.name}=FROM:TO, "
        if row.state == DIFFERENT and not row.note and row.name != WINDOW_DIMENSION
        else ""
    )
    reason += f"; to compare anyway: {hint}--accept {row.name} --why TEXT"
    return Refusal(dimension=row.name, reason=reason, also=also_names)


def _change_pair(name: str, value: Any) -> Change:
    """A declared change as ``(from, to)``: ``None`` or ``()`` declare it without values."""
    if value is None or (isinstance(value, tuple | list) and len(value) == 0):
        return None
    if isinstance(value, tuple | list) and len(value) == 2:
        return (None if value[0] is None else str(value[0]), None if value[1] is None else str(value[1]))
    raise UsageError(f"--change {name}: expected no values or FROM and TO, got {value!r}")


def check(
    lens: Lens,
    baseline: Sequence[RunRecord],
    candidate: Sequence[RunRecord],
    changes: dict[str, Change] | None = None,
    accepts: dict[str, str] | None = None,
) -> Comparability:
    changes = {name: _change_pair(name, value) for name, value in (changes or {}).items()}
    accepts = dict(accepts or {})
    specs = list(lens.dimensions)
    known = {s.name for s in specs}
    # Dimensions the runs carry beyond the lens contract are reported, never required.
    for run in [*baseline, *candidate]:
        for name in run.dimensions:
            if name not in known:
                known.add(name)
                specs.append(DimensionSpec(name, name.replace("_", " ").capitalize(), False))
    moved = boundaries.compare_boundaries(
        baseline, candidate
    )  # None unless both sides' runs record one (training traces)
    if moved is not None:
        known.add(boundaries.DIMENSION)
    for what, names in (("--change", changes), ("--accept", accepts)):
        for name in names:
            if name not in known:
                raise UsageError(
                    f"{what} {name}: no such dimension in the {lens.name} lens or the runs (known: "
                    f"{', '.join(sorted(known))})"
                )
    for name, why in accepts.items():
        if not str(why).strip():
            raise UsageError(f"--accept {name} needs a reason (--why TEXT)")

    obs_b = [lens.observed_dimensions(r) for r in baseline]
    obs_c = [lens.observed_dimensions(r) for r in candidate]
    rows = []
    for spec in specs:
        b = side_value(lens, spec, baseline, obs_b)
        c = side_value(lens, spec, candidate, obs_c)
        declared = spec.name in changes
        state, note = _state(spec, b, c, changes.get(spec.name), declared)
        rows.append(
            DimensionRow(
                spec.name,
                spec.title,
                spec.must_match,
                state,
                b,
                c,
                note,
                declared,
                accepts.get(spec.name),
                disagreement(b, c),
            )
        )
    if moved is not None:  # training: a moved step boundary is a finding with both values, not a delta
        rows.append(
            DimensionRow(
                boundaries.DIMENSION,
                boundaries.TITLE,
                True,
                DIFFERENT if moved.differs else SAME,
                SideValue(moved.baseline, "measured"),
                SideValue(moved.candidate, "measured"),
                moved.note,
                accepted_why=accepts.get(boundaries.DIMENSION),
            )
        )
    # A side that disagrees with itself is named first: no other difference can be read until it agrees.
    blocking = sorted((r for r in rows if r.blocks), key=lambda r: not r.self_contradicting)
    refusal = _refusal(blocking[0], blocking[1:]) if blocking else None
    unrealized = [r.name for r in rows if r.declared_change and r.state == SAME]
    return Comparability(rows, refusal, unrealized)
