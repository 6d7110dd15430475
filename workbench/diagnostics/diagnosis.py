"""``diagnose(paths)``: read rank dumps and logs, build the timeline, name the first failure
(or say ``undecided``), classify it, match collectives, and word what is established as
observations with evidence.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.numbers import utc_time
from workbench.diagnostics import classify as cls
from workbench.diagnostics import flight_recorder as fr
from workbench.diagnostics import hangs as hang_snapshots
from workbench.diagnostics import host_events, logs, timeline, xid_catalog
from workbench.diagnostics.events import Event
from workbench.diagnostics.hang_records import HangsRecord
from workbench.diagnostics.result import (
    FORMAT,
    VERSION,
    DiagnosisReport,
    Evidence,
    Inputs,
    LogFormat,
    Observation,
    SkippedFile,
    WatchdogCounters,
)
from workbench.errors import BadInput
from workbench.importers import scan_directory
from workbench.inputs import READ_ERRORS, open_binary

_SKIP_NAMES = {".DS_Store"}


@dataclass
class Diagnosis:
    """The working state of one diagnosis (events stay mutable while they are placed);
    :meth:`report` is what it concludes."""

    files: list[str]
    skipped: list[SkippedFile]
    policy: timeline.ClockPolicy
    clock_notes: list[str]
    events: list[Event]
    first: timeline.FirstFailure
    failure_class: cls.FailureClass
    collectives: fr.CollectiveAnalysis | None
    watchdog: list[WatchdogCounters]
    observations: list[Observation] = field(default_factory=list)
    log_formats: dict[str, str] = field(default_factory=dict)  # file -> log format recognised
    hangs: HangsRecord | None = None  # the recorder's hang / termination snapshots (hangs.py)

    def report(self) -> DiagnosisReport:
        return DiagnosisReport(
            format=FORMAT,
            version=VERSION,
            inputs=Inputs(
                files=tuple(self.files),
                skipped=tuple(self.skipped),
                flight_recorder_dumps=len(self.collectives.ranks_with_dumps) if self.collectives else 0,
                log_formats=tuple(LogFormat(file=f, format=fmt) for f, fmt in self.log_formats.items()),
            ),
            clock=self.policy.record(self.clock_notes),
            first_failure=self.first.record(),
            failure_class=self.failure_class.record(),
            collectives=self.collectives.record() if self.collectives else None,
            watchdog_counters=tuple(self.watchdog),
            timeline=tuple(e.row(label) for e, label in timeline.labelled(self.events, self.first)),
            observations=tuple(self.observations),
            xid_catalog_as_of=xid_catalog.catalog_date(),
            hangs=self.hangs,
        )

    def to_json(self) -> dict[str, Any]:
        """``wb diagnose --json`` (without ``pinned``)."""
        return self.report().to_json()


def evidence_items(observation: Observation) -> list[Evidence]:
    """An observation's evidence as investigation evidence items (each with a ``kind``)."""
    out = []
    for ev in observation.evidence:
        item = dict(ev)
        if "kind" in item:  # a flight-recorder mismatch record carries its own kind
            item["mismatch"] = item.pop("kind")
        values = item.get("values")
        if item.get("line") is not None:
            kind = "log-line"
        elif {"seq", "group", "missing_dumps", "mismatch"} & set(item):
            kind = "flight-recorder"
        elif isinstance(values, dict) and values.get("error_file") is True:
            kind = "error-file"
        else:
            kind = "diagnosis"
        out.append({"kind": kind, **item})
    return out


def diagnose(
    paths: Iterable[str | Path],
    *,
    clock_uncertainty: float = timeline.DEFAULT_CLOCK_UNCERTAINTY_S,
    host_uncertainty: dict[str, float] | None = None,
    boot_times: dict[str, float] | None = None,
    year: int | None = None,
) -> Diagnosis:
    """Diagnose an incident from files and directories of rank dumps and logs; ``year`` dates
    the stamps without one that their own file does not (``--year``)."""
    policy = timeline.ClockPolicy(clock_uncertainty, dict(host_uncertainty or {}), dict(boot_times or {}), year)
    skipped: list[SkippedFile] = []
    files = _discover([Path(p) for p in paths], skipped)
    read = _Inputs()
    for path, root in files:
        read.add(path, root, skipped)
    dumps, snapshots, events, formats = read.dumps, read.snapshots, read.events, read.formats
    _link_error_files(events)
    collectives = fr.analyze(dumps) if dumps else None
    if collectives is not None:
        events.extend(_collective_waits(collectives))
    clock_notes = timeline.place(events, policy)
    _mark_restatements(events)
    first = timeline.first_failure(events, policy)
    never_entered = collectives.never_entered if collectives else []
    watchdog = _watchdog_counters(events)
    if not never_entered:
        never_entered = sorted({r for w in watchdog for r in w.never_enqueued})
    if first.status == "none" and collectives is not None:
        first.reason = "no failure signature in the logs (flight-recorder dumps record collectives, not failure times)"
    hangs = _hangs(snapshots, policy, collectives, never_entered)
    stuck = _stuck_first(hangs) if not never_entered else []
    failure_class = cls.classify(events, first, never_entered or stuck)
    if not failure_class.evidence and collectives is not None:
        failure_class.evidence = [ev for g in collectives.groups if g.status == "missing" for ev in g.evidence][:12]
    if stuck and hangs is not None and failure_class.klass == cls.COMMUNICATION and first.status == "none":
        _hang_class(failure_class, hangs)
    d = Diagnosis(
        [str(p) for p, _ in files], skipped, policy, clock_notes, events, first, failure_class, collectives, watchdog
    )
    d.hangs = hangs
    d.observations = _observations(d)
    d.log_formats = formats
    return d


@dataclass
class _Inputs:
    """What the incident's files hold, each file read by what its head says it is: a flight-recorder dump, a
    recorder snapshot, a binary file (skipped) or a log."""

    dumps: list[fr.RankDump] = field(default_factory=list)
    snapshots: list[hang_snapshots.Snapshot] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)

    def add(self, path: Path, root: Path | None, skipped: list[SkippedFile]) -> None:
        head = _head(path)
        if fr.sniff(head):
            self.dumps.append(fr.load_dump(path))
        elif hang_snapshots.sniff(head):
            _read_snapshot(path, self.snapshots, skipped)
        elif b"\x00" in head[:4096]:
            skipped.append(SkippedFile(file=str(path), why="binary, not a known dump"))
        else:
            self.formats[str(path)] = logs.log_format(path)
            self.events.extend(logs.parse_file(path, host=_host_hint(path, root), rank=logs.rank_from_path(path)))


def _read_snapshot(path: Path, snapshots: list[hang_snapshots.Snapshot], skipped: list[SkippedFile]) -> None:
    snap = hang_snapshots.load(path)
    if snap.useful:
        snapshots.append(snap)
    else:
        skipped.append(
            SkippedFile(file=str(path), why="a capture without a hang, termination or on-request state (at_snapshot)")
        )


def _hangs(
    snapshots: list[hang_snapshots.Snapshot],
    policy: timeline.ClockPolicy,
    collectives: fr.CollectiveAnalysis | None,
    never_entered: list[int],
) -> HangsRecord | None:
    if not snapshots:
        return None
    expected = set(collectives.expected_ranks) if collectives is not None else set()
    return hang_snapshots.analyze(snapshots, policy, expected_ranks=expected, never_entered=never_entered)


def _hang_class(fc: cls.FailureClass, hangs: HangsRecord) -> None:
    """A collective hang found by the recorder's snapshots: say so, with them as evidence."""
    fc.detail = (
        f"hang: {hangs.first_stopped} stopped making progress first; {', '.join(hangs.waiting)} are further along "
        "and stopped too, waiting for it (recorder snapshots)"
    )
    fc.evidence = [{"file": r.file, "rank": r.rank, "where": hang_snapshots.where(r)} for r in hangs.ranks]


def _stuck_first(hangs: HangsRecord | None) -> list[int]:
    """The rank the snapshots show stopped first while others wait further along: the one that
    never reached the collective they wait in (no dump or watchdog line says otherwise)."""
    if hangs is None or hangs.verdict != "named" or hangs.first_stopped_rank is None or not hangs.waiting:
        return []
    return [hangs.first_stopped_rank]


# ---------------------------------------------------------------- inputs


def _discover(paths: list[Path], skipped: list[SkippedFile]) -> list[tuple[Path, Path | None]]:
    found: list[tuple[Path, Path | None]] = []
    for p in paths:
        if p.is_dir():
            inner, passed = scan_directory(p)  # symlinks out of p are not followed
            found.extend((f, p) for f in inner if f.name not in _SKIP_NAMES)
            for f, why in passed:
                skipped.append(SkippedFile(file=str(f), why=why))
        elif p.exists():
            found.append((p, None))  # reading it refuses anything but a regular file
        else:
            raise BadInput(p, "no such file or directory")
    if not found:
        raise BadInput(None, "no files to diagnose in " + ", ".join(str(p) for p in paths))
    return found


def _head(path: Path) -> bytes:
    try:
        with open_binary(path) as fh:
            return fh.read(64 * 1024)
    except READ_ERRORS as exc:
        raise BadInput(path, f"cannot be read ({exc})") from None


def _host_hint(path: Path, root: Path | None) -> str | None:
    """The node a file belongs to: its first folder under a directory given on the command line."""
    if root is None:
        return None
    parts = path.relative_to(root).parts
    return parts[0] if len(parts) >= 2 else None


def _link_error_files(events: list[Event]) -> None:
    """torchrun's failure report names each failed rank's error file: give that file's event the rank."""
    by_tail = {
        Path(str(e.values["error_file"])).parts[-3:]: e.rank
        for e in events
        if e.kind == "child_failed" and isinstance(e.values.get("error_file"), str) and e.rank is not None
    }
    for e in events:
        if e.values.get("error_file") is True and e.rank is None:
            rank = by_tail.get(Path(e.file).parts[-3:])
            if rank is not None:
                e.rank = rank
                e.notes.append("rank taken from torchrun's failure report naming this error file")


def _mark_restatements(events: list[Event]) -> None:
    """An unstamped failure line that restates a stamped one (same kind, node and rank,
    e.g. a traceback and its error file) is the same failure, not a competing candidate."""
    stamped = [e for e in events if e.role == "failure" and e.time is not None]
    for u in events:
        if u.role != "failure" or u.time is not None:
            continue
        twin = next(
            (t for t in stamped if t.kind == u.kind and t.host == u.host and t.rank == u.rank and u.rank is not None),
            None,
        )
        if twin is not None:
            u.values["same_failure_as"] = f"{twin.file}:{twin.line or 0}"


def _collective_waits(c: fr.CollectiveAnalysis) -> list[Event]:
    """Put each group's stuck collective on the timeline: when its first member enqueued it."""
    out = []
    for g in c.groups:
        if g.status != "missing" or g.waiting_since is None:
            continue
        text = (
            f"ranks {_ranks(g.entered)} enqueued seq {g.seq} ({g.op}) of group {g.group.name}; ranks "
            f"{_ranks(g.never_entered)} never did"
        )
        ev = Event(
            "collective_wait",
            "info",
            g.evidence[0]["file"] if g.evidence else "",
            None,
            text,
            time=g.waiting_since,
            resolution=0.0,
            values={"group": g.group.name, "seq": g.seq, "never_entered": g.never_entered},
        )
        ev.notes.append(
            "time: the earliest enqueue of this collective among the ranks that entered it (their own clocks)"
        )
        out.append(ev)
    return out


# ---------------------------------------------------------------- watchdog counters (logs only)


def _watchdog_counters(events: list[Event]) -> list[WatchdogCounters]:
    """Per process group (by GUID, which is the cross-rank group name), ranks whose last
    enqueued work is below the work another rank timed out on: they never enqueued it."""
    by_group: dict[str, dict[int, Event]] = defaultdict(dict)
    for e in events:
        if e.kind == "watchdog_counters":
            key = e.values.get("pg_desc") or e.values["pg_id"]
            by_group[key].setdefault(e.values["rank"], e)
    out = []
    for key, ranks in sorted(by_group.items()):
        stuck = max(e.values["work"] for e in ranks.values())
        behind = sorted(r for r, e in ranks.items() if e.values["last_enqueued"] < stuck)
        out.append(
            WatchdogCounters(
                group=key,
                stuck_seq=stuck,
                never_enqueued=tuple(behind),
                ranks_reporting=tuple(sorted(ranks)),
                evidence=tuple([ranks[r].evidence() for r in sorted(ranks)][:16]),
            )
        )
    return out


# ---------------------------------------------------------------- observations


def _when(t: float | None) -> str:
    if t is None:
        return "at an unknown time"
    return utc_time(t)


def _at(e: Event) -> str:
    """When an event happened, for a sentence ("at ..."): a stamp without a year says so."""
    if e.time is not None:
        return "at " + _when(e.time)
    stamp = e.values.get("stamp_without_year")
    return f"at {stamp} (year unknown)" if stamp else "at an unknown time"


def _ranks(ranks: list[int]) -> str:
    return ", ".join(str(r) for r in ranks)


def _Ranks(ranks: list[int]) -> str:
    return ("Rank " if len(ranks) == 1 else "Ranks ") + _ranks(ranks)


_Add = Callable[[str, list[Evidence]], None]


def _observations(d: Diagnosis) -> list[Observation]:
    """The report's observations, in its order: the first failure, what followed it, each signature's first
    line, torchrun's report, the collectives, the host's events, the hung ranks and the watchdog counters."""
    obs: list[Observation] = []

    def add(text: str, evidence: list[Evidence]) -> None:
        obs.append(Observation(text=text, evidence=tuple(evidence)))

    _first_failure_observations(d, add)
    _victim_observations(d, add)
    _signature_observations(d, add)
    _child_failed_observations(d, add)
    if d.collectives is not None:
        for g in d.collectives.groups:
            _group_observations(g, add)
        _missing_dump_observations(d.collectives, add)
    for text, evidence in host_events.observations(d.events):
        add(text, evidence)
    _hang_observations(d.hangs, add)
    _watchdog_observations(d, add)
    return obs


def _first_failure_observations(d: Diagnosis, add: _Add) -> None:
    f = d.first
    if f.status == "named" and f.event is not None:
        e = f.event
        caveat = (
            " (only consequences were seen: this is the earliest error, not necessarily the origin)"
            if f.only_consequences
            else ""
        )
        add(
            f"Earliest failure signature: {_describe(e)} on {e.origin} {_at(e)}; it {f.reason}{caveat}.",
            [e.evidence()],
        )
    elif f.status == "undecided":
        add(f"First failure undecided: {f.reason}.", [c.evidence() for c in f.candidates[:8]])


def _victim_observations(d: Diagnosis, add: _Add) -> None:
    victims = cls.communication_victims(d.events, d.first)
    if victims:
        ranks = sorted({v.rank for v in victims if v.rank is not None})
        hosts = sorted({v.host for v in victims if v.host})
        where = f"ranks {_ranks(ranks)}" if ranks else ("hosts " + ", ".join(hosts) if hosts else "other processes")
        add(
            f"{len(victims)} communication errors (watchdog timeouts / NCCL errors) on {where} come after the first "
            f"failure; they are labelled as following it, not as separate causes.",
            [v.evidence() for v in victims[:8]],
        )


def _signature_observations(d: Diagnosis, add: _Add) -> None:
    """The first Xid per GPU and code, CUDA OOM per rank, the host's memory kills, the first segfault per process."""
    for e in _first_per(d.events, "xid", lambda e: (e.host, e.values.get("pci"), e.values.get("code"))):
        info = e.values.get("catalog")
        name = f" ({info['name']}, class {info['class']})" if info else " (code not in the bundled catalog)"
        add(
            f"Xid {e.values['code']}{name} on GPU {e.values.get('pci')} of {e.host or 'an unnamed node'} "
            f"{_when(e.time) if e.time is not None else _at(e)}.",
            [e.evidence()],
        )
    for e in _first_per(d.events, "cuda_oom", lambda e: (e.host, e.rank)):
        req = e.values.get("requested")
        add(
            f"CUDA out-of-memory on {e.origin}"
            + (f" (tried to allocate {req})" if req else "")
            + f" {_when(e.time) if e.time is not None else _at(e)}.",
            [e.evidence()],
        )
    kills = [e for e in d.events if e.kind in ("host_oom_kill", "slurm_oom", "k8s_oomkilled")]
    if kills:
        pids = sorted({pid for e in kills if isinstance(pid := e.values.get("pid"), int)})
        add(
            f"{len(kills)} host memory kill lines (kernel / cgroup / Slurm / Kubernetes)"
            + (f" naming pids {_ranks(pids)}" if pids else "")
            + ".",
            [e.evidence() for e in kills[:8]],
        )
    for e in _first_per(d.events, "segfault", lambda e: (e.host, e.values.get("pid"))):
        add(
            f"Segmentation fault in {e.values['library']} (process {e.values['process']}, pid {e.values['pid']}) on "
            f"{e.origin}.",
            [e.evidence()],
        )


def _child_failed_observations(d: Diagnosis, add: _Add) -> None:
    for e in d.events:
        if e.kind == "child_failed" and e.values.get("root_cause"):
            how = e.values.get("signal_name") or f"exit code {e.values.get('exitcode')}"
            add(
                f"torchrun's report on {e.host or 'a node'} names rank {e.rank} ({how}) as its first observed failure; "
                "that is per node and by the time the agent saw the exit, not an ordering across nodes.",
                [e.evidence()],
            )


def _group_observations(g: fr.GroupFinding, add: _Add) -> None:
    """One process group: a collective some ranks never entered (or undecided), stale counters, mismatches."""
    if g.status == "missing":
        inferred = " (judged from the absence of an active entry in an active-only dump)" if g.inferred else ""
        if g.waiting_since is not None:
            inferred += f"; a member first enqueued it at {_when(g.waiting_since)} (its own clock)"
        if g.last_completed_by_all is not None:
            inferred += f"; the last seq every member completed is {g.last_completed_by_all}"
        elif g.last_completed_by_all_between is not None:
            lo, hi = g.last_completed_by_all_between
            inferred += f"; the last seq every member completed is undecided between {lo} and {hi} (stale counters)"
        add(
            f"{_Ranks(g.never_entered)} never entered collective seq {g.seq} ({g.op}, "
            f"{g.size or 'size unknown'} {g.dtype or ''}) of group {g.group.name} ({g.desc}, ranks "
            f"{_ranks(list(g.group.ranks))}), which {_Ranks(g.entered).lower()} entered{inferred}.",
            g.evidence[:8] or [{"file": "", "group": g.group.name, "seq": g.seq}],
        )
    elif g.status == "undecided":
        who = g.no_dump or g.unknown
        add(
            f"Group {g.group.name} ({g.desc}) at seq {g.seq}: undecided — no dump or no readable position for "
            f"ranks {_ranks(who)}.",
            g.evidence[:8] or [{"group": g.group.name}],
        )
    if g.stale:
        add(
            f"{_Ranks(g.stale)} still {'lists' if len(g.stale) == 1 else 'list'} collectives of group "
            f"{g.group.name} ({g.desc}) as not completed although a peer's counter shows the group completed "
            f"up to seq {g.peer_completed}: {'its' if len(g.stale) == 1 else 'their'} completion counters look "
            f"stale.",
            [
                {
                    "group": g.group.name,
                    "ranks": g.stale,
                    "peer_completed": g.peer_completed,
                    "last_completed_by_all_undecided_between": g.last_completed_by_all_between,
                    "files": sorted({ev["file"] for ev in g.evidence}),
                }
            ],
        )
    for m in g.mismatches[:3]:
        add(
            f"{m['kind']} mismatch in group {m['group']} seq {m.get('seq')} between ranks "
            f"{_ranks(m.get('ranks', []))}.",
            [m],
        )


def _missing_dump_observations(c: fr.CollectiveAnalysis, add: _Add) -> None:
    if c.missing_dumps:
        add(
            f"No flight-recorder dump for ranks {_ranks(c.missing_dumps)}; collectives involving them are undecided.",
            [{"missing_dumps": c.missing_dumps}],
        )


def _watchdog_observations(d: Diagnosis, add: _Add) -> None:
    for w in d.watchdog:
        if w.never_enqueued:
            add(
                f"Watchdog counters for group {w.group}: {_Ranks(list(w.never_enqueued)).lower()} had not enqueued "
                f"work {w.stuck_seq}, which other ranks timed out on.",
                list(w.evidence[:8]),
            )


def _hang_observations(h: HangsRecord | None, add: Any) -> None:
    """What the recorder's snapshots say of hung ranks (hangs.py)."""
    if h is None:
        return
    by_process = {r.process: r for r in h.ranks}
    evidence = [{"file": r.file, "process": r.process, "snapshot": r.snapshot_reason} for r in h.ranks][:16]
    if h.verdict == "named" and h.first_stopped is not None:
        first = by_process[h.first_stopped]
        text = (
            f"{h.first_stopped[0].upper()}{h.first_stopped[1:]} stopped making progress first (by its "
            f"{h.decided_by}): {hang_snapshots.where(first)}."
        )
        if h.waiting:
            ahead = sorted({hang_snapshots.place(by_process[p]) for p in h.waiting})
            text += (
                f" {', '.join(h.waiting)} are further along ({'; '.join(ahead)}) and stopped too: they are waiting "
                "for it (observation, not cause)."
            )
        add(text, evidence)
    elif h.verdict == "undecided":
        add(f"Which rank stopped first is undecided: {h.reason}.", evidence)
    for r in h.ranks:
        ended = f"; the hang ended after {r.hang_ended_after_s:.1f} s" if r.hang_ended_after_s is not None else ""
        add(
            f"{r.process[0].upper()}{r.process[1:]} ({r.host}, pid {r.pid}, {r.snapshot_reason} snapshot): "
            f"{hang_snapshots.where(r)}{ended}.",
            [{"file": r.file, "process": r.process}],
        )
    for note in h.notes:
        add(f"Hung ranks: {note}.", evidence)


def _describe(e: Event) -> str:
    if e.kind == "xid":
        info = e.values.get("catalog")
        return f"Xid {e.values['code']}" + (f" ({info['description']})" if info else "")
    names = {
        "cuda_oom": "CUDA out-of-memory",
        "gpu_alloc_failure": "GPU allocation failure",
        "host_oom_kill": "host OOM kill",
        "slurm_oom": "Slurm OOM kill",
        "k8s_oomkilled": "Kubernetes OOMKilled",
        "exception": "Python exception",
        "segfault": "segmentation fault",
        "watchdog_timeout": "NCCL watchdog timeout",
        "nccl_error": "NCCL error",
        "sxid": "NVSwitch SXid",
        "slurm_cancel": "Slurm cancel",
        "cuda_device_error": "CUDA device error",
        "kv_cache_config": "KV-cache configuration refusal",
    }
    text = names.get(e.kind, e.kind)
    if e.kind == "exception":
        text += f" {e.values.get('exception')}"
    if e.values.get("phase"):
        text += f" during {e.values['phase']}"
    return text


def _first_per(events: list[Event], kind: str, key: Any) -> list[Event]:
    seen, out = set(), []
    for e in sorted((e for e in events if e.kind == kind), key=lambda e: (e.time is None, e.time or 0.0)):
        k = key(e)
        if k not in seen:
            seen.add(k)
            out.append(e)
    return out
