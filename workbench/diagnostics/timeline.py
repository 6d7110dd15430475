"""Put events from many ranks and nodes on one clock and decide which failure came first.

Each node's clock is only known to within an uncertainty (NTP offset, or whatever the user
states); each stamp also has a resolution (one second for ``dmesg -T`` and torchrun). Two
events on different nodes are ordered only when they are further apart than the sum of
their uncertainties; on the same node only the resolutions count. The first failure is
named only when it precedes every other candidate by more than that margin, otherwise it
is ``undecided`` and the tied candidates are listed. Within one log of one origin the lines
are in the order they were written: when no failure has a placed stamp but they all come
from one such log, the first failure is its earliest failure line.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone

from workbench.diagnostics.events import Event
from workbench.diagnostics.result import Clock, FirstFailureRecord, FirstFailureStatus

DEFAULT_CLOCK_UNCERTAINTY_S = 1.0
# Consequences that mean a failure was already under way elsewhere (an init-time NCCL WARN
# or a teardown signal does not).
HANG_SIGNS = frozenset({"watchdog_timeout", "watchdog_counters", "dump_signal", "nccl_error"})


@dataclass
class ClockPolicy:
    default_uncertainty: float = DEFAULT_CLOCK_UNCERTAINTY_S
    per_host: dict[str, float] = field(default_factory=dict)
    boot_times: dict[str, float] = field(default_factory=dict)  # host -> epoch seconds at boot
    year: int | None = None  # --year: for stamps without one that their own file does not date

    def for_host(self, host: str | None) -> float:
        if host is not None and host in self.per_host:
            return self.per_host[host]
        return self.default_uncertainty

    def record(self, notes: list[str]) -> Clock:
        return Clock(
            default_uncertainty_s=self.default_uncertainty,
            per_host_uncertainty_s=self.per_host,
            boot_times=self.boot_times,
            notes=tuple(notes),
        )


def place(events: list[Event], policy: ClockPolicy) -> list[str]:
    """Give partial and boot-relative stamps a wall time where the inputs allow; return notes."""
    notes: list[str] = []
    years = Counter(datetime.fromtimestamp(e.time, timezone.utc).year for e in events if e.time is not None)
    year = policy.year or (years.most_common(1)[0][0] if years else None)
    source = "given with --year" if policy.year else "taken from other stamps in the inputs"
    unplaced_partial = dated = 0
    for e in events:
        if e.time is None and e.partial is not None:
            if year is None:
                unplaced_partial += 1
                e.values["stamp_without_year"] = e.partial.text()
                continue
            try:
                e.time = e.partial.at(year)
            except ValueError:
                continue
            e.naive, dated = True, dated + 1
            e.notes.append(f"year {year} {source}")
        if e.time is None and e.since_boot is not None and e.host in policy.boot_times:
            e.time = policy.boot_times[e.host] + e.since_boot
            e.notes.append("boot-relative stamp placed with the stated boot time")
    if dated:
        notes.append(f"{dated} stamp{'s' if dated != 1 else ''} without a year read in {year} ({source})")
    if unplaced_partial:
        notes.append(
            f"{unplaced_partial} events have stamps without a year and no dated line in their file or the other "
            f"inputs to take one from: left unplaced (give --year)"
        )
    boot = sum(1 for e in events if e.time is None and e.since_boot is not None)
    if boot:
        notes.append(f"{boot} kernel-log events have boot-relative stamps; give --boot-time HOST=ISO to place them")
    if any(e.naive for e in events):
        notes.append("stamps without a time zone were read as UTC")
    return notes


def uncertainty(e: Event, policy: ClockPolicy) -> float:
    return policy.for_host(e.host) + e.resolution


def margin(a: Event, b: Event, policy: ClockPolicy) -> float:
    """How far apart ``a`` and ``b`` must be before their order is known."""
    if a.host is not None and a.host == b.host:
        return a.resolution + b.resolution
    return uncertainty(a, policy) + uncertainty(b, policy)


def _same_origin(a: Event, b: Event) -> bool:
    return a.host == b.host and a.rank == b.rank and (a.host is not None or a.rank is not None or a.file == b.file)


@dataclass
class FirstFailure:
    status: FirstFailureStatus
    event: Event | None = None
    candidates: list[Event] = field(default_factory=list)
    reason: str = ""
    only_consequences: bool = False  # no failure-role event: the earliest consequence is used

    def record(self) -> FirstFailureRecord:
        return FirstFailureRecord(
            status=self.status,
            event=self.event.record() if self.event else None,
            candidates=tuple(c.record() for c in self.candidates),
            reason=self.reason,
            only_consequences_seen=self.only_consequences,
        )


def first_failure(events: list[Event], policy: ClockPolicy) -> FirstFailure:
    failures = [e for e in events if e.role == "failure"]
    only_consequences = False
    if not failures:
        failures = [e for e in events if e.role == "follower"]
        only_consequences = bool(failures)
    if not failures:
        return FirstFailure("none", reason="no failure signature found in the inputs")
    placed = sorted((e for e in failures if e.time is not None), key=lambda e: e.time)
    if not placed:
        return _by_line(failures, only_consequences)
    first = placed[0]
    ties = [e for e in placed[1:] if not _same_origin(e, first) and e.time - first.time <= margin(first, e, policy)]
    earlier = [
        e
        for e in events
        if (e.role == "failure" or e.kind in HANG_SIGNS)
        and e.time is not None
        and not _same_origin(e, first)
        and first.time - e.time > margin(first, e, policy)
    ]
    unplaced = [
        e for e in failures if e.time is None and not _same_origin(e, first) and "same_failure_as" not in e.values
    ]
    doubt = _doubt(first, ties, earlier, unplaced, policy, only_consequences)
    if doubt is not None:
        return doubt
    later = [e for e in placed if not _same_origin(e, first)]
    reason = (
        f"precedes the next failure elsewhere ({later[0].origin}) by {later[0].time - first.time:.3f} s, more than the "
        f"clock uncertainty ({margin(first, later[0], policy):.3f} s)"
        if later
        else "is the only origin with a failure signature"
    )
    return FirstFailure("named", first, [first], reason=reason, only_consequences=only_consequences)


def _by_line(failures: list[Event], only_consequences: bool) -> FirstFailure:
    """No failure has a placed time: the earliest line of the only log with failures, else undecided."""
    earliest = _earliest_line_of_one_log(failures)
    if earliest is not None:
        return FirstFailure(
            "named",
            earliest,
            [earliest],
            reason=f"is the earliest failure line (line {earliest.line}) of the only log with failures, whose "
            "lines are in the order they were written; no failure has a placed time stamp to order by",
            only_consequences=only_consequences,
        )
    return FirstFailure(
        "undecided",
        candidates=failures[:10],
        reason="no failure event has a usable time stamp",
        only_consequences=only_consequences,
    )


def _doubt(
    first: Event,
    ties: list[Event],
    earlier: list[Event],
    unplaced: list[Event],
    policy: ClockPolicy,
    only_consequences: bool,
) -> FirstFailure | None:
    """Undecided, and why, when another origin ties with the first failure, precedes it, or cannot be placed."""
    if ties:
        gap = ties[0].time - first.time
        return FirstFailure(
            "undecided",
            first,
            [first, *_one_per_origin(ties)],
            reason=f"{first.origin} and {ties[0].origin} are {gap:.3f} s apart, within the clock uncertainty "
            f"({margin(first, ties[0], policy):.3f} s)",
            only_consequences=only_consequences,
        )
    if earlier:
        return FirstFailure(
            "undecided",
            first,
            [earlier[0], first],
            reason=f"an earlier error on {earlier[0].origin} precedes it",
            only_consequences=only_consequences,
        )
    if unplaced:
        return FirstFailure(
            "undecided",
            first,
            [first, *unplaced[:5]],
            reason=f"{len(unplaced)} failure events elsewhere have no time stamp and cannot be ordered",
            only_consequences=only_consequences,
        )
    return None


def _earliest_line_of_one_log(failures: list[Event]) -> Event | None:
    """The first failure by line when every failure is a line of one log of one origin, else None."""
    lines = [e for e in failures if e.line is not None]
    if not lines or len(lines) < len(failures):
        return None
    first = min(lines, key=lambda e: e.line or 0)
    if all(e.file == first.file and _same_origin(e, first) for e in failures):
        return first
    return None


def _one_per_origin(events: list[Event]) -> list[Event]:
    seen, out = set(), []
    for e in events:
        key = (e.host, e.rank, e.file if e.host is None and e.rank is None else None)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def labelled(events: list[Event], first: FirstFailure) -> list[tuple[Event, str]]:
    """The timeline: events by time (unplaced last), each with how it relates to the first failure."""
    candidates = {id(c) for c in first.candidates}
    out = []
    for e in sorted(events, key=lambda e: (e.time is None, e.time or 0.0, e.file, e.line or 0)):
        if first.status == "named" and e is first.event:
            label = "first failure"
        elif id(e) in candidates:
            label = "candidate"
        elif e.time is None:
            label = "restates a stamped line" if "same_failure_as" in e.values else "unplaced"
        elif first.status == "named" and first.event is not None and e.time >= first.event.time:
            label = "follows first failure"
        elif first.event is not None and e.time < first.event.time:
            label = "before"
        else:
            label = ""
        out.append((e, label))
    return out
