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
from datetime import datetime, timezone
from typing import TypedDict

from workbench.diagnostics.result import EventRecord, EventRole, Evidence, TimelineRow

ROLES = ("failure", "follower", "outcome", "info")

# What a parser read from a line, by key (every key an event of some kind can carry; each kind
# sets its own few). Untrusted text from logs, read into numbers and flags where the signature
# says so. Two keys hold either of two types by source: ``signal`` (a number from an exit code,
# a name such as SIGTERM from a teardown line) and ``error_file`` (True: the event was read from a
# torchelastic error file; a path: a torchrun report names that rank's file).
EventValues = TypedDict(
    "EventValues",
    {
        "code": int,
        "pci": str,
        "detail": str,
        "mig_gpu_instance": int,
        "pid": int | None,  # None: the Xid line says pid=<unknown>
        "process": str,
        "library": str,
        "inferred": bool,
        "fatal": bool,
        "requested": str,
        "gpu": int,
        "signature": str,
        "cgroup": bool,
        "constraint": str,
        "events": int,
        "step": str,
        "node": str,
        "tasks": str,
        "seq": int | None,  # None: a collective wait whose group has no stuck seq
        "op": str,
        "timeout_ms": int,
        "ran_ms": int,
        "rank": int,
        "numel_in": int,
        "numel_out": int,
        "pg_id": str,
        "pg_desc": str,
        "work": int,
        "last_enqueued": int,
        "last_completed": int,
        "from_rank": int | str,  # "self": this local rank
        "host": str,
        "cuda_dev": int,
        "where": str,
        "message": str,
        "signal": int | str,
        "name": str,
        "signal_name": str,
        "exitcode": int,
        "local_rank": int,
        "how": str,
        "job": str,
        "at": str,
        "reason": str,
        "remote": bool,
        "exception": str,
        "error_file": bool | str,
        "error_code": object,  # the error file's own errorCode, as it stands there
        "root_cause": bool,
        "traceback": str,
        "catalog": dict[str, object] | None,  # the Xid's catalog entry (None: not in the catalog)
        "class": str,
        "meaning": str,
        "printk_level": int,
        "dropped": int,
        "same_failure_as": str,  # file:line of the stamped line this one restates
        "group": str,
        "never_entered": list[int],
        "phase": str,  # the start-up phase an engine log had named before this line (engine_logs)
        "engine": str,  # vllm | sglang: whose KV-cache refusal this is
        "max_model_len": int,
        "needed_gib": float,
        "available_gib": float,
        "estimated_max_model_len": int,
        "kv_cache_tokens": int,
        "interface": str,  # a network link's name (host_events)
        "state": str,  # down | up
        "step_s": float,  # a clock step, seconds
        "stamp_without_year": str,  # "MM-DD HH:MM:SS" of a stamp no year could be found for
    },
    total=False,
)


class _Fields(TypedDict):
    """An event's fields as its record (and a timeline row) takes them."""

    kind: str
    role: EventRole
    file: str
    line: int | None
    text: str
    time: float | None
    resolution_s: float
    host: str | None
    rank: int | None
    values: dict[str, object]  # the record's own copy
    notes: tuple[str, ...]
    since_boot_s: float | None
    time_zone_assumed: bool


@dataclass
class PartialTime:
    """A stamp without a year (glog, syslog): the year comes from other sources, if any."""

    month: int
    day: int
    hour: int
    minute: int
    second: float

    def at(self, year: int) -> float:
        """Epoch seconds of the stamp in ``year``, read as UTC (ValueError: no such day)."""
        whole = int(self.second)
        dt = datetime(year, self.month, self.day, self.hour, self.minute, whole, tzinfo=timezone.utc)
        return dt.timestamp() + (self.second - whole)

    def text(self) -> str:
        """The stamp as the log wrote it, without a year: ``MM-DD HH:MM:SS``."""
        return f"{self.month:02d}-{self.day:02d} {self.hour:02d}:{self.minute:02d}:{int(self.second):02d}"


@dataclass
class Event:
    kind: str
    role: EventRole
    file: str
    line: int | None
    text: str
    time: float | None = None  # epoch seconds (UTC) when known
    resolution: float = 0.0  # precision of the stamp, seconds
    host: str | None = None
    rank: int | None = None
    values: EventValues = field(default_factory=lambda: EventValues())
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

    def _fields(self) -> _Fields:
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
            "values": dict(self.values),
            "notes": tuple(self.notes),
            "since_boot_s": self.since_boot,
            "time_zone_assumed": self.naive,
        }
