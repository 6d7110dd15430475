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

import math
import re
from operator import itemgetter
from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import IO, Any

import numpy as np

from store.records import SAMPLES, Dimension, RunRecord, Work
from workbench.errors import BadInput
from workbench.importers.base import READ_ERRORS, Importer, ImportOptions, Probe, open_binary

MAX_LINE = 1 << 20  # a physical line longer than 1 MiB is not sacct output
MAX_RECORD_LINES = 64  # a record spanning more physical lines is corrupt
BLOCK = 4 << 20
NAN = math.nan
_SENTINELS = {"", "Unknown", "None", "N/A", "NONE", "unknown"}
_COLUMN = re.compile(r"^[A-Za-z][A-Za-z0-9_()/:]*$")
_GPU_TRES = re.compile(r"(?:^|,)gres/gpu(?::([^=,]+))?=(\d+)")
_GPU_GRES = re.compile(r"(?:^|,)(?:PER_NODE:)?gpu(?::([^:,(]+))?(?::(\d+))?")
_SACCT_MARKERS = ("JobID", "State")
_SACCT_TIMES = ("Submit", "Start", "End", "Eligible")
_DOWN = ("down", "drain", "fail", "maint", "inval", "unk", "no_resp", "reserved")


class SacctImporter(Importer):
    name = "sacct"
    version = "1"
    description = "Slurm sacct --parsable2 (any delimiter), with sinfo for pool capacity"
    priority = 40

    def sniff(self, probe: Probe) -> bool:
        first = probe.text.lstrip("\ufeff").split("\n", 1)[0]
        return _is_sacct_header(first) or _is_sinfo_header(first)

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        folders: dict[Path, dict[str, list[Path]]] = defaultdict(lambda: {"sacct": [], "sinfo": []})
        for path in paths:
            folders[path.parent]["sinfo" if _is_sinfo_header(_first_line(path)) else "sacct"].append(path)
        lone_sinfo = [p for f in folders.values() if not f["sacct"] for p in f["sinfo"]]
        if lone_sinfo and all(not f["sacct"] for f in folders.values()):
            raise BadInput(lone_sinfo[0], "an sinfo capacity file alone holds no jobs; import it with the sacct output beside it")
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
    """The delimiter that splits the header into plain column names, including JobID."""
    header = header.rstrip("\r\n")
    for delim in ("|#", "|", ";", "\t", ",", "#", ":"):
        if delim not in header:
            continue
        names = [n.strip() for n in header.split(delim)]
        if names and names[-1] == "":
            names = names[:-1]  # -p leaves a trailing delimiter
        if len(names) >= 2 and ("JobID" in names or "JobIDRaw" in names):
            if all(_COLUMN.match(n) for n in names):
                return delim
    return None


def _is_sacct_header(line: str) -> bool:
    d = _delimiter(line)
    if d is None:
        return False
    names = set(n.strip() for n in line.rstrip("\r\n").split(d))
    return ("JobID" in names or "JobIDRaw" in names) and bool(names & {"State", *_SACCT_TIMES})


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
        if text.isdigit():
            return float(text)  # SLURM_TIME_FORMAT=%s
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
            raise BadInput(self.path, "sacct times carry no time zone; say which with --tz (e.g. --tz UTC or --tz Europe/Paris)", where=where)
        first = naive.replace(tzinfo=self.zone, fold=0)
        if first.utcoffset() != naive.replace(tzinfo=self.zone, fold=1).utcoffset():
            self.ambiguous += 1  # a daylight-saving hour: local time names two instants (or none)
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
        raise BadInput(path, f"unknown time zone {tz!r} for --tz (use an IANA name such as Europe/Paris, UTC, or +02:00)") from None


# ---------------------------------------------------------------- records

def iter_records(path: Path) -> Iterator[tuple[int, list[str], list[str], str]]:
    """``(line number, header, fields, record text)`` per logical record; malformed ones are yielded
    with fields ``[]`` so the caller can report them."""
    try:
        stream = open_binary(path)
    except READ_ERRORS as exc:
        raise BadInput(path, f"cannot be read ({exc})") from None
    with stream:
        header_raw = stream.readline(MAX_LINE + 1)
        if len(header_raw) > MAX_LINE:
            raise BadInput(path, f"header line longer than {MAX_LINE} bytes", where="line 1")
        header_line = header_raw.decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r\n")
        delim = _delimiter(header_line)
        if delim is None:
            raise BadInput(path, "no sacct header (expected column names such as JobID|State|Submit ...)", where="line 1")
        header = [n.strip() for n in header_line.split(delim)]
        trailing = header[-1] == ""
        if trailing:
            header = header[:-1]
        need = len(header) - 1 + (1 if trailing else 0)  # delimiters per complete record
        line_no = 1
        pending: list[str] = []
        pending_start = 0
        for text in _lines(stream, path):
            line_no += 1
            if not pending:
                if text.count(delim) == need:
                    fields = text.split(delim)
                    yield line_no, header, fields[:-1] if trailing else fields, text
                    continue
                if not text.strip():
                    continue
                pending_start = line_no
            pending.append(text)
            joined = "\n".join(pending)
            count = joined.count(delim)
            if count == need:
                fields = joined.split(delim)
                yield pending_start, header, fields[:-1] if trailing else fields, joined
                pending = []
            elif count > need or len(pending) > MAX_RECORD_LINES:
                yield pending_start, header, [], ""
                pending = []
        if pending:
            yield pending_start, header, [], ""  # the file ends inside a record


def _lines(stream: IO[bytes], path: Path) -> Iterator[str]:
    """Decoded lines read in 4 MiB blocks (bounded memory even for one endless line)."""
    carry = b""
    line_no = 1
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
                raise BadInput(path, f"line longer than {MAX_LINE} bytes (not sacct output?)", where=f"line {line_no + 1}")
            carry = block
            continue
        carry = block[cut + 1 :]
        lines = block[:cut].decode("utf-8", errors="replace").split("\n")
        for line in lines:
            if len(line) > MAX_LINE:
                raise BadInput(path, f"line longer than {MAX_LINE} bytes (not sacct output?)", where=f"line {line_no + 1}")
            line_no += 1
            yield line[:-1] if line.endswith("\r") else line
    if carry:
        if len(carry) > MAX_LINE:
            raise BadInput(path, f"line longer than {MAX_LINE} bytes (not sacct output?)", where=f"line {line_no + 1}")
        yield carry.decode("utf-8", errors="replace").rstrip("\r")


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
            return 0.0, ""  # TRES stated without gres/gpu: a CPU-only job
    for gres in (alloc_gres, req_gres):
        if gres and gres not in _SENTINELS:
            m = _GPU_GRES.search(gres)
            if not m:
                return 0.0, ""
            per_node = int(m.group(2)) if m.group(2) else (int(m.group(1)) if m.group(1) and m.group(1).isdigit() else 1)
            kind = m.group(1) if m.group(1) and not m.group(1).isdigit() else ""
            nodes = int(nnodes) if nnodes.isdigit() else 1
            return float(per_node * nodes), kind
    return NAN, ""


TIME_COLUMNS = ("Submit", "Eligible", "Start", "End")
CHUNK_ROWS = 65_536


class _Columns:
    """Job rows collected in chunks: times stay strings until a chunk is full, then
    numpy parses them in one call and the zone is applied per distinct hour."""

    def __init__(self, clock: LocalClock) -> None:
        self.clock = clock
        self.jobs: list[np.ndarray] = []
        self.gpus: list[np.ndarray] = []
        self.states: list[np.ndarray] = []
        self.times: dict[str, list[np.ndarray]] = {c: [] for c in TIME_COLUMNS}
        self._reset()

    def _reset(self) -> None:
        self.c_jobs: list[str] = []
        self.c_gpus: list[float] = []
        self.c_states: list[str] = []
        self.c_times: dict[str, list[str]] = {c: [] for c in TIME_COLUMNS}
        self.c_lines: list[int] = []
        # (row in chunk, column, epoch) for stamps numpy should not parse (epoch, offsets).
        self.overrides: list[tuple[int, str, float]] = []

    def add(self, line_no: int, job: str, gpus: float, state: str, sub: str, eli: str, sta: str, end: str) -> None:
        row = len(self.c_jobs)
        self.c_jobs.append(job)
        self.c_gpus.append(gpus)
        self.c_states.append(state)
        self.c_lines.append(line_no)
        t = self.c_times
        t["Submit"].append(sub if len(sub) == 19 else self._odd(row, "Submit", sub, line_no))
        t["Eligible"].append(eli if len(eli) == 19 else self._odd(row, "Eligible", eli, line_no))
        t["Start"].append(sta if len(sta) == 19 else self._odd(row, "Start", sta, line_no))
        t["End"].append(end if len(end) == 19 else self._odd(row, "End", end, line_no))
        if row + 1 >= CHUNK_ROWS:
            self.flush()

    def _odd(self, row: int, col: str, text: str, line_no: int) -> str:
        """A sentinel (unknown), or a stamp numpy should not parse (epoch, offset)."""
        text = text.strip()
        if text not in _SENTINELS:
            self.overrides.append((row, col, self.clock.epoch(text, f"line {line_no}")))
        return "NaT"

    def flush(self) -> None:
        if not self.c_jobs:
            return
        self.jobs.append(np.array(self.c_jobs, dtype=str))
        self.gpus.append(np.array(self.c_gpus, dtype=np.float64))
        self.states.append(np.array(self.c_states, dtype=str))
        for col in TIME_COLUMNS:
            self.times[col].append(self._epochs(col))
        self._reset()

    def _epochs(self, col: str) -> np.ndarray:
        texts = self.c_times[col]
        try:
            parsed = np.array(texts, dtype="datetime64[s]")
        except ValueError:
            # Find the bad stamp and let the scalar parser name it and its line.
            for text, line_no in zip(texts, self.c_lines):
                if text != "NaT":
                    self.clock.epoch(text, f"line {line_no}")
            raise BadInput(self.clock.path, f"unreadable {col} time in rows {self.c_lines[0]}..{self.c_lines[-1]}") from None
        naive = parsed.astype(np.int64).astype(np.float64)
        naive[np.isnat(parsed)] = np.nan
        finite = np.isfinite(naive)
        if finite.any():
            first = int(np.argmax(finite))
            if self.clock.zone is None:
                self.clock._local(datetime(2000, 1, 1), f"line {self.c_lines[first]}")  # raises: --tz needed
            hours, inverse = np.unique(np.floor(naive[finite] / 3600.0), return_inverse=True)
            offsets = np.array([self._shift(h) for h in hours], dtype=np.float64)
            naive[finite] += offsets[inverse]
        for row, c, value in self.overrides:
            if c == col:
                naive[row] = value
        return naive

    def _shift(self, hour: float) -> float:
        """Seconds to add to a naive local stamp in this hour to get epoch seconds."""
        local = datetime(1970, 1, 1) + timedelta(hours=hour)
        return self.clock._local(local, "") - hour * 3600.0

    def column(self, parts: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(parts) if parts else np.array([], dtype=dtype)


def window_run(sacct_paths: list[Path], sinfo_paths: list[Path], options: ImportOptions, folder: Path) -> RunRecord:
    params = options.params
    tz = params.get("tz")
    seen: set[int] = set()
    skipped_steps = duplicates = 0
    malformed: list[str] = []
    has_eligible_col = False
    device_types: Counter[str] = Counter()
    partitions: Counter[str] = Counter()
    clusters: set[str] = set()
    reasons: Counter[str] = Counter()
    gang_cache: dict[tuple[str, ...], tuple[float, str]] = {}
    clocks = []
    collected: list[_Columns] = []
    for path in sacct_paths:
        clock = LocalClock(tz, path)
        clocks.append(clock)
        cols = _Columns(clock)
        collected.append(cols)
        header: list[str] | None = None
        for line_no, hdr, fields, raw in iter_records(path):
            if header is not hdr:
                header = hdr
                idx: dict[str, int] = {}
                for i, name in enumerate(hdr):
                    idx.setdefault(name, i)  # a repeated column (GCM's trailing End) keeps the first
                if "JobID" not in idx and "JobIDRaw" not in idx:
                    raise BadInput(path, "header has no JobID column", where="line 1")
                has_eligible_col = has_eligible_col or "Eligible" in idx
                i_job = idx["JobID"] if "JobID" in idx else idx["JobIDRaw"]
                get_gang = itemgetter(*(idx.get(c, -1) for c in ("AllocTRES", "ReqTRES", "AllocGRES", "ReqGRES", "NNodes")))
                get_rest = itemgetter(*(idx.get(c, -1) for c in (*TIME_COLUMNS, "State", "Partition", "Cluster", "Reason")))
            if not fields:
                malformed.append(f"{path.name}: line {line_no}")
                continue
            job = fields[i_job].strip()
            if "." in job:
                skipped_steps += 1
                continue
            key = hash(raw)
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            fields.append("")  # index -1: a column this header lacks reads as blank
            gang_key = get_gang(fields)
            found = gang_cache.get(gang_key)
            if found is None:
                found = gang_size(*(x.strip() for x in gang_key))
                if len(gang_cache) < 100_000:
                    gang_cache[gang_key] = found
                if found[1]:
                    device_types[found[1]] += 1
            sub, eli, sta, end, state, part, cluster, reason = get_rest(fields)
            cols.add(line_no, job, found[0], state.split(" ", 1)[0].strip(), sub, eli, sta, end)
            if part:
                partitions[part] += 1
            if cluster:
                clusters.add(cluster)
            if reason and reason not in _SENTINELS:
                reasons[reason] += 1
        cols.flush()
    job_col = np.concatenate([a for c in collected for a in c.jobs]) if any(c.jobs for c in collected) else np.array([], dtype=str)
    if not len(job_col):
        why = []
        if skipped_steps:
            why.append(f"{skipped_steps} job-step rows skipped (JobID with '.'; run sacct with -X for allocations)")
        if malformed:
            why.append(f"{len(malformed)} malformed records ({', '.join(malformed[:3])}: field count differs from the header)")
        raise BadInput(sacct_paths[0], "no job records" + (": " + "; ".join(why) if why else ""))
    arrays = {c.lower(): np.concatenate([a for col in collected for a in col.times[c]]) for c in TIME_COLUMNS}
    arrays["gpus"] = np.concatenate([a for c in collected for a in c.gpus])
    state_col = np.concatenate([a for c in collected for a in c.states])

    clock = clocks[0]
    ws = _window_bound(params.get("window_from"), clock, "--from")
    we = _window_bound(params.get("window_to"), clock, "--to")
    sub, eli, sta, end = arrays["submit"], arrays["eligible"], arrays["start"], arrays["end"]
    first_seen = np.fmin(np.fmin(sub, eli), sta)
    if math.isnan(ws):
        ws = float(np.nanmin(first_seen)) if np.isfinite(first_seen).any() else NAN
    if math.isnan(we):
        last = np.fmax(np.fmax(end, sta), sub)
        we = float(np.nanmax(last)) if np.isfinite(last).any() else NAN
    if math.isfinite(ws) and math.isfinite(we) and we <= ws:
        raise BadInput(sacct_paths[0], f"the window ends before it starts (--from {params.get('window_from')!r}, --to {params.get('window_to')!r})")
    keep = np.ones(len(job_col), dtype=bool)
    if params.get("window_from") is not None or params.get("window_to") is not None:
        present_from = np.where(np.isfinite(first_seen), first_seen, -np.inf)
        keep = (present_from < we) & ~(np.isfinite(end) & (end < ws))
        if not keep.any():
            raise BadInput(sacct_paths[0], "no job is present in the window given by --from/--to")
    samples = {"job": job_col[keep], "gpus": arrays["gpus"][keep], "submit": sub[keep], "eligible": eli[keep],
               "start": sta[keep], "end": end[keep], "state": state_col[keep]}

    capacity, sinfo_meta = _capacity(sinfo_paths)
    target = params.get("wait_target_s")
    pool = {
        "capacity_gpus": capacity,
        "window_start": ws,
        "window_end": we,
        "wait_target_s": float(target) if target is not None else None,
    }
    dims: dict[str, Dimension] = {}
    pool_name = "/".join(x for x in (",".join(sorted(clusters)), ",".join(sorted(partitions))) if x)
    if pool_name:
        dims["pool"] = Dimension(pool_name, "measured")
    kinds = set(device_types) | set(sinfo_meta.get("device_types", []))
    if kinds:
        dims["device_types"] = Dimension(",".join(sorted(kinds)), "measured")
    known_eligible = int(np.isfinite(samples["eligible"]).sum())
    if has_eligible_col and known_eligible:
        dims["eligibility_history"] = Dimension("recorded" if known_eligible == len(samples["job"]) else
                                                f"partial ({known_eligible} of {len(samples['job'])} jobs)", "measured")
    warnings = []
    if malformed:
        warnings.append(f"{len(malformed)} malformed record(s) skipped (field count differs from the header): {', '.join(malformed[:5])}")
    if not has_eligible_col:
        warnings.append("no Eligible column: queue wait (Start − Eligible) is unknown; Start − Submit would count holds and dependencies")
    ambiguous = sum(c.ambiguous for c in clocks)
    if ambiguous:
        warnings.append(f"{ambiguous} time(s) fall in a daylight-saving hour of {tz}: read as the first occurrence")
    if math.isnan(capacity):
        warnings.append("pool capacity unknown (import an sinfo file beside the sacct output)")
    gpu_seconds = _gpu_seconds(samples, ws, we)
    label = options.label or f"sacct {folder.name or folder}"
    meta: dict[str, Any] = {
        "source_format": "slurm sacct",
        "pool": pool,
        "tz": tz,
        "jobs_read": int(len(job_col)),
        "jobs_in_window": int(keep.sum()),
        "skipped_step_rows": skipped_steps,
        "duplicate_rows_dropped": duplicates,
        "malformed_records": malformed[:50],
        "states": dict(Counter(samples["state"].tolist())),
        "reasons": dict(reasons.most_common(20)),
        "capacity": sinfo_meta,
    }
    if warnings:
        meta["warnings"] = warnings
    return RunRecord(
        lens="fleet", label=label, dimensions=dims,
        window={"kind": "steady", "policy": "sacct window" + (" (--from/--to)" if params.get("window_from") or params.get("window_to") else " (span of the data)")},
        work=Work("GPU-hours", gpu_seconds / 3600.0) if math.isfinite(gpu_seconds) else Work("GPU-hours"),
        meta=meta, tables={SAMPLES: samples}, sources=[*sacct_paths, *sinfo_paths],
    )


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
    run_to = np.clip(np.where(np.isfinite(s["end"]), s["end"], we), ws, we)
    ran = np.isfinite(s["start"]) & np.isfinite(s["gpus"]) & (run_to > run_from)
    return float((s["gpus"][ran] * (run_to[ran] - run_from[ran])).sum())


def _capacity(paths: list[Path]) -> tuple[float, dict[str, Any]]:
    """GPUs on usable nodes from sinfo tables; each node counted once."""
    if not paths:
        return NAN, {}
    nodes: dict[str, tuple[int, str, str]] = {}
    for path in paths:
        with open_binary(path) as f:
            lines = f.read(64 << 20).decode("utf-8", errors="replace").splitlines()
        header = [h.strip() for h in lines[0].lstrip("\ufeff").split("|")]
        idx: dict[str, int] = {}
        for i, h in enumerate(header):
            idx.setdefault(h, i)
        node_col = idx.get("NODELIST", idx.get("HOSTNAMES"))
        for no, line in enumerate(lines[1:], 2):
            if not line.strip():
                continue
            fields = [x.strip() for x in line.split("|")]
            if len(fields) < len(header) - 1 or node_col is None:
                raise BadInput(path, f"{len(fields)} fields where the header has {len(header)}", where=f"line {no}")
            gres = fields[idx["GRES"]]
            total, kind = 0, ""
            for m in re.finditer(r"gpu(?::([A-Za-z][^:,(]*))?:(\d+)", gres):
                total += int(m.group(2))
                kind = kind or (m.group(1) or "")
            state = fields[idx["STATE"]].lower()
            nodes[fields[node_col]] = (total, state, kind)
    usable = sum(g for g, st, _ in nodes.values() if not any(st.startswith(d) for d in _DOWN))
    unavailable = sum(g for g, st, _ in nodes.values() if any(st.startswith(d) for d in _DOWN))
    kinds = sorted({k for _, _, k in nodes.values() if k})
    return float(usable), {"nodes": len(nodes), "gpus_total": sum(g for g, _, _ in nodes.values()),
                           "gpus_unavailable": unavailable, "device_types": kinds,
                           "files": [str(p) for p in paths]}
