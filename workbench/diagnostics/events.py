"""One failure-relevant line from a log, a dump or an error file, placed (when possible) on
a wall clock.

``role`` says how the event can take part in the first-failure question:

* ``failure``: can start an incident by itself (Xid, OOM, exception, segfault, ...);
* ``follower``: usually a consequence of a failure elsewhere (watchdog timeout, remote NCCL
  error, teardown signal, sympathetic Xid);
* ``outcome``: how a process ended (exit code, signal, Slurm cancel);
* ``info``: context (OOM reaper, informational Xid).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.diagnostics.report import EventRecord, Evidence, TimelineRow

ROLES = ("failure", "follower", "outcome", "info")


@dataclass
class PartialTime:
    """A stamp without a year (glog, syslog): the year comes from other sources, if any."""

    month: int
    day: int
    hour: int
    minute: int
    second: float


@dataclass
class Event:
    kind: str
    role: str
    file: str
    line: int | None
    text: str
    time: float | None = None  # epoch seconds (UTC) when known
    resolution: float = 0.0  # precision of the stamp, seconds
    host: str | None = None
    rank: int | None = None
    values: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    since_boot: float | None = None  # boot-relative stamps (dmesg, /dev/kmsg)
    partial: PartialTime | None = None
    naive: bool = False  # stamp had no zone; read with the assumed offset

    @property
    def origin(self) -> str:
        """Where it happened, for humans: host and rank when known."""
        parts = []
        if self.host:
            parts.append(self.host)
        if self.rank is not None:
            parts.append(f"rank {self.rank}")
        return " ".join(parts) or f"(unnamed node, {self.file.rsplit('/', 1)[-1]})"

    def evidence(self) -> Evidence:
        ev: Evidence = {"file": self.file, "line": self.line, "text": self.text}
        if self.rank is not None:
            ev["rank"] = self.rank
        if self.host:
            ev["host"] = self.host
        if self.time is not None:
            ev["time"] = self.time
        if self.values:
            ev["values"] = self.values
        return ev

    def record(self) -> EventRecord:
        return EventRecord(**self._fields())

    def row(self, label: str) -> TimelineRow:
        """The event as a timeline row, labelled by how it relates to the first failure."""
        return TimelineRow(**self._fields(), label=label)

    def _fields(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "role": self.role,
            "file": self.file,
            "line": self.line,
            "text": self.text,
            "time": self.time,
            "resolution_s": self.resolution,
            "host": self.host,
            "rank": self.rank,
            "values": self.values,
            "notes": tuple(self.notes),
            "since_boot_s": self.since_boot,
            "time_zone_assumed": self.naive,
        }
