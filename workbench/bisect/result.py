"""A bisection as frozen, typed records (``wb bisect status|report --json``).

The search keeps its working state as one JSON document in the store (``store.bisect``:
rewritten after every step, so ``resume`` continues where it stopped); these records are
that document read back. ``to_json()`` gives the printed document key for key (fields are
declared in the document's order). Keys the search writes only at some point (a
candidate's effect once it was tested, a step's plan once it ran, ``stopped`` while a
step cannot run) are ``UNSET`` until then and are left out, so a ``null`` the search
wrote stays a ``null``. The JSON Schema is in docs/schema/bisection.json.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

from workbench.vocabulary import Record

# A candidate as the search left it (an undecided step is stored as a skip), and the search itself.
CandidateStatus = Literal["untested", "good", "bad", "between", "skip"]
BisectionStatus = Literal["started", "bisecting", "stopped", "done", "no-regression"]


class Spec(Record, frozen=True, kw_only=True):
    """What the user asked for (stored with the bisection; the commands are theirs)."""

    name: str
    bench: tuple[str, ...]
    workdir: str
    build: tuple[str, ...] | None = None
    repo: str | None = None  # git mode
    good: str = ""
    bad: str = ""
    candidates_file: str | None = None  # list mode
    lens: str = "training"
    metric: str | None = None
    statistic: str | None = None
    higher_is_better: bool = False
    delta: float = 0.02
    max_rounds: int = 20
    timeout_s: float = 600.0
    spending: str = "obrien-fleming"
    investigation: int | None = None
    keep_workspaces: bool = False  # a finished bisection removes its workspaces unless asked to keep them


Interval = tuple[float, float]


class CandidateState(Record, frozen=True, kw_only=True):
    """A change and what the search knows of it (the effect fields once it was tested)."""

    rev: str  # a full commit id, or the version string
    title: str
    status: CandidateStatus
    ratio: float | None | UnsetType = UNSET
    ci95: Interval | None | UnsetType = UNSET
    verdict: str | None | UnsetType = UNSET
    plan: str | None | UnsetType = UNSET
    comparison_id: int | None | UnsetType = UNSET
    reason: str | None | UnsetType = UNSET
    against: str | UnsetType = UNSET  # the reference it was compared with


class Step(Record, frozen=True, kw_only=True):
    """One controlled comparison, candidate against reference. A candidate that did not
    build has ``klass`` undecided and a ``reason``, and no plan."""

    step: int
    endpoint: bool
    reference: int  # index into the candidates
    candidate: int
    rev: str
    against: str
    verdict: str | None  # the sequential decision (a Verdict), None when undecided
    ratio: float | None
    ci95: Interval | None
    plan: str | UnsetType = UNSET
    comparison_id: int | UnsetType = UNSET
    rounds_used: int | UnsetType = UNSET
    stopped_at_round: int | None | UnsetType = UNSET
    why: str | UnsetType = UNSET
    klass: str | UnsetType = msgspec.field(default=UNSET, name="class")  # good | bad | between | undecided
    reason: str | UnsetType = UNSET


class Endpoint(Record, frozen=True, kw_only=True):
    """The whole regression being followed: bad against the current reference."""

    ratio: float | None
    ci95: Interval | None
    step: int


class Current(Record, frozen=True, kw_only=True):
    """The step in progress (its plan exists; resume runs it again)."""

    plan: str
    reference: int
    candidate: int
    endpoint: bool


class Split(Record, frozen=True, kw_only=True):
    rev: str
    ratio: float
    of: float  # the whole regression it is part of
    share: float | None  # log share of the whole


class Result(Record, frozen=True, kw_only=True):
    """The answer (an observation, not a cause): found, range, no-regression, ..."""

    outcome: str
    first_bad: str | None | UnsetType = UNSET
    last_good: str | UnsetType = UNSET
    text: str
    skipped: tuple[str, ...] | UnsetType = UNSET
    splits: tuple[Split, ...] | UnsetType = UNSET


class BisectionState(Record, frozen=True, kw_only=True):
    """The search's working state as stored (``bisection.state``), rewritten after every step."""

    candidates: tuple[CandidateState, ...]
    lo: int  # last good
    hi: int  # first bad
    reference: int  # what candidates are compared with (the good endpoint, or a split point)
    endpoint: Endpoint | None = None
    steps: tuple[Step, ...] = ()
    current: Current | None = None
    splits: tuple[Split, ...] = ()
    result: Result | None = None
    stopped: str | UnsetType = UNSET  # why the last run stopped (resume tries again)
    workspaces: tuple[str, ...] | UnsetType = UNSET  # kept at the end (--keep-workspaces); else removed


class BisectionReport(Record, frozen=True, kw_only=True):
    """A bisection as stored: its spec, the candidates, the open range [lo, hi], the steps."""

    id: int
    name: str
    status: BisectionStatus
    spec: Spec
    candidates: tuple[CandidateState, ...]
    lo: int  # last good
    hi: int  # first bad
    reference: int
    endpoint: Endpoint | None
    steps: tuple[Step, ...]
    current: Current | None
    splits: tuple[Split, ...]
    result: Result | None
    stopped: str | UnsetType = UNSET  # why the last run stopped (resume tries again)
    workspaces: tuple[str, ...] | UnsetType = UNSET  # kept at the end (--keep-workspaces); else removed
    steps_done: int

    @classmethod
    def of(cls, bisection_id: int, status: str, spec: Spec, state: BisectionState) -> "BisectionReport":
        fields = {f: getattr(state, f) for f in state.__struct_fields__}
        return cls(id=bisection_id, name=spec.name, status=status, spec=spec, **fields, steps_done=len(state.steps))
