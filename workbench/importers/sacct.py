"""Slurm accounting (``sacct --parsable2`` / ``-P``, any ``--delimiter``) plus ``sinfo`` capacity.

Each folder's sacct files become one fleet run (an observation window of a pool):
samples ``job, gpus, submit, eligible, start, end, state`` in epoch seconds (NaN when
``Unknown``/``None``/blank) and ``meta["pool"] = {capacity_gpus, window_start,
window_end, wait_target_s}``. An ``sinfo`` file beside them (``sinfo -N -o %all`` or
any ``|`` table with ``NODELIST``/``GRES``/``STATE``) gives the capacity: GPUs on nodes
that are not down or drained.

- **Time zone**: sacct prints local time with no offset. ``--tz`` (IANA name, ``UTC``
  or ``+02:00``) says which; without it a local timestamp is refused, never guessed.
  Epoch output (``SLURM_TIME_FORMAT=%s``) and stamps with an offset need no ``--tz``.
- **Records**: the delimiter is read from the header (``|``, ``|#`` ...); a record
  with too few fields continues on the next physical line (free text with newlines);
  one with too many, or cut off at the end, is skipped and reported, never shifted.
  Invalid UTF-8 is replaced. Step rows (``123.batch``, ``123.0``) are skipped (use
  ``-X``); byte-identical duplicate rows are dropped; requeued attempts are kept.
- **Gang size**: ``gres/gpu`` in ``AllocTRES`` (``ReqTRES`` while pending; typed
  ``gres/gpu:h100=8`` summed when there is no untyped total), else ``AllocGRES``/
  ``ReqGRES`` (``gpu:8`` per node x ``NNodes``). No GPU field at all -> unknown.
- **Window**: ``--from``/``--to`` keep the jobs present in it (submitted before its
  end, not ended before its start); without them the window spans the data.
- **Eligibility**: ``eligibility_history`` is a dimension only when jobs carry
  Eligible times; queue wait is then Start − Eligible (a dependency hold is not a wait).
"""

from __future__ import annotations

import itertools
import math
import operator
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import IO, Any, TypedDict

import numpy as np

from store.records import SAMPLES, Dimension, RunRecord, Work
from workbench.errors import BadInput, UsageError
from workbench.formats import fixed_width
from workbench.formats.inference_records import json_safe
from workbench.importers.base import READ_ERRORS, Importer, ImporterOption, ImportOptions, Probe, open_binary

MAX_LINE = 1 << 20  # a physical line longer than 1 MiB is not sacct output
MAX_RECORD_LINES = 64  # a record spanning more physical lines is corrupt
# Small blocks and chunks: a chunk's strings stay in the CPU's cache, and its temporaries stay below
# what the C allocator gives back to the system and faults in again (4 MiB blocks of 16 Ki records
# were 15 % slower, with 5x the page faults).
BLOCK = 256 << 10
CHUNK_ROWS = 1024
MAX_EXPECTED_ROWS = 1 << 26  # what a column is first sized for at most (it grows past that)
NAN = math.nan
_SENTINELS = {"", "Unknown", "None", "N/A", "NONE", "unknown"}
_COLUMN = re.compile(r"^[A-Za-z][A-Za-z0-9_()/:]*$")
_GPU_TRES = re.compile(r"(?:^|,)gres/gpu(?::([^=,]+))?=(\d+)")
_GPU_GRES = re.compile(r"(?:^|,)(?:PER_NODE:)?gpu(?::([^:,(]+))?(?::(\d+))?")
_SACCT_TIMES = ("Submit", "Start", "End", "Eligible")
_DOWN = ("down", "drain", "fail", "maint", "inval", "unk", "no_resp", "reserved")


class SacctImporter(Importer):
    name = "sacct"
    version = "1"
    description = "Slurm sacct --parsable2 (any delimiter), with sinfo for pool capacity"
    priority = 40
    options = (
        ImporterOption("tz", "--tz", "Time zone of naive timestamps, e.g. UTC or Europe/Paris.", metavar="ZONE"),
        ImporterOption(
            "window_from", "--from", "Start of the observation window (fleet), e.g. 2026-03-02T08:00.", metavar="TIME"
        ),
        ImporterOption("window_to", "--to", "End of the observation window (fleet).", metavar="TIME"),
        ImporterOption(
            "wait_target_s",
            "--wait-target",
            "Queue-wait target for service attainment (fleet).",
            float,
            metavar="SECONDS",
        ),
        ImporterOption(
            "sacct_fields",
            "--sacct-fields",
            "Field names of headerless sacct output (--noheader), in the order given "
            "to sacct --format, e.g. JobID,State,Submit,Start,End,AllocTRES.",
            metavar="F1,F2,...",
        ),
    )

    def sniff(self, probe: Probe) -> bool:
        first, _, rest = probe.text.lstrip("\ufeff").partition("\n")
        # A headerless record (--noheader) is taken too: read() needs --sacct-fields for it.
        return (
            _is_sacct_header(first)
            or _is_sinfo_header(first)
            or _is_fixed_width(first, rest.split("\n", 1)[0])
            or _looks_headerless(probe.text)
        )

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        folders: dict[Path, dict[str, list[Path]]] = defaultdict(lambda: {"sacct": [], "sinfo": []})
        for path in paths:
            folders[path.parent]["sinfo" if _is_sinfo_header(_first_line(path)) else "sacct"].append(path)
        lone_sinfo = [p for f in folders.values() if not f["sacct"] for p in f["sinfo"]]
        if lone_sinfo and all(not f["sacct"] for f in folders.values()):
            raise BadInput(
                lone_sinfo[0], "an sinfo capacity file alone holds no jobs; import it with the sacct output beside it"
            )
        for folder, files in sorted(folders.items()):
            if files["sacct"]:
                yield window_run(files["sacct"], files["sinfo"], options, folder)


IMPORTER = SacctImporter()


def _first_line(path: Path) -> str:
    try:
        with open_binary(path) as f:
            return f.readline(MAX_LINE).decode("utf-8", errors="replace").lstrip("\ufeff")
    except READ_ERRORS as exc:
        raise BadInput(path, f"cannot be read ({exc})") from None


def _delimiter(header: str) -> str | None:
    """The delimiter that splits the header into plain column names, including JobID: the
    usual ones first (``|``, GCM's ``|#``...), then any other single character of the header
    that is not part of a name (``sacct --delimiter=~``)."""
    header = header.rstrip("\r\n")
    others = dict.fromkeys(ch for ch in header if not (ch.isalnum() or ch in "_()/"))
    for delim in ("|#", "|", ";", "\t", ",", "#", ":", *others):
        if delim not in header:
            continue
        names = [n.strip() for n in header.split(delim)]
        if names and names[-1] == "":
            names = names[:-1]  # -p leaves a trailing delimiter
        if len(names) >= 2 and ("JobID" in names or "JobIDRaw" in names):
            if all(_COLUMN.match(n) for n in names):
                return delim
    return None


def _is_fixed_width(header: str, second: str) -> bool:
    """sacct's default layout: a header naming JobID over a line of dashes (no ``-P``)."""
    return fixed_width.is_dash_line(second) and bool({"JobID", "JobIDRaw"} & set(header.split()))


def _is_sacct_header(line: str) -> bool:
    d = _delimiter(line)
    if d is None:
        return False
    names = set(n.strip() for n in line.rstrip("\r\n").split(d))
    return ("JobID" in names or "JobIDRaw" in names) and bool(names & {"State", *_SACCT_TIMES})


_JOB_ID = re.compile(r"^\d+(?:_(?:\d+|\[[\d,\-%]+\]))?(?:\+\d+)?(?:\.\w+)?$")
_STATE = re.compile(
    r"^(?:COMPLETED|FAILED|CANCELLED(?: by \d+)?|TIMEOUT|RUNNING|PENDING|OUT_OF_MEMORY|NODE_FAIL|PREEMPTED|"
    r"REQUEUED|SUSPENDED|BOOT_FAIL|DEADLINE|RESIZING|REVOKED)\+?$"
)
_CANDIDATES = ("|#", "|", ";", "\t", ",", "#", ":")


def _headerless_delimiter(line: str, width: int | None = None) -> str | None:
    """The delimiter of a headerless sacct record: its first field a job id, another a job
    state; with ``width`` (the number of --sacct-fields), the one giving that many fields."""
    line = line.rstrip("\r\n")
    for delim in _CANDIDATES:
        if delim not in line or (delim == ":" and "T" in line):  # ':' is inside every timestamp
            continue
        parts = [p.strip() for p in line.split(delim)]
        if parts and parts[-1] == "" and len(parts) > 1:
            parts = parts[:-1]  # -p's trailing delimiter
        if width is not None:
            if len(parts) == width:
                return delim
            continue
        if len(parts) >= 2 and _JOB_ID.match(parts[0]) and any(_STATE.match(p) for p in parts[1:]):
            return delim
    return None


def _looks_headerless(text: str) -> bool:
    lines = [ln for ln in text.lstrip("\ufeff").split("\n")[:5] if ln.strip()]
    return bool(lines) and all(_headerless_delimiter(ln) for ln in lines[: max(1, len(lines) - 1)])


def sacct_fields(options: ImportOptions | None, path: Path) -> list[str] | None:
    """The ``--sacct-fields`` list (or a ``wb.toml``'s ``[sacct] fields``), checked."""
    raw = (options.params.get("sacct_fields") if options else None) or None
    if raw is None:
        return None
    return check_fields(raw, path, "--sacct-fields")


def check_fields(raw: object, path: Path | None, how: str, where: str | None = None) -> list[str]:
    """A list of sacct field names (``F1,F2,...`` or a list): plain names, JobID among them."""
    names = [
        n.strip() for n in (raw if isinstance(raw, list) else str(raw).split(",")) if isinstance(n, str) and n.strip()
    ]
    bad = [n for n in names if not _COLUMN.match(n)]
    if isinstance(raw, list) and not all(isinstance(n, str) for n in raw):
        bad = bad or [next(repr(n) for n in raw if not isinstance(n, str))]
    if bad or not ({"JobID", "JobIDRaw"} & set(names)):
        raise BadInput(
            path,
            f"{how} {raw!r}: expected sacct field names separated by commas, JobID among them"
            + (f" ({bad[0]!r} is not one)" if bad else ""),
            where=where,
        )
    return names


def _is_sinfo_header(line: str) -> bool:
    names = {n.strip() for n in line.rstrip("\r\n").split("|")}
    return "GRES" in names and bool(names & {"NODELIST", "HOSTNAMES"}) and "STATE" in names


# ---------------------------------------------------------------- time


class LocalClock:
    """Local ``YYYY-MM-DDTHH:MM:SS`` -> epoch seconds in one zone, cached per hour."""

    def __init__(self, tz: str | None, path: Path) -> None:
        self.path = path
        self.zone: tzinfo | None = _zone(tz, path) if tz else None
        self.tz = tz
        self._hours: dict[str, float] = {}
        self.ambiguous = 0

    def epoch(self, text: str, where: str) -> float:
        if text in _SENTINELS:
            return NAN
        if len(text) == 19 and text[10] == "T" and text[4] == "-" and text[13] == ":":
            base = self._hours.get(text[:13])
            if base is None:
                base = self._hour(text, where)
            try:
                return base + int(text[14:16]) * 60 + int(text[17:19])
            except ValueError:
                raise BadInput(self.path, f"bad time {text[:40]!r}", where=where) from None
        if text.isdigit():  # SLURM_TIME_FORMAT=%s; ASCII only ("²".isdigit() is True, float("²") fails)
            if not (text.isascii() and len(text) <= 12):
                raise BadInput(
                    self.path, f"bad time {text[:40]!r} (epoch seconds are at most 12 ASCII digits)", where=where
                )
            return float(text)
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise BadInput(self.path, f"bad time {text[:40]!r}", where=where) from None
        if parsed.tzinfo is None:
            return self._local(parsed, where)
        return parsed.timestamp()

    def _hour(self, text: str, where: str) -> float:
        try:
            hour = datetime(int(text[0:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]))
        except ValueError:
            raise BadInput(self.path, f"bad time {text[:40]!r}", where=where) from None
        base = self._local(hour, where)
        self._hours[text[:13]] = base
        return base

    def _local(self, naive: datetime, where: str) -> float:
        if self.zone is None:
            raise BadInput(
                self.path,
                "sacct times carry no time zone; say which with --tz (e.g. --tz UTC or --tz Europe/Paris)",
                where=where,
            )
        first = naive.replace(tzinfo=self.zone, fold=0)
        if first.utcoffset() != naive.replace(tzinfo=self.zone, fold=1).utcoffset():
            self.ambiguous += 1  # counted per distinct hour: local time names two instants (or none)
        return first.timestamp()


def _zone(tz: str, path: Path) -> tzinfo:
    m = re.fullmatch(r"([+-])(\d{1,2}):?(\d{2})?", tz.strip())
    if m:
        minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
        return timezone(timedelta(minutes=minutes if m.group(1) == "+" else -minutes))
    if tz.strip().upper() in ("UTC", "Z", "GMT"):
        return timezone.utc
    try:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        return ZoneInfo(tz.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise BadInput(
            path, f"unknown time zone {tz!r} for --tz (use an IANA name such as Europe/Paris, UTC, or +02:00)"
        ) from None


# ---------------------------------------------------------------- records


@dataclass
class Chunk:
    """Complete records of one file, in order: ``lines[i]`` starts on ``line_numbers[i]``."""

    header: list[str]
    stride: int  # fields per record as split (one more than the header with -p's trailing delimiter)
    delim: str
    lines: list[str] = field(default_factory=list)
    line_numbers: list[int] = field(default_factory=list)
    malformed: list[int] = field(default_factory=list)
    fixed_width: bool = False  # read from sacct's fixed-width layout (no -P)
    cut: Counter[str] = field(default_factory=Counter)  # fields the writer cut short ('+'), by column


def iter_chunks(path: Path, rows: int | None = None, fields: list[str] | None = None) -> Iterator[Chunk]:
    """Logical records in chunks of about ``rows`` (default ``CHUNK_ROWS``; ``fields``: the names of
    headerless output's columns). A record with too few fields continues on the next physical line;
    one with too many, or cut off by the end of the file, is listed in ``malformed`` (by line)
    instead of being shifted into the wrong columns."""
    rows = rows or CHUNK_ROWS  # (read when called: a test sets small chunks)
    try:
        stream = open_binary(path)
    except READ_ERRORS as exc:
        raise BadInput(path, f"cannot be read ({exc})") from None
    with stream:
        header_raw = stream.readline(MAX_LINE + 1)
        if len(header_raw) > MAX_LINE:
            raise BadInput(path, f"header line longer than {MAX_LINE} bytes", where="line 1")
        header_line = header_raw.decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r\n")
        second_raw = stream.readline(MAX_LINE + 1)  # a line of dashes: the fixed-width layout
        second = second_raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if fields is None and _is_fixed_width(header_line, second):
            yield from _fixed_chunks(stream, path, header_raw.lstrip(b"\xef\xbb\xbf"), second_raw, rows)
            return
        if len(second_raw) > MAX_LINE:
            raise BadInput(path, f"line longer than {MAX_LINE} bytes (not sacct output?)", where="line 2")
        header, delim, trailing, first_record, line_no = _layout(path, header_line, second, bool(second_raw), fields)
        stride = len(header) + (1 if trailing else 0)
        need = stride - 1  # delimiters per complete record
        chunk = Chunk(header, stride, delim)
        pending: list[str] = []
        pending_start = 0
        for lines in itertools.chain(first_record, _blocks(stream, path)):
            first = line_no + 1
            line_no += len(lines)
            counts = list(map(str.count, lines, itertools.repeat(delim)))  # (C-level: no Python loop per line)
            odd = [] if counts.count(need) == len(counts) else np.flatnonzero(np.array(counts) != need).tolist()
            done = 0
            for at in [*odd, len(lines)]:  # lines between two odd ones are whole records, taken in bulk
                while pending and done < at:  # unless a record is pending: they continue it first
                    pending, pending_start = _continued(chunk, pending, pending_start, lines[done], delim, need)
                    done += 1
                if done < at:
                    chunk.lines.extend(lines[done:at])
                    chunk.line_numbers.extend(range(first + done, first + at))
                if at < len(lines):
                    if pending or lines[at].strip():  # (a blank line between records is no record)
                        pending_start = pending_start if pending else first + at
                        pending, pending_start = _continued(chunk, pending, pending_start, lines[at], delim, need)
                    done = at + 1
            if len(chunk.lines) >= rows:
                yield chunk
                chunk = Chunk(header, stride, delim)
        if pending:
            chunk.malformed.append(pending_start)  # the file ends inside a record
        yield chunk


# Joins the fields of a fixed-width record: a character no sacct field holds.
_UNIT = "\x1f"
_STATES = (
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "RUNNING",
    "PENDING",
    "OUT_OF_MEMORY",
    "NODE_FAIL",
    "PREEMPTED",
    "REQUEUED",
    "SUSPENDED",
    "BOOT_FAIL",
    "DEADLINE",
    "RESIZING",
    "REVOKED",
)


def _layout(
    path: Path, header_line: str, second: str, has_second: bool, fields: list[str] | None
) -> tuple[list[str], str, bool, list[list[str]], int]:
    """How a delimited file is laid out: its columns (the header's, or ``fields`` for headerless output), the
    delimiter, whether records end in one, the first lines to read as records, and the line they follow."""
    delim = _delimiter(header_line)
    first_record: list[list[str]] = [[second]] if has_second else []
    if delim is None and fields is None:
        if _headerless_delimiter(header_line):
            raise BadInput(
                path,
                "sacct output without a header line (--noheader): give the fields in the order of "
                "sacct --format with --sacct-fields, e.g. --sacct-fields JobID,State,Submit,Start,End,AllocTRES "
                '(or [sacct] fields = "..." in a wb.toml beside it)',
                where="line 1",
            )
        raise BadInput(path, "no sacct header (expected column names such as JobID|State|Submit ...)", where="line 1")
    if delim is None:
        assert fields is not None
        delim = _headerless_delimiter(header_line, len(fields))
        if delim is None:
            raise BadInput(
                path,
                f"the first record does not split into the {len(fields)} fields --sacct-fields (or [sacct] fields) "
                f"names "
                "with any delimiter wb knows (| |# ; tab , #)",
                where="line 1",
            )
        trailing = header_line.rstrip().endswith(delim) and len(header_line.split(delim)) == len(fields) + 1
        header = list(fields)
        first_record = [[header_line, second] if has_second else [header_line]]  # no header: a record
        line_no = 0
    else:
        header = [n.strip() for n in header_line.split(delim)]
        trailing = header[-1] == ""
        if trailing:
            header = header[:-1]
        line_no = 1
    return header, delim, trailing, first_record, line_no


def _uncut(name: str, value: str) -> str:
    """A field sacct cut short (``+``): a job id stays as printed (a name, never a figure), a
    state is the one state it can only be the start of; anything else is unknown."""
    if name in ("JobID", "JobIDRaw"):
        return value
    if name == "State":
        stem = value.rstrip("+")
        found = [s for s in _STATES if s.startswith(stem.split(" ", 1)[0])]
        return found[0] if len(found) == 1 else ""
    return ""


def _fixed_chunks(stream: IO[bytes], path: Path, header: bytes, dashes: bytes, rows: int) -> Iterator[Chunk]:
    """Chunks of sacct's fixed-width layout, fields joined by ``_UNIT``; every cut field counted."""
    layout = fixed_width.Layout.of(header.rstrip(b"\r\n"), dashes.rstrip(b"\r\n"))
    if not ({"JobID", "JobIDRaw"} & set(layout.names)):
        raise BadInput(path, "header has no JobID column", where="line 1")
    chunk = Chunk(list(layout.names), len(layout.names), _UNIT, fixed_width=True)
    for number, line in fixed_width.records(stream, layout, 2, MAX_LINE):
        if len(line) > MAX_LINE:
            raise BadInput(path, f"line longer than {MAX_LINE} bytes (not sacct output?)", where=f"line {number}")
        values, cut = layout.cut(line)
        for i in cut:
            chunk.cut[layout.names[i]] += 1
            values[i] = _uncut(layout.names[i], values[i])
        chunk.lines.append(_UNIT.join(v.replace(_UNIT, " ") for v in values))
        chunk.line_numbers.append(number)
        if len(chunk.lines) >= rows:
            yield chunk
            chunk = Chunk(list(layout.names), len(layout.names), _UNIT, fixed_width=True)
    yield chunk


def _continued(chunk: Chunk, pending: list[str], start: int, text: str, delim: str, need: int) -> tuple[list[str], int]:
    """One more physical line of a record whose fields run over several (free text with
    newlines): the record is whole once it holds ``need`` delimiters, malformed past them."""
    pending = [*pending, text]
    joined = "\n".join(pending)
    count = joined.count(delim)
    if count == need:
        chunk.lines.append(joined)
        chunk.line_numbers.append(start)
        return [], start
    if count > need or len(pending) > MAX_RECORD_LINES:
        chunk.malformed.append(start)
        return [], start
    return pending, start


def _blocks(stream: IO[bytes], path: Path) -> Iterator[list[str]]:
    """Decoded lines, a block at a time (bounded memory even for one endless line)."""
    carry = b""
    line_no = 1

    def checked(text: str) -> str:
        """``text``, unless a line of it is longer than ``MAX_LINE``: found by jumping from the
        last newline of one ``MAX_LINE`` window to the next, not by measuring every line."""
        at = 0
        while len(text) - at > MAX_LINE:
            newline = text.rfind("\n", at, at + MAX_LINE + 1)
            if newline < 0:
                where = f"line {line_no + 1 + text.count(chr(10), 0, at)}"
                raise BadInput(path, f"line longer than {MAX_LINE} bytes (not sacct output?)", where=where)
            at = newline + 1
        return text

    while True:
        try:
            block = stream.read(BLOCK)
        except READ_ERRORS as exc:
            raise BadInput(path, f"corrupt or truncated ({exc})", where=f"after line {line_no}") from None
        if not block:
            break
        block = carry + block
        cut = block.rfind(b"\n")
        if cut < 0:
            if len(block) > MAX_LINE:
                raise BadInput(
                    path, f"line longer than {MAX_LINE} bytes (not sacct output?)", where=f"line {line_no + 1}"
                )
            carry = block
            continue
        carry = block[cut + 1 :]
        text = checked(block[:cut].decode("utf-8", errors="replace"))
        split = text.split("\n")
        lines = [t.rstrip("\r") for t in split] if "\r" in text else split  # CRLF: one test per block
        yield lines
        line_no += len(lines)
    if carry:
        yield [checked(carry.decode("utf-8", errors="replace")).rstrip("\r")]


def gang_size(alloc_tres: str, req_tres: str, alloc_gres: str, req_gres: str, nnodes: str) -> tuple[float, str]:
    """GPUs of a job and the device type when stated (``nan`` when no field says)."""
    for tres in (alloc_tres, req_tres):
        if tres and tres not in _SENTINELS:
            total, typed, kind = None, 0, ""
            for m in _GPU_TRES.finditer(tres):
                if m.group(1) is None:
                    total = int(m.group(2))
                else:
                    typed += int(m.group(2))
                    kind = kind or m.group(1)
            if total is not None:
                return float(total), kind
            if typed:
                return float(typed), kind
            if "gres/gpu" in tres:
                return NAN, ""  # a GPU count we cannot read is unknown, not zero
            return 0.0, ""  # TRES stated without gres/gpu: a CPU-only job
    for gres in (alloc_gres, req_gres):
        if gres and gres not in _SENTINELS:
            m = _GPU_GRES.search(gres)
            if not m:
                return 0.0, ""
            per_node = (
                int(m.group(2)) if m.group(2) else (int(m.group(1)) if m.group(1) and m.group(1).isdigit() else 1)
            )
            kind = m.group(1) if m.group(1) and not m.group(1).isdigit() else ""
            nodes = int(nnodes) if nnodes.isdigit() else 1
            return float(per_node * nodes), kind
    return NAN, ""


TIME_COLUMNS = ("Submit", "Eligible", "Start", "End")
GANG_COLUMNS = ("AllocTRES", "ReqTRES", "AllocGRES", "ReqGRES", "NNodes")


class _Collector:
    """Turns chunks of records into columns. Fields are cut column-wise: the chunk's
    records are joined with the delimiter and split once, so column ``j`` is the slice
    ``flat[j::stride]``; times are parsed by numpy per chunk, the zone per distinct hour.
    Text of few distinct values (states, reasons) is kept as codes, and each row's hash is
    kept: byte-identical duplicates are found once the window's rows are all read (``_Jobs.of``)."""

    def __init__(self, clock: LocalClock, path: Path) -> None:
        self.clock, self.path = clock, path
        self.jobs: list[np.ndarray] = []  # job ids, a part per chunk (their width grows with them)
        self.numbers: dict[str, _Filling] = {}  # gpus, state and reason codes, row hashes, times
        self.expected = 0  # the rows the file is expected to hold (set by its first chunk)
        self.steps = 0
        self.malformed: list[int] = []
        self.device_types: set[str] = set()
        self.partitions: set[str] = set()
        self.clusters: set[str] = set()
        self.has_eligible = False
        self.columns: set[str] = set()  # the header's column names
        self.cut: Counter[str] = Counter()  # fields sacct cut short, by column (fixed-width layout)
        self.fixed_width = False
        self.gang_cache: dict[tuple[str, ...], tuple[float, str]] = {}
        self.shifts: dict[float, float] = {}
        self.vocabulary = _Codes()  # job states: text -> code (``numbers["state"]`` holds codes)
        self.reasons = _Codes()  # Reason as written -> code (``numbers["reason"]``)

    def add(self, chunk: Chunk) -> None:
        self.malformed.extend(chunk.malformed)
        if not chunk.lines:
            return
        idx: dict[str, int] = {}
        for i, name in enumerate(chunk.header):
            idx.setdefault(name, i)  # a repeated column (GCM's trailing End) keeps the first
        if "JobID" not in idx and "JobIDRaw" not in idx:
            raise BadInput(self.path, "header has no JobID column", where="line 1")
        self.has_eligible = self.has_eligible or "Eligible" in idx
        self.columns.update(idx)
        self.cut.update(chunk.cut)
        self.fixed_width = self.fixed_width or chunk.fixed_width
        flat = chunk.delim.join(chunk.lines).split(chunk.delim)
        n, stride = len(chunk.lines), chunk.stride
        if len(flat) != n * stride:  # cannot happen: every line was counted
            raise BadInput(self.path, "internal: field count mismatch", where=f"line {chunk.line_numbers[0]}")
        blank = [""] * n

        def col(name: str) -> list[str]:
            i = idx.get(name)
            return flat[i::stride] if i is not None else blank

        jobs = col("JobID" if "JobID" in idx else "JobIDRaw")
        if _padded(jobs):
            jobs = [j.strip() for j in jobs]
        keep = self._allocations(jobs)
        if keep is not None and not keep:
            return
        pick = (lambda values: values) if keep is None else (lambda values: [values[i] for i in keep])
        lines_kept = pick(chunk.line_numbers)
        self.jobs.append(np.array(pick(jobs), dtype=str))
        self._fill("hash", np.fromiter(map(hash, pick(chunk.lines)), dtype=np.int64, count=len(lines_kept)), chunk)
        self._fill("gpus", self._gangs(pick(col("AllocTRES")), lambda name: pick(col(name))), chunk)
        self._fill("state", self._states(pick(col("State"))), chunk)
        self._fill("reason", _encode(pick(col("Reason")), self.reasons), chunk)
        for name in TIME_COLUMNS:
            self._fill(name, self._epochs(pick(col(name)), lines_kept), chunk)
        self.partitions.update(_stated(set(pick(col("Partition")))))
        self.clusters.update(c.strip() for c in set(pick(col("Cluster"))) if c.strip())

    def _fill(self, name: str, values: np.ndarray, chunk: Chunk) -> None:
        column = self.numbers.get(name)
        if column is None:  # sized once for the whole file, from its first chunk
            self.expected = self.expected or self._expected_rows(chunk)
            column = self.numbers[name] = _Filling(values.dtype, self.expected)
        column.add(values)

    def _expected_rows(self, chunk: Chunk) -> int:
        """The records the file holds, from its size and the first chunk's characters a record
        (a compressed file holds more: its columns then grow by doubling)."""
        per_record = (sum(map(len, chunk.lines)) + len(chunk.lines)) / len(chunk.lines)
        try:
            size = self.path.stat().st_size
        except OSError:
            size = 0
        return min(int(size / per_record * 1.05), MAX_EXPECTED_ROWS) + len(chunk.lines)

    def _allocations(self, jobs: list[str]) -> list[int] | None:
        """The chunk's allocation rows (no job step, ``JobID`` with "."); None: every row."""
        if "." not in "".join(jobs):
            return None  # the usual case: no step rows
        keep = [i for i, job in enumerate(jobs) if "." not in job]
        self.steps += len(jobs) - len(keep)
        return keep

    def _gangs(self, alloc: list[str], column: Callable[[str], list[str]]) -> np.ndarray:
        """GPUs of each job, read once per distinct value (no Python loop per row), and the
        device types those jobs name. ``AllocTRES`` decides alone when it is stated (the usual
        case); the other rows are keyed by all the gang fields (``column(name)``)."""
        distinct = _Codes()
        codes = _encode(alloc, distinct)
        gpus = np.full(len(distinct), NAN)
        decided = np.zeros(len(distinct), dtype=bool)
        for value, code in distinct.items():
            stated = value.strip()
            if stated and stated not in _SENTINELS:
                decided[code] = True
                gpus[code] = self._gang(stated, "", "", "", "")
        out = gpus[codes]
        rest = np.flatnonzero(~decided[codes])
        if len(rest):  # (pending jobs: ReqTRES, or GRES per node times nodes)
            keys = list(zip(_take(alloc, rest), *(_take(column(name), rest) for name in GANG_COLUMNS[1:])))
            found = {key: self._gang(*(x.strip() for x in key)) for key in dict.fromkeys(keys)}
            out[rest] = np.fromiter(map(found.__getitem__, keys), dtype=np.float64, count=len(keys))
        return out

    def _states(self, values: list[str]) -> np.ndarray:
        """Job states as codes into ``self.vocabulary``, each distinct value read once ("CANCELLED by 123"
        is CANCELLED)."""
        written = _Codes()
        codes = _encode(values, written)
        state = [self.vocabulary[v.strip().split(" ", 1)[0]] for v in written]
        return np.array(state, dtype=np.int32)[codes]

    def _gang(self, *fields: str) -> float:
        found = self.gang_cache.get(fields)
        if found is None:
            found = gang_size(*fields)
            if len(self.gang_cache) < 100_000:
                self.gang_cache[fields] = found
        if found[1]:
            self.device_types.add(found[1])
        return found[0]

    def _epochs(self, texts: list[str], lines: list[int]) -> np.ndarray:
        """Times as epoch seconds (NaN when unknown): local ``YYYY-MM-DDTHH:MM:SS`` parsed by numpy
        per chunk, other shapes (epoch seconds, a stated offset) one by one, the zone per hour."""
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        odd = np.flatnonzero(lengths != 19).tolist()
        overrides = []
        if odd:
            texts = list(texts)
            for i in odd:
                t = texts[i].strip()
                texts[i] = "NaT"
                if t not in _SENTINELS:
                    overrides.append((i, self.clock.epoch(t, f"line {lines[i]}")))  # epoch or offset stamps
        try:
            parsed = np.array(texts, dtype="datetime64[s]")
        except ValueError:
            for t, line in zip(texts, lines):
                if t != "NaT":
                    self.clock.epoch(t, f"line {line}")  # names the bad stamp and its line
            raise BadInput(self.path, f"unreadable time between lines {lines[0]} and {lines[-1]}") from None
        out = parsed.astype(np.int64).astype(np.float64)
        out[np.isnat(parsed)] = NAN
        finite = np.isfinite(out)
        if finite.any():
            first = int(np.argmax(finite))
            if self.clock.zone is None:
                self.clock.epoch(texts[first], f"line {lines[first]}")  # raises: --tz needed
            if isinstance(self.clock.zone, timezone):  # a fixed offset (UTC, +02:00): one shift
                out += self._shift(math.floor(out[first] / 3600.0))
            else:
                out[finite] += self._shifts(np.floor(out[finite] / 3600.0))
        for i, value in overrides:
            out[i] = value
        return out

    def _shifts(self, hours: np.ndarray) -> np.ndarray:
        """What turns each naive local stamp into epoch seconds, by its hour: one per distinct
        hour, found without sorting the stamps."""
        low = float(hours.min())
        span = int(hours.max() - low) + 1
        if span > 4 * len(hours) + 1024:  # hours spread thin over years: distinct ones by sorting
            distinct, inverse = np.unique(hours, return_inverse=True)
            return np.array([self._shift(h) for h in distinct.tolist()], dtype=np.float64)[inverse]
        slot = (hours - low).astype(np.int64)
        seen = np.zeros(span, dtype=bool)
        seen[slot] = True
        table = np.zeros(span, dtype=np.float64)
        for k in np.flatnonzero(seen).tolist():
            table[k] = self._shift(low + k)
        return table[slot]

    def _shift(self, hour: float) -> float:
        """Seconds to add to a naive local stamp in this hour to get epoch seconds."""
        shift = self.shifts.get(hour)
        if shift is None:
            local = datetime(1970, 1, 1) + timedelta(hours=hour)
            shift = self.shifts[hour] = self.clock._local(local, "") - hour * 3600.0
        return shift


class _Codes(dict[str, int]):
    """Text -> code: a text not seen before gets the next code (codes in order of first appearance)."""

    def __missing__(self, text: str) -> int:
        code = self[text] = len(self)
        return code


def _encode(values: list[str], codes: _Codes) -> np.ndarray:
    """``values`` as their codes (one pass in C; Python runs only for a value not seen before)."""
    return np.fromiter(map(codes.__getitem__, values), dtype=np.int32, count=len(values))


def _stated(values: set[str]) -> set[str]:
    """The values that state something, stripped (blank and sentinel values do not)."""
    return {v for v in map(str.strip, values) if v and v not in _SENTINELS}


def _take(values: list[str], index: np.ndarray) -> list[str]:
    """``values`` at ``index`` (a C-level gather)."""
    if len(index) == 1:
        return [values[int(index[0])]]
    return list(operator.itemgetter(*index.tolist())(values)) if len(index) else []


def _padded(values: list[str]) -> bool:
    """Whether any value has blanks (one C-level scan instead of a check per value)."""
    joined = "".join(values)
    return " " in joined or "\t" in joined or "\r" in joined or "\n" in joined


def _concat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.array([], dtype=dtype)


class _Filling:
    """A column filled chunk after chunk in one array made for the rows expected (grown by
    doubling past them), instead of parts joined at the end: the column is never held twice,
    and the pages past its last row are never touched."""

    def __init__(self, dtype: Any, capacity: int) -> None:
        self.values = np.empty(capacity, dtype=dtype)
        self.n = 0

    def add(self, more: np.ndarray) -> None:
        end = self.n + len(more)
        if end > len(self.values):
            grown = np.empty(max(end, 2 * len(self.values)), dtype=self.values.dtype)
            grown[: self.n] = self.values[: self.n]
            self.values = grown
        self.values[self.n : end] = more
        self.n = end

    def array(self) -> np.ndarray:
        return self.values[: self.n]


def window_run(sacct_paths: list[Path], sinfo_paths: list[Path], options: ImportOptions, folder: Path) -> RunRecord:
    """The fleet run of one window: the sacct files' jobs (those present in ``--from``/``--to`` when given),
    the pool's capacity from sinfo, and what the files could not say as warnings."""
    params = options.params
    clocks, collectors = _read_sacct(sacct_paths, options)
    jobs = _Jobs.of(collectors, sacct_paths[0])
    ws, we, keep = _window(jobs, params, clocks[0], sacct_paths[0])
    # Only the time columns the file has: a column it lacks is absent (unknown), never a
    # column of blanks that reads as "no job started" (the fleet lens check says what is missing).
    times = [name.lower() for name in TIME_COLUMNS if any(name in c.columns for c in collectors)]
    samples = jobs.samples(keep, times)
    capacity, sinfo_meta = _capacity(sinfo_paths)
    pool = {"capacity_gpus": capacity, "window_start": ws, "window_end": we, "wait_target_s": _wait_target(params)}
    gpu_seconds = _gpu_seconds(samples, ws, we) if "start" in samples else NAN
    meta: dict[str, object] = {  # JSON once json_safe has taken out the non-finite numbers
        "source_format": "slurm sacct",
        "pool": pool,
        "tz": params.get("tz"),
        "jobs_read": int(len(jobs.job)),
        "jobs_in_window": int(keep.sum()),
        "skipped_step_rows": jobs.skipped_steps,
        "duplicate_rows_dropped": jobs.duplicates,
        "malformed_records": jobs.malformed[:50],
        "states": _state_counts(jobs.state_codes[keep], jobs.vocabulary),
        "reasons": dict(jobs.reasons.most_common(20)),
        "capacity": sinfo_meta,
    }
    warnings = _warnings(jobs, collectors, clocks, params.get("tz"), capacity)
    if warnings:
        meta["warnings"] = warnings
    return RunRecord(
        lens="fleet",
        label=options.label or f"sacct {folder.name or folder}",
        dimensions=_fleet_dimensions(collectors, sinfo_meta, samples),
        window={
            "kind": "steady",
            "policy": "sacct window"
            + (" (--from/--to)" if params.get("window_from") or params.get("window_to") else " (span of the data)"),
        }
        if times
        else {"kind": "unknown", "policy": "no Submit, Eligible, Start or End column: jobs without a window"},
        work=Work("GPU-hours", gpu_seconds / 3600.0) if math.isfinite(gpu_seconds) else Work("GPU-hours"),
        meta=json_safe(meta),
        tables={SAMPLES: samples},
        sources=[*sacct_paths, *sinfo_paths],
    )


def _read_sacct(paths: list[Path], options: ImportOptions) -> tuple[list[LocalClock], list[_Collector]]:
    """Each file's records through its own clock, into collectors that share the codes of one
    window (states, reasons)."""
    clocks: list[LocalClock] = []
    collectors: list[_Collector] = []
    for path in paths:
        clock = LocalClock(options.params.get("tz"), path)
        clocks.append(clock)
        collector = _Collector(clock, path)
        if collectors:
            collector.vocabulary = collectors[0].vocabulary  # one set of state codes
            collector.reasons = collectors[0].reasons
        collectors.append(collector)
        for chunk in iter_chunks(path, fields=sacct_fields(options, path)):
            collector.add(chunk)
    return clocks, collectors


@dataclass
class _Jobs:
    """The allocation rows of every file of a window, as columns (times in epoch seconds)."""

    job: np.ndarray
    times: dict[str, np.ndarray]  # submit, eligible, start, end
    gpus: np.ndarray
    state_codes: np.ndarray
    vocabulary: list[str]
    reasons: Counter[str]  # Reason of the jobs, as stated
    skipped_steps: int
    duplicates: int  # byte-identical rows dropped
    malformed: list[str]

    @classmethod
    def of(cls, collectors: list[_Collector], path: Path) -> "_Jobs":
        """The columns, byte-identical duplicate rows (sacct -D copies, files that overlap) once,
        or the reason there are no job records at all (``BadInput``)."""
        skipped_steps = sum(c.steps for c in collectors)
        malformed = [f"{c.path.name}: line {n}" for c in collectors for n in c.malformed]

        def column(name: str, dtype: Any) -> np.ndarray:  # (each file's let go once joined: a lower peak)
            return _concat([c.numbers.pop(name).array() for c in collectors if name in c.numbers], dtype)

        job = _concat([part for c in collectors for part in c.jobs], str)
        for c in collectors:
            c.jobs.clear()
        if not len(job):
            why = []
            if skipped_steps:
                why.append(f"{skipped_steps} job-step rows skipped (JobID with '.'; run sacct with -X for allocations)")
            if malformed:
                why.append(
                    f"{len(malformed)} malformed records ({', '.join(malformed[:3])}: field count differs from the "
                    "header)"
                )
            raise BadInput(path, "no job records" + (": " + "; ".join(why) if why else ""))
        once, duplicates = _first_copies(column("hash", np.int64))
        return cls(
            job=job[once],
            times={name.lower(): column(name, np.float64)[once] for name in TIME_COLUMNS},
            gpus=column("gpus", np.float64)[once],
            state_codes=column("state", np.int32)[once],
            vocabulary=list(collectors[0].vocabulary),
            reasons=_reason_counts(column("reason", np.int32)[once], list(collectors[0].reasons)),
            skipped_steps=skipped_steps,
            duplicates=duplicates,
            malformed=malformed,
        )

    def samples(self, keep: np.ndarray, times: list[str]) -> dict[str, np.ndarray]:
        """The sample columns of the jobs ``keep`` selects (every one: no copy), the time columns in ``times``."""
        every = bool(keep.all())
        state = np.array(self.vocabulary, dtype=str)[self.state_codes]
        columns: dict[str, np.ndarray] = {
            "job": self.job,
            "gpus": self.gpus,
            **{name: self.times[name] for name in ("submit", "eligible", "start", "end") if name in times},
            "state": state,
        }
        return columns if every else {name: values[keep] for name, values in columns.items()}


def _window(jobs: _Jobs, params: dict[str, Any], clock: LocalClock, path: Path) -> tuple[float, float, np.ndarray]:
    """The window's start and end (``--from``/``--to``, else the span of the data) and the jobs present in it."""
    given_from, given_to = params.get("window_from"), params.get("window_to")
    ws = _window_bound(given_from, clock, "--from")
    we = _window_bound(given_to, clock, "--to")
    sub, eli, sta, end = jobs.times["submit"], jobs.times["eligible"], jobs.times["start"], jobs.times["end"]
    first_seen = np.fmin(np.fmin(sub, eli), sta)
    if math.isnan(ws):
        ws = float(np.nanmin(first_seen)) if np.isfinite(first_seen).any() else NAN
    if math.isnan(we):
        last = np.fmax(np.fmax(end, sta), sub)
        we = float(np.nanmax(last)) if np.isfinite(last).any() else NAN
    if given_from is not None and given_to is not None and we <= ws:
        raise BadInput(path, f"the window ends before it starts (--from {given_from!r}, --to {given_to!r})")
    keep = np.ones(len(jobs.job), dtype=bool)
    if given_from is not None or given_to is not None:
        present_from = np.where(np.isfinite(first_seen), first_seen, -np.inf)
        keep = (present_from < we) & ~(np.isfinite(end) & (end < ws))
        if not keep.any():
            raise BadInput(path, "no job is present in the window given by --from/--to")
    return ws, we, keep


def _wait_target(params: dict[str, Any]) -> float | None:
    target = params.get("wait_target_s")
    if target is not None and not (math.isfinite(float(target)) and float(target) > 0):
        # A target of 0 or less makes every job miss it: a figure that says nothing, stored as if it did.
        raise UsageError(f"--wait-target: a queue-wait target is a positive number of seconds, not {target:g}")
    return float(target) if target is not None else None


def _fleet_dimensions(
    collectors: list[_Collector], sinfo_meta: Capacity, samples: dict[str, np.ndarray]
) -> dict[str, Dimension]:
    """The pool (clusters/partitions), the device types and whether eligibility was recorded: as measured."""
    dims: dict[str, Dimension] = {}
    clusters = set().union(*(c.clusters for c in collectors))
    partitions = set().union(*(c.partitions for c in collectors))
    pool_name = "/".join(x for x in (",".join(sorted(clusters)), ",".join(sorted(partitions))) if x)
    if pool_name:
        dims["pool"] = Dimension(pool_name, "measured")
    kinds = set().union(*(c.device_types for c in collectors), sinfo_meta.get("device_types", []))
    if kinds:
        dims["device_types"] = Dimension(",".join(sorted(kinds)), "measured")
    known_eligible = int(np.isfinite(samples["eligible"]).sum()) if "eligible" in samples else 0
    if any(c.has_eligible for c in collectors) and known_eligible:
        dims["eligibility_history"] = Dimension(
            "recorded"
            if known_eligible == len(samples["job"])
            else f"partial ({known_eligible} of {len(samples['job'])} jobs)",
            "measured",
        )
    return dims


def _warnings(
    jobs: _Jobs, collectors: list[_Collector], clocks: list[LocalClock], tz: Any, capacity: float
) -> list[str]:
    warnings = []
    if jobs.malformed:
        warnings.append(
            f"{len(jobs.malformed)} malformed record(s) skipped (field count differs from the header): "
            f"{', '.join(jobs.malformed[:5])}"
        )
    warnings.extend(_layout_notes(collectors))
    ambiguous = sum(c.ambiguous for c in clocks)
    if ambiguous:
        warnings.append(
            f"times fall in {ambiguous} daylight-saving hour(s) of {tz} that local time names twice (or not at all): "
            f"read as the first occurrence"
        )
    if math.isnan(capacity):
        warnings.append("pool capacity unknown (import an sinfo file beside the sacct output)")
    return warnings


def _first_copies(hashes: np.ndarray) -> tuple[slice | np.ndarray, int]:
    """The rows to keep, each row's first copy in order (every row when no two hashes are
    equal: one sort), and how many copies are dropped."""
    ordered = np.sort(hashes)
    if not (ordered[1:] == ordered[:-1]).any():
        return slice(None), 0
    first = np.sort(np.unique(hashes, return_index=True)[1])
    return first, len(hashes) - len(first)


def _reason_counts(codes: np.ndarray, vocabulary: list[str]) -> Counter[str]:
    """How many jobs give each stated reason, in the order the reasons first appear."""
    counts: Counter[str] = Counter()
    for value, count in zip(vocabulary, np.bincount(codes, minlength=len(vocabulary)).tolist()):
        value = value.strip()
        if count and value and value not in _SENTINELS:
            counts[value] += count
    return counts


def _state_counts(codes: np.ndarray, vocabulary: list[str]) -> dict[str, int]:
    """How many jobs are in each state, in the order the states first appear."""
    present, first, counts = np.unique(codes, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    return {vocabulary[int(present[i])]: int(counts[i]) for i in order}


def _layout_notes(collectors: list[_Collector]) -> list[str]:
    """What the layout of the files lost: sacct's fixed-width table cuts long fields short."""
    if not any(c.fixed_width for c in collectors):
        return []
    cut: Counter[str] = sum((c.cut for c in collectors), Counter())
    lost = (
        f"; {sum(cut.values()):,} field(s) were cut short by sacct ('+'), read as unknown (a job id as printed): "
        + ", ".join(f"{name} {count:,}" for name, count in cut.most_common())
        if cut
        else ""
    )
    return [
        "read from sacct's fixed-width layout: fields longer than their column are cut and lose information"
        + lost
        + "; sacct -P (--parsable2) prints every field whole"
    ]


def _window_bound(value: Any, clock: LocalClock, flag: str) -> float:
    if value is None or value == "":
        return NAN
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip().replace(" ", "T")
    if len(text) == 10:
        text += "T00:00:00"
    try:
        return clock.epoch(text, flag)
    except BadInput as exc:
        raise BadInput(None, f"{flag} {value!r}: {exc.detail}") from None


def _gpu_seconds(s: dict[str, np.ndarray], ws: float, we: float) -> float:
    if not (math.isfinite(ws) and math.isfinite(we)):
        return NAN
    run_from = np.clip(s["start"], ws, we)
    end = s["end"] if "end" in s else np.full(len(s["start"]), np.nan)
    run_to = np.clip(np.where(np.isfinite(end), end, we), ws, we)
    ran = np.isfinite(s["start"]) & (run_to > run_from)
    return float(
        (s["gpus"][ran] * (run_to[ran] - run_from[ran])).sum()
    )  # NaN (unknown work) when a gang size is unknown


class Capacity(TypedDict, total=False):
    """``meta["capacity"]``: what the sinfo files say of the pool (empty: no sinfo file)."""

    nodes: int
    gpus_total: int
    gpus_unavailable: int
    device_types: list[str]
    files: list[str]


def _capacity(paths: list[Path]) -> tuple[float, Capacity]:
    """GPUs on usable nodes from sinfo tables; each node counted once."""
    if not paths:
        return NAN, {}
    nodes: dict[str, tuple[int, str, str]] = {}
    for path in paths:
        nodes.update(_sinfo_nodes(path))
    usable = sum(g for g, st, _ in nodes.values() if not any(st.startswith(d) for d in _DOWN))
    unavailable = sum(g for g, st, _ in nodes.values() if any(st.startswith(d) for d in _DOWN))
    kinds = sorted({k for _, _, k in nodes.values() if k})
    return float(usable), {
        "nodes": len(nodes),
        "gpus_total": sum(g for g, _, _ in nodes.values()),
        "gpus_unavailable": unavailable,
        "device_types": kinds,
        "files": [str(p) for p in paths],
    }


def _sinfo_nodes(path: Path) -> dict[str, tuple[int, str, str]]:
    """An sinfo table's nodes: node -> (GPUs its GRES states, state, the first device type named)."""
    try:
        with open_binary(path) as f:
            lines = f.read(64 << 20).decode("utf-8", errors="replace").splitlines()
    except READ_ERRORS as exc:
        raise BadInput(path, f"cannot be read ({exc})") from None
    header = [h.strip() for h in lines[0].lstrip("\ufeff").split("|")]
    idx: dict[str, int] = {}
    for i, h in enumerate(header):
        idx.setdefault(h, i)
    node_col = idx.get("NODELIST", idx.get("HOSTNAMES"))
    nodes: dict[str, tuple[int, str, str]] = {}
    for no, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        fields = [x.strip() for x in line.split("|")]
        if len(fields) < len(header) - 1 or node_col is None:
            raise BadInput(path, f"{len(fields)} fields where the header has {len(header)}", where=f"line {no}")
        total, kind = _gres_gpus(fields[idx["GRES"]])
        nodes[fields[node_col]] = (total, fields[idx["STATE"]].lower(), kind)
    return nodes


def _gres_gpus(gres: str) -> tuple[int, str]:
    """GPUs a GRES field states (``gpu:a100:4,gpu:2``) and the first device type it names."""
    total, kind = 0, ""
    for m in re.finditer(r"gpu(?::([A-Za-z][^:,(]*))?:(\d+)", gres):
        total += int(m.group(2))
        kind = kind or (m.group(1) or "")
    return total, kind
