"""The diagnosis (``wb diagnose --json``) as frozen, typed records.

``diagnose()`` works on mutable events while it places and links them; what it concludes
is a :class:`DiagnosisReport`. ``to_json()`` is the printed document key for key (fields
are declared in the document's order; keys that the document leaves out when they do not
apply default to ``None`` and are omitted), ``from_json()`` decodes it back. Evidence
items and an event's parsed ``values`` stay JSON objects: their fields depend on the
source (a log line, a flight-recorder entry, a mismatch record) and come from untrusted
files. The JSON Schema is in docs/schema/diagnosis.json.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from workbench.diagnostics.hang_records import HangsRecord
from workbench.vocabulary import Record

FORMAT = "wb.diagnosis"
VERSION = 1

EventRole = Literal["failure", "follower", "outcome", "info"]
FirstFailureStatus = Literal["named", "undecided", "none"]
GroupStatus = Literal["missing", "all-entered", "undecided", "idle"]
CollectivesVerdict = Literal["missing-ranks", "undecided", "mismatch", "no-missing-rank"]

# One evidence item: at least where it was read ("file", and "line" for a log line). Any, not
# ``object``: msgspec.json.schema has no schema for ``object`` (docs/schema/diagnosis.json says
# ``{"type": "object"}``, which only an Any value gives), nor for the recursive ``JSON`` alias.
Evidence = dict[str, Any]


class EventRecord(Record, frozen=True, kw_only=True):
    """One failure-relevant line placed on the clock (``workbench.diagnostics.events``)."""

    kind: str
    role: EventRole
    file: str
    line: int | None
    text: str
    time: float | None  # epoch seconds (UTC) when known
    resolution_s: float
    host: str | None
    rank: int | None
    values: dict[str, Any]  # what the parser read from the line (untrusted; events.EventValues): Any as Evidence
    notes: tuple[str, ...]
    since_boot_s: float | None
    time_zone_assumed: bool


class TimelineRow(EventRecord, frozen=True, kw_only=True):
    label: str  # how the row relates to the first failure


class SkippedFile(Record, frozen=True, kw_only=True):
    file: str
    why: str


class LogFormat(Record, frozen=True, kw_only=True):
    """The log format recognised in one text file (``workbench.diagnostics.logs.log_format``)."""

    file: str
    format: str


class Inputs(Record, frozen=True, kw_only=True):
    files: tuple[str, ...]
    skipped: tuple[SkippedFile, ...]
    flight_recorder_dumps: int
    log_formats: tuple[LogFormat, ...] = ()


class Clock(Record, frozen=True, kw_only=True):
    default_uncertainty_s: float
    per_host_uncertainty_s: dict[str, float]
    boot_times: dict[str, float]  # host -> epoch seconds at boot
    notes: tuple[str, ...]


class FirstFailureRecord(Record, frozen=True, kw_only=True):
    status: FirstFailureStatus
    event: EventRecord | None
    candidates: tuple[EventRecord, ...]
    reason: str
    only_consequences_seen: bool


class Where(Record, frozen=True, kw_only=True, omit_defaults=True):
    hosts: tuple[str, ...] | None = None
    ranks: tuple[int, ...] | None = None
    ranks_never_entered: tuple[int, ...] | None = None


class Retry(Record, frozen=True, kw_only=True, omit_defaults=True):
    rule: str
    what_would_change_it: str
    xid_action: str | None = None


class FailureClassRecord(Record, frozen=True, kw_only=True, omit_defaults=True):
    """A label for the evidence, not a proven cause; ``retry`` says what would have to change."""

    klass: str = msgspec.field(name="class")
    role: str | None  # communication: victim | origin | origin-undetermined
    where: Where
    detail: str
    evidence: tuple[Evidence, ...]
    candidate_classes: tuple[str, ...] | None = None
    retry: Retry | None = None


class GroupRecord(Record, frozen=True, kw_only=True):
    """What the flight-recorder dumps say of one process group."""

    group: str
    ranks: tuple[int, ...]
    desc: str
    status: GroupStatus
    seq: int | None
    op: str | None
    size: str | None
    dtype: str | None
    never_entered: tuple[int, ...]
    never_entered_inferred_from_absence: tuple[int, ...]
    entered: tuple[int, ...]
    no_dump: tuple[int, ...]
    unknown: tuple[int, ...]
    last_completed_by_all: int | None
    last_completed_by_all_undecided_between: tuple[int, int] | None
    stale_completion_counters: tuple[int, ...]
    peer_completed: int | None
    waiting_since: float | None
    mismatches: tuple[Evidence, ...]
    evidence: tuple[Evidence, ...]


class CollectivesRecord(Record, frozen=True, kw_only=True):
    verdict: CollectivesVerdict
    ranks_with_dumps: tuple[int, ...]
    expected_ranks: tuple[int, ...]
    missing_dumps: tuple[int, ...]
    never_entered: tuple[int, ...]
    undecided_ranks: tuple[int, ...]
    versions: dict[str, tuple[int, ...]]  # dump version -> ranks
    groups: tuple[GroupRecord, ...]
    notes: tuple[str, ...]


class WatchdogCounters(Record, frozen=True, kw_only=True):
    """Per process group: ranks whose last enqueued work is below the work another rank timed out on."""

    group: str
    stuck_seq: int
    never_enqueued: tuple[int, ...]
    ranks_reporting: tuple[int, ...]
    evidence: tuple[Evidence, ...]


class Observation(Record, frozen=True, kw_only=True):
    """What is established, worded as an observation (not a cause), with its evidence."""

    text: str
    evidence: tuple[Evidence, ...]


class DiagnosisReport(Record, frozen=True, kw_only=True, omit_defaults=True):
    """``wb diagnose --json``; ``pinned``: the observation refs when ``--pin`` pinned them."""

    format: str
    version: int
    inputs: Inputs
    clock: Clock
    first_failure: FirstFailureRecord
    failure_class: FailureClassRecord
    collectives: CollectivesRecord | None
    watchdog_counters: tuple[WatchdogCounters, ...]
    timeline: tuple[TimelineRow, ...]
    observations: tuple[Observation, ...]
    xid_catalog_as_of: str
    # The recorder's hang / termination snapshots of several ranks (hangs.py), when given.
    hangs: HangsRecord | None = None
    pinned: tuple[str, ...] | None = None

    def with_pinned(self, refs: list[str]) -> "DiagnosisReport":
        return msgspec.structs.replace(self, pinned=tuple(refs))
