"""PyTorch NCCL flight-recorder dumps: load (pickle or JSON, versions 2.4-2.10) and match
collectives across ranks.

Identity rules (from the dump format, see docs/diagnostics.md):

* a process group is identified across ranks by its name **and** its member ranks
  (``pg_config[name]["ranks"]``); ``pg_id`` is a per-rank local counter and is only used to
  join a rank's own ``pg_status`` to its own entries;
* a collective is identified inside its group by ``collective_seq_id``; P2P traffic keeps
  that counter still and is not matched here.

What the analysis claims, per group: the first sequence number some member never entered
(and which members), mismatches between ranks that did enter, ranks whose completion
counters are stale, and ``undecided`` where a member has no dump or its position cannot be
read. It never names a rank the data cannot single out.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.diagnostics import safe_pickle
from workbench.diagnostics.result import CollectivesRecord, CollectivesVerdict, Evidence, GroupRecord, GroupStatus
from workbench.errors import BadInput
from workbench.inputs import read_bounded
from workbench.limits import check_expanded_size, exceeded

_MAX_NS = 1 << 63  # a creation time is an int64 of nanoseconds
_TRAILING_DIGITS = re.compile(r"(\d+)(?:\.json|\.pkl|\.pickle)?(?:\.gz)?$")
# Ops whose per-rank sizes legitimately differ (or pair up) and so are not size-compared.
_UNEVEN_OPS = {
    "all_to_all",
    "alltoall",
    "alltoall_base",
    "all_to_all_single",
    "gather",
    "scatter",
    "coalesced",
    "send",
    "recv",
    "_allgather_base_coalesced",
}


@dataclass(frozen=True)
class GroupKey:
    """Cross-rank identity of a process group: name plus member ranks."""

    name: str
    ranks: tuple[int, ...]

    def label(self) -> str:
        return f"{self.name} ranks {_ranks_text(self.ranks)}"


@dataclass
class Entry:
    rank: int
    index: int  # position in the dump's entry list
    group_name: str
    group_desc: str
    pg_id: str
    seq: int
    op: str  # profiling name without the backend prefix, e.g. "all_reduce"
    profiling_name: str
    input_sizes: list
    output_sizes: list
    input_dtypes: list
    output_dtypes: list
    state: str
    is_p2p: bool
    time_created_ns: int | None
    path: str = ""

    def evidence(self) -> Evidence:
        return {
            "file": self.path,
            "rank": self.rank,
            "entry": self.index,
            "seq": self.seq,
            "op": self.profiling_name,
            "input_sizes": self.input_sizes,
            "input_dtypes": self.input_dtypes,
            "state": self.state,
        }


@dataclass
class RankDump:
    rank: int
    path: str
    version: str
    comm_lib_version: str | None
    groups: dict[str, tuple[str, tuple[int, ...]]]  # name -> (desc, ranks)
    status: dict[str, dict[str, int | None]]  # pg_id -> counters (None = not tracked)
    entries: list[Entry]

    @property
    def active_only(self) -> bool:
        """True when no entry is completed: an ``onlyActive`` dump (or an idle buffer)."""
        return all(e.state != "completed" for e in self.entries)

    def pg_id_of(self, name: str) -> str | None:
        for e in self.entries:
            if e.group_name == name:
                return e.pg_id
        return None

    def counters(self, name: str) -> dict[str, int | None] | None:
        pg_id = self.pg_id_of(name)
        return self.status.get(pg_id) if pg_id is not None else None


# ---------------------------------------------------------------- loading


def sniff(head: bytes) -> bool:
    """True if ``head`` (first bytes of a file) looks like a flight-recorder dump."""
    keys = (b"pg_config", b"collective_seq_id", b"pg_status")
    stripped = head.lstrip()
    if stripped[:1] == b"{":
        return b'"version"' in head and any(b'"' + k + b'"' in head for k in keys)
    return head[:1] == b"\x80" and b"version" in head and any(k in head for k in keys)


def load_dump(path: str | Path, *, max_bytes: int = safe_pickle.MAX_BYTES) -> RankDump:
    """One rank's dump, pickle or JSON, plain or gzip."""
    path = Path(path)
    raw = read_bounded(path, max_bytes, f"dump is over the {max_bytes}-byte limit")
    if raw.lstrip()[:1] == b"{":
        try:
            doc = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BadInput(path, f"flight-recorder JSON is not valid JSON ({exc})") from None
        except RecursionError:
            raise exceeded(
                path, "flight-recorder JSON is nested deeper than", "the parser's recursion limit (~1,000 levels)"
            ) from None
        except ValueError as exc:  # an integer of more than 4,300 digits
            raise BadInput(path, f"flight-recorder JSON holds a number that cannot be read ({str(exc)[:80]})") from None
        check_expanded_size(doc, path)
    else:
        doc = safe_pickle.loads_plain(raw, source=path)
    return parse_dump(doc, path)


def parse_dump(doc: Any, path: str | Path) -> RankDump:
    path = Path(path)
    if not isinstance(doc, dict) or "version" not in doc:
        raise BadInput(path, "not a flight-recorder dump (no top-level 'version')")
    rank = doc.get("rank")
    if not isinstance(rank, int) or isinstance(rank, bool):
        m = _TRAILING_DIGITS.search(path.name)
        if not m:
            raise BadInput(path, "cannot tell the rank: no 'rank' field and no trailing rank number in the file name")
        rank = int(m.group(1))
    groups: dict[str, tuple[str, tuple[int, ...]]] = {}
    for name, cfg in _mapping(doc.get("pg_config") or {}, path, "pg_config").items():
        if not isinstance(cfg, dict):
            raise BadInput(path, "group config is not a mapping", where=f"pg_config[{name!r}]")
        groups[str(name)] = (
            str(cfg.get("desc", "")),
            _parse_ranks(cfg.get("ranks"), path, f"pg_config[{name!r}].ranks"),
        )
    status: dict[str, dict[str, int | None]] = {}
    for pg_id, counters in _mapping(doc.get("pg_status") or {}, path, "pg_status").items():
        if isinstance(counters, dict):
            status[str(pg_id)] = {k: _counter(v) for k, v in counters.items()}
    raw_entries = doc.get("entries")
    if raw_entries is None:
        raw_entries = []  # dumped without collectives
    if not isinstance(raw_entries, list):
        raise BadInput(path, "'entries' is not a list", where="entries")
    entries = [_parse_entry(e, i, rank, path) for i, e in enumerate(raw_entries)]
    comm = doc.get("comm_lib_version", doc.get("nccl_version"))
    return RankDump(
        rank, str(path), str(doc["version"]), str(comm) if comm is not None else None, groups, status, entries
    )


def _mapping(obj: Any, path: Path, where: str) -> dict:
    if not isinstance(obj, dict):
        raise BadInput(path, "expected a mapping", where=where)
    return obj


def _counter(v: Any) -> int | None:
    """pg_status counters: ints in pickles, strings in JSON, -1 when not tracked."""
    try:
        n = int(v)
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(float("inf"))
        return None
    return None if n < 0 else n


def _shapes(value: Any, path: Path, where: str) -> list[list[int]]:
    """A tensor list's shapes (``[[4096, 1, 5120]]``); absent is none. Anything else is bad input:
    the sizes are compared across ranks and printed, so a float or a string there is no shape."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(shape, (list, tuple)) and all(type(n) is int for n in shape) for shape in value
    ):
        raise BadInput(path, "sizes are not a list of shapes (lists of integers)", where=where)
    return [list(shape) for shape in value]


def _names(value: Any, path: Path, where: str) -> list[str]:
    """A tensor list's dtypes (``["BFloat16"]``); absent is none, anything but a list of strings is bad input."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)) or not all(isinstance(name, str) for name in value):
        raise BadInput(path, "dtypes are not a list of names (strings)", where=where)
    return list(value)


def _parse_ranks(value: Any, path: Path, where: str) -> tuple[int, ...]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):  # not JSON, a 4,300-digit integer, or absurd nesting
            raise BadInput(path, f"member ranks are not a list: {value[:60]!r}", where=where) from None
    if not isinstance(value, list) or not all(isinstance(r, int) for r in value):
        raise BadInput(path, "member ranks are not a list of integers", where=where)
    return tuple(sorted(value))


def _parse_entry(e: Any, i: int, rank: int, path: Path) -> Entry:
    where = f"entries[{i}]"
    if not isinstance(e, dict):
        raise BadInput(path, "entry is not a mapping", where=where)
    pg = e.get("process_group")
    if not isinstance(pg, (list, tuple)) or len(pg) < 1:
        raise BadInput(path, "entry has no process_group (name, desc)", where=where)
    seq = e.get("collective_seq_id", e.get("seq_id"))
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise BadInput(path, "entry has no integer collective_seq_id", where=where)
    profiling = str(e.get("profiling_name", ""))
    op = profiling.split(":", 1)[-1].split(" ", 1)[0]
    created = e.get("time_created_ns")
    if not isinstance(created, int) or isinstance(created, bool) or not 0 < created < _MAX_NS:
        created = None  # absent, or no time an int64 nanosecond clock can hold: unknown
    return Entry(
        rank=rank,
        index=i,
        group_name=str(pg[0]),
        group_desc=str(pg[1]) if len(pg) > 1 else "",
        pg_id=str(e.get("pg_id", "")),
        seq=seq,
        op=op,
        profiling_name=profiling,
        input_sizes=_shapes(e.get("input_sizes"), path, f"{where}.input_sizes"),
        output_sizes=_shapes(e.get("output_sizes"), path, f"{where}.output_sizes"),
        input_dtypes=_names(e.get("input_dtypes"), path, f"{where}.input_dtypes"),
        output_dtypes=_names(e.get("output_dtypes"), path, f"{where}.output_dtypes"),
        state=str(e.get("state", "")),
        is_p2p=bool(e.get("is_p2p", False)) or op in ("send", "recv"),
        time_created_ns=created,
        path=str(path),
    )


# ---------------------------------------------------------------- analysis


@dataclass
class GroupFinding:
    group: GroupKey
    desc: str
    status: GroupStatus
    seq: int | None = None  # the sequence number the finding is about
    op: str | None = None
    size: str | None = None
    dtype: str | None = None
    never_entered: list[int] = field(default_factory=list)
    entered: list[int] = field(default_factory=list)
    no_dump: list[int] = field(default_factory=list)
    unknown: list[int] = field(default_factory=list)
    inferred: list[int] = field(default_factory=list)  # never_entered judged from absence in an active-only dump
    last_completed_by_all: int | None = None
    last_completed_by_all_between: tuple[int, int] | None = None  # undecided: stale counters
    stale: list[int] = field(default_factory=list)
    peer_completed: int | None = None  # highest seq some member's counter shows completed
    waiting_since: float | None = None  # earliest enqueue (epoch s, each rank's clock) of `seq`
    mismatches: list[Evidence] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)

    def record(self) -> GroupRecord:
        return GroupRecord(
            group=self.group.name,
            ranks=tuple(self.group.ranks),
            desc=self.desc,
            status=self.status,
            seq=self.seq,
            op=self.op,
            size=self.size,
            dtype=self.dtype,
            never_entered=tuple(self.never_entered),
            never_entered_inferred_from_absence=tuple(self.inferred),
            entered=tuple(self.entered),
            no_dump=tuple(self.no_dump),
            unknown=tuple(self.unknown),
            last_completed_by_all=self.last_completed_by_all,
            last_completed_by_all_undecided_between=self.last_completed_by_all_between or None,
            stale_completion_counters=tuple(self.stale),
            peer_completed=self.peer_completed,
            waiting_since=self.waiting_since,
            mismatches=tuple(self.mismatches),
            evidence=tuple(self.evidence),
        )


@dataclass
class CollectiveAnalysis:
    ranks_with_dumps: list[int]
    expected_ranks: list[int]
    missing_dumps: list[int]
    versions: dict[str, list[int]]
    groups: list[GroupFinding]
    notes: list[str]

    @property
    def never_entered(self) -> list[int]:
        return sorted({r for g in self.groups if g.status == "missing" for r in g.never_entered})

    @property
    def undecided(self) -> list[int]:
        decided = set(self.never_entered)
        return sorted({r for g in self.groups for r in (*g.no_dump, *g.unknown)} - decided)

    @property
    def mismatches(self) -> list[Evidence]:
        return [m for g in self.groups for m in g.mismatches]

    @property
    def verdict(self) -> CollectivesVerdict:
        if self.never_entered:
            return "missing-ranks"
        if any(g.status == "undecided" for g in self.groups) or self.missing_dumps:
            return "undecided"
        if self.mismatches:
            return "mismatch"
        return "no-missing-rank"

    def record(self) -> CollectivesRecord:
        return CollectivesRecord(
            verdict=self.verdict,
            ranks_with_dumps=tuple(self.ranks_with_dumps),
            expected_ranks=tuple(self.expected_ranks),
            missing_dumps=tuple(self.missing_dumps),
            never_entered=tuple(self.never_entered),
            undecided_ranks=tuple(self.undecided),
            versions={k: tuple(v) for k, v in self.versions.items()},
            groups=tuple(g.record() for g in self.groups),
            notes=tuple(self.notes),
        )


def analyze(dumps: list[RankDump]) -> CollectiveAnalysis:
    """Match collectives across ``dumps`` (one per rank)."""
    by_rank: dict[int, RankDump] = {}
    notes: list[str] = []
    for d in dumps:
        if d.rank in by_rank:
            raise BadInput(
                d.path, f"second dump for rank {d.rank} (first: {by_rank[d.rank].path}); give one job's dumps at a time"
            )
        by_rank[d.rank] = d
    versions: dict[str, list[int]] = defaultdict(list)
    for d in dumps:
        versions[d.version].append(d.rank)
    if len(versions) > 1:
        notes.append(
            "ranks report different dump versions: "
            + ", ".join(f"{v} on {_ranks_text(r)}" for v, r in sorted(versions.items()))
        )

    # Group identities (name + member ranks) and the descriptions each rank gives them.
    descs: dict[GroupKey, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for d in dumps:
        for name, (desc, ranks) in d.groups.items():
            descs[GroupKey(name, ranks)][desc].append(d.rank)
    expected = sorted({r for key in descs for r in key.ranks} | set(by_rank))
    missing_dumps = sorted(set(expected) - set(by_rank))

    # Collective entries per (group, rank); an entry whose group the rank does not describe
    # has no cross-rank identity and is set aside.
    per_group: dict[GroupKey, dict[int, dict[int, Entry]]] = defaultdict(lambda: defaultdict(dict))
    for d in dumps:
        for e in d.entries:
            if e.is_p2p:
                continue
            cfg = d.groups.get(e.group_name)
            if cfg is None:
                notes.append(
                    f"rank {d.rank}: entry {e.index} names group {e.group_name!r} absent from its pg_config; not "
                    f"matched"
                )
                continue
            per_group[GroupKey(e.group_name, cfg[1])][d.rank].setdefault(e.seq, e)

    findings = []
    for key in sorted(descs, key=lambda k: (len(k.ranks), k.name)):
        finding = _analyze_group(key, descs[key], per_group.get(key, {}), by_rank)
        if finding is not None:
            findings.append(finding)
    return CollectiveAnalysis(sorted(by_rank), expected, missing_dumps, dict(versions), findings, notes)


def _analyze_group(
    key: GroupKey, descs: dict[str, list[int]], entries: dict[int, dict[int, Entry]], by_rank: dict[int, RankDump]
) -> GroupFinding | None:
    desc = max(descs, key=lambda d: len(descs[d]))
    finding = GroupFinding(key, desc, "idle")
    if len(key.ranks) < 2:
        return None
    if not entries:
        return None  # nothing in flight on any member: no claim to make
    if len(descs) > 1:
        finding.status = "undecided"
        finding.evidence.append({"desc_by_rank": {d: r for d, r in descs.items()}})
        finding.mismatches.append(
            {"kind": "group-identity", "group": key.name, "descs": {d: r for d, r in descs.items()}}
        )
        return finding

    completed, enqueued = _read_counters(finding, key, entries, by_rank)
    _first_gap(finding, key, entries, _Positions(by_rank, entries, enqueued, completed), completed)
    finding.mismatches.extend(_mismatches(key, entries, by_rank))
    return finding


def _read_counters(
    finding: GroupFinding, key: GroupKey, entries: dict[int, dict[int, Entry]], by_rank: dict[int, RankDump]
) -> tuple[dict[int, int | None], dict[int, int | None]]:
    """Each member's last completed and last enqueued seq; the finding's peak, stale members and the last seq
    every member completed (unknown when a counter is, undecided between its value and the peak when stale)."""
    counters = {r: by_rank[r].counters(key.name) for r in key.ranks if r in by_rank}
    completed = {r: (c or {}).get("last_completed_collective") for r, c in counters.items()}
    enqueued = {r: (c or {}).get("last_enqueued_collective") for r, c in counters.items()}
    known_completed = [v for v in completed.values() if v is not None]
    peak_completed = max(known_completed, default=None)
    finding.peer_completed = peak_completed
    # Stale completion counters: a peer completed seq s (so every member entered it), yet this
    # rank still lists s as not completed.
    for r, seqs in entries.items():
        if peak_completed is not None and any(e.state != "completed" and s <= peak_completed for s, e in seqs.items()):
            finding.stale.append(r)
    finding.stale.sort()
    if len(known_completed) == len(key.ranks):
        if finding.stale:
            finding.last_completed_by_all_between = (min(known_completed), peak_completed)
        else:
            finding.last_completed_by_all = min(known_completed)
    return completed, enqueued


class _Positions:
    """Where a member stands against a seq of the group: entered, never entered, inferred (an active-only
    dump without it), no dump, or unknown."""

    def __init__(
        self,
        by_rank: dict[int, RankDump],
        entries: dict[int, dict[int, Entry]],
        enqueued: dict[int, int | None],
        completed: dict[int, int | None],
    ) -> None:
        self.by_rank, self.entries, self.enqueued, self.completed = by_rank, entries, enqueued, completed

    def of(self, r: int, seq: int) -> str:
        if r not in self.by_rank:
            return "no_dump"
        if seq in self.entries.get(r, {}):
            return "entered"
        enq, comp = self.enqueued.get(r), self.completed.get(r)
        if enq is not None:
            return "entered" if enq >= seq else "never_entered"
        if comp is not None and comp >= seq:
            return "entered"
        own = self.entries.get(r)
        if own:
            # A group's sequence numbers are enqueued in order: a later one recorded means
            # `seq` was enqueued; a newest one below `seq` means it never was.
            return "never_entered" if max(own) < seq else "entered"
        if self.by_rank[r].active_only:
            return "inferred"  # no active entry for this group in an active-only dump
        return "unknown"


def _first_gap(
    finding: GroupFinding,
    key: GroupKey,
    entries: dict[int, dict[int, Entry]],
    positions: _Positions,
    completed: dict[int, int | None],
) -> None:
    """The first seq some member never entered (missing), or could not be placed (undecided); else the last
    seq, entered by all or undecided."""
    all_seqs = sorted({s for seqs in entries.values() for s in seqs})
    for seq in all_seqs:
        pos = {r: positions.of(r, seq) for r in key.ranks}
        if any(p in ("never_entered", "inferred") for p in pos.values()):
            _describe(finding, seq, pos, entries)
            finding.status = "missing"
            return
        if any(p in ("no_dump", "unknown") for p in pos.values()) and not _completed_somewhere(seq, completed):
            _describe(finding, seq, pos, entries)
            finding.status = "undecided"
            return
    last = all_seqs[-1]
    pos = {r: positions.of(r, last) for r in key.ranks}
    _describe(finding, last, pos, entries)
    finding.status = "all-entered" if all(p == "entered" for p in pos.values()) else "undecided"


def _completed_somewhere(seq: int, completed: dict[int, int | None]) -> bool:
    return any(c is not None and c >= seq for c in completed.values())


def _describe(f: GroupFinding, seq: int, pos: dict[int, str], entries: dict[int, dict[int, Entry]]) -> None:
    f.seq = seq
    f.entered = sorted(r for r, p in pos.items() if p == "entered")
    f.never_entered = sorted(r for r, p in pos.items() if p in ("never_entered", "inferred"))
    f.inferred = sorted(r for r, p in pos.items() if p == "inferred")
    f.no_dump = sorted(r for r, p in pos.items() if p == "no_dump")
    f.unknown = sorted(r for r, p in pos.items() if p == "unknown")
    present = [entries[r][seq] for r in sorted(entries) if seq in entries[r]]
    if present:
        first = present[0]
        f.op = first.profiling_name
        f.size = _size_text(first.input_sizes)
        f.dtype = ",".join(first.input_dtypes)
    f.evidence = [e.evidence() for e in present]
    created = [e.time_created_ns for e in present if e.time_created_ns is not None]
    f.waiting_since = min(created) / 1e9 if created else None


def _mismatches(key: GroupKey, entries: dict[int, dict[int, Entry]], by_rank: dict[int, RankDump]) -> list[Evidence]:
    out = []
    seqs = sorted({s for v in entries.values() for s in v})
    for seq in seqs:
        present = [entries[r][seq] for r in sorted(entries) if seq in entries[r]]
        if len(present) < 2:
            continue
        ref = present[0]
        for other in present[1:]:
            kinds = []
            if other.op != ref.op:
                kinds.append("collective-type")
            elif ref.op not in _UNEVEN_OPS and (
                other.input_sizes != ref.input_sizes or other.output_sizes != ref.output_sizes
            ):
                kinds.append("size")
            if ref.op not in ("gather", "scatter", "broadcast") and set(other.input_dtypes) != set(ref.input_dtypes):
                kinds.append("dtype")
            if (other.state == "completed") != (ref.state == "completed"):
                kinds.append("state")
            for kind in kinds:
                out.append(
                    {
                        "kind": kind,
                        "group": key.name,
                        "seq": seq,
                        "ranks": [ref.rank, other.rank],
                        "values": {
                            ref.rank: _entry_values(ref),
                            other.rank: _entry_values(other),
                        },
                        "files": [by_rank[ref.rank].path, by_rank[other.rank].path],
                    }
                )
    return out


def _entry_values(e: Entry) -> dict[str, object]:
    return {
        "op": e.profiling_name,
        "input_sizes": e.input_sizes,
        "output_sizes": e.output_sizes,
        "dtypes": e.input_dtypes,
        "state": e.state,
    }


def _size_text(sizes: list) -> str:
    return ";".join("x".join(str(n) for n in shape) for shape in sizes if isinstance(shape, list))


def _ranks_text(ranks: Any) -> str:
    return "[" + ", ".join(str(r) for r in ranks) + "]"
