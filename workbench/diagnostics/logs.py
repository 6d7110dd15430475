"""Failure signatures in text logs: per-rank training logs, torchrun output and error files,
kernel logs (dmesg, ``dmesg -T``, ``dmesg --time-format iso``, ``journalctl -k``/syslog,
``/dev/kmsg``), Slurm and Kubernetes messages.

Each file is streamed line by line; every matching line becomes an :class:`Event` with its
file, line number, raw text and extracted values. Time stamps are read from the line's own
prefix, after the prefixes that process managers add (ANSI colour, a docker compose service,
vLLM's ``(EngineCore_DP0 pid=212)``, torchrun's ``[rank3]:``); stamps without a zone are marked
``naive``. A stamp without a year (vLLM's ``INFO 10-21 12:39:26``, syslog, glog) takes its
year from the nearest line of the same file whose stamp has one (``log_year``); otherwise it
stays partial and the timeline decides (``--year``, or other inputs). Boot-relative stamps
stay so until a boot time is given.
"""

from __future__ import annotations

import calendar
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, TypedDict

from workbench.diagnostics import engine_logs, host_events, log_year, xid_catalog
from workbench.diagnostics.events import Event, EventValues, PartialTime
from workbench.diagnostics.result import EventRole
from workbench.errors import BadInput
from workbench.inputs import READ_ERRORS, open_binary

MAX_TEXT = 400  # characters of a line kept as evidence
MAX_EVENTS_PER_FILE = 50_000  # beyond this a file's events are counted, not kept (bounded memory)

_MONTHS = {m: i for i, m in enumerate(calendar.month_abbr) if m}

# ---------------------------------------------------------------- prefixes (rank, time, host)

_RANK_PREFIX = re.compile(r"^\[(?:rank|Rank|RANK)\s*(\d+)\]:?\s?")
_ANSI = re.compile(r"\x1b\[[0-9;]{0,16}[A-Za-z]")
_COMPOSE_PREFIX = re.compile(r"^[\w.-]{1,64}\s{1,16}\|\s")  # docker compose: "service  | line"
# vLLM's worker prefix "(EngineCore_DP0 pid=212) " (vllm/utils _add_prefix), also "(Engine (DP0)) ".
_PROCESS_PREFIX = re.compile(r"\((?:[^()\n]|\([^()\n]{0,40}\)){1,80}\)\s")
# vLLM's logger (vllm/logger.py: "%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] %(message)s",
# datefmt "%m-%d %H:%M:%S"; before v0.6 without the brackets' opening "["): month and day, no year.
_LEVEL_MONTH_DAY = re.compile(
    r"^(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:[.,](\d{1,6}))?"
    r"(?: (?:\[[^\]\n]{1,200}\]|[^\s\]]{1,200}\]))?\s?"
)
# printk's console level (``<4>[ 1137.351234] ...``: dmesg -r, pstore/ERST dumps, serial consoles).
_PRINTK_LEVEL = re.compile(r"^<(\d)>(?=\[)")
_KMSG = re.compile(r"^(\d+),(\d+),(\d+),[^;]*;")
_DMESG_BOOT = re.compile(r"^\[\s*(\d+\.\d+)\]\s?")
_DMESG_T = re.compile(r"^\[(?:\w{3}) (\w{3})\s+(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})\]\s?")
_DMESG_ISO = re.compile(
    r"^(?:\w+\s*:\s*\w+\s*:\s*)?(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:[,.](\d+))?(Z|[+-]\d\d:?\d\d)?\s"
)
# Python logging's asctime ("2025-10-21 12:39:26,123"), bracketed or not; SGLang adds its ranks
# inside the brackets ("[2025-10-21 12:39:26 DP0 TP1] ", sglang/srt/utils configure_logger).
_ISO = re.compile(
    r"^\[?(\d{4})-(\d\d)-(\d\d)[ T_](\d\d):(\d\d):(\d\d)(?:[,.](\d+))?\s?(Z|UTC|[+-]\d\d:?\d\d)?"
    r"(?:(?: [A-Z]{2,4}\d{1,5}){1,4}\]|\]?)(?:\s|:\s|\s?-\s)"
)
# Where a line may carry a stamp with a year (verified by reading the line's prefixes).
_DATE_HINT = re.compile(r"\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d|\[\w{3} \w{3}\s+\d{1,2} \d\d:\d\d:\d\d \d{4}\]")
_SYSLOG = re.compile(r"^(\w{3})\s+(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.(\d+))? (\S+) (?:kernel|\S+?)(?:\[\d+\])?: ")
# glog pads the month (E0321), c10's own logger does not (E321).
_GLOG = re.compile(r"^\[?[IWEF](\d{1,2}?)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?\s+\S+(?:\s\S+)?\]\s?")

# ---------------------------------------------------------------- signatures

_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)(?: GPU-I:(\d+))?\): (\d+),\s*(.*)"
)
_XID_PID = re.compile(r"pid=(?:'?<unknown>'?|(\d+))")
_XID_NAME = re.compile(r"name=([^,]*)")
_FELL_OFF = re.compile(
    r"NVRM: (?:The NVIDIA )?GPU (?:at )?(?:PCI:)?([0-9a-fA-F:.]{1,20})[:\s].{0,128}?fallen off the bus"
)
_SXID = re.compile(r"SXid \((?:PCI:)?([0-9a-fA-F:.]+)\): (\d+), (Fatal|Non-fatal)", re.IGNORECASE)
_CUDA_OOM = re.compile(r"CUDA out of memory\.?(?: Tried to allocate ([\d.]+ [KMGT]?i?B))?")
_OOM_GPU = re.compile(r"\(GPU (\d+);|GPU (\d+) has a total capac")
# CUDA runtime errors that name a device fault rather than a program error.
_CUDA_HW = re.compile(
    r"uncorrectable ECC error "
    r"encountered|cudaErrorECCUncorrectable|CUDA_ERROR_ECC_UNCORRECTABLE|cudaErrorDevicesUnavailable|GPU is lost"
)
_GPU_ALLOC = re.compile(
    r"CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS_ALLOC_FAILED|cudaErrorMemoryAllocation|Cuda failure '?out of memory'?"
)
_KILLED = re.compile(
    r"(?:Memory cgroup out of memory|Out of memory): Kill(?:ed)? process (\d{1,10}),? (?:UID \d{1,10}, "
    r")?\(([^)]{0,64})\)"
)
# The task is looked for in a window: ".*?" scanned to the line's end from every "oom-kill:" (quadratic).
_OOM_KILL_LINE = re.compile(r"oom-kill:constraint=(\w+)(?:.{0,1024}?,task=([^,]{1,256}),pid=(\d{1,10}))?")
_OOM_INVOKED = re.compile(r"(?<!\S)(\S{1,64}) invoked oom-killer:")  # a name starts a word: one try a word
_OOM_REAPER = re.compile(r"oom_reaper: reaped process (\d{1,10}) \(([^)]{0,64})\)")
_SLURM_OOM = re.compile(r"Detected (\d+) oom[-_]kill event\S* in (?:StepId=|step )?(\S+?)\.?(?: |$)")
_SRUN_OOM = re.compile(r"srun: error: (\S+): tasks? ([\d,-]+): Out Of Memory")
_K8S_OOM = re.compile(r"(?:[Rr]eason\"?:?\s*\"?)OOMKilled")
_SEGFAULT = re.compile(r"(?<!\S)(\S{1,64})\[(\d{1,10})\]: segfault at \S{1,32} .{0,128}? in (\S{1,256}?)\[")
_NCCL_WARN = re.compile(r"^(\S{1,256}?):(\d+):(\d+) \[(\d+)\] (\S{1,256}) NCCL WARN (.*)")
_NCCL_WARN_ANY = re.compile(r"NCCL WARN (.*)")
_NCCL_ERROR = re.compile(
    r"ncclRemoteError|DistBackendError|NCCL error|remote process exited or there was a network error|NCCL communicator "
    r"was aborted|ncclSystemError|ncclInternalError|ncclUnhandledCudaError|ncclInvalidUsage"
)
_WATCHDOG = re.compile(
    r"(?:\[Rank (\d+)\] )?Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+), OpType=(\w+)"
    r"(?:, NumelIn=(\d+), NumelOut=(\d+))?, Timeout\(ms\)=(\d+)\) ran for (\d+) milliseconds"
)
_WATCHDOG_COUNTERS = re.compile(
    r"\[PG ID (\S+) PG GUID (\S+?)(?:\(([^)]*)\))? Rank (\d+)\] Exception \(either an error or timeout\) detected by "
    r"watchdog at work: (\d+), "
    r"last enqueued NCCL work: (-?\d+), last completed NCCL work: (-?\d+)"
)
_DUMP_SIGNAL = re.compile(r"Received a dump signal due to a collective timeout from (?:rank (\d+)|this local rank)")
_SIGNAL_PID = re.compile(r"Signal (\d+) \((SIG\w+)\) received by PID (\d+)")
_AGENT_FAILED = re.compile(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: (\d+)\)")
_CLOSING = re.compile(r"Sending process (\d+) closing signal (SIG\w+)")
_SRUN_EXIT = re.compile(
    r"srun: error: (\S+): tasks? ([\d,-]+): (Exited with exit code (\d+)|Killed|Aborted|Segmentation fault|Terminated)"
)
_SLURM_CANCEL = re.compile(r"\*\*\* (?:JOB|STEP) (\S+) ON (\S+) CANCELLED AT (\S+)(?: DUE TO ([A-Z ]+?))? \*\*\*")
_SHELL_DEATH = re.compile(
    r"^(?:/\S+: line \d+: +\d+ )?(Aborted|Segmentation fault|Killed|Bus error|Terminated)(?: +\(core dumped\))?(?: "
    r"+\S.*)?$"
)
_SHELL_SIGNALS = {"Aborted": 6, "Segmentation fault": 11, "Killed": 9, "Bus error": 7, "Terminated": 15}
_K8S_EXIT = re.compile(r"Exit Code:\s*(\d+)|\"exitCode\":\s*(\d+)")
_TRACEBACK = "Traceback (most recent call last):"
# A traceback's last line; the bare names ("Exception: ...", "Error: ...") only right after a traceback.
_EXCEPTION = re.compile(r"^((?:[A-Za-z_][\w.]*)?(?:Error|Exception|Interrupt|Failure))(?::\s?(.*))?$")
_BARE_EXCEPTIONS = frozenset({"Error", "Exception", "Interrupt", "Failure"})
_CHILD_FAILED_START = re.compile(r"ChildFailedError|Root Cause \(first observed failure\):")
_CHILD_FIELD = re.compile(r"^\s*(time|host|rank|exitcode|error_file|traceback)\s*:\s?(.*)$")
_CHILD_INDEX = re.compile(r"^\s*\[(\d+)\]:\s*$")
_RANK_IN_NAME = re.compile(r"rank[_-]?(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class KernelSignature:
    """A kernel or driver failure line: its kind, class (``hardware``, ``driver``,
    ``kernel``, ``application``, ``memory limit``), role and one line of meaning."""

    kind: str
    klass: str
    role: EventRole
    meaning: str
    pattern: re.Pattern[str]


# Checked after the Xid, OOM and segfault signatures above (which carry their own values);
# every pattern is bounded (no unbounded ``.*`` before a literal: linear on hostile lines).
KERNEL_SIGNATURES: tuple[KernelSignature, ...] = (
    KernelSignature(
        "kernel_panic",
        "kernel",
        "failure",
        "the kernel stopped the node (panic): every process on it died",
        re.compile(r"Kernel panic - not syncing: ?(.{0,200})"),
    ),
    KernelSignature(
        "kernel_oops",
        "kernel",
        "failure",
        "a kernel fault (Oops); the faulting process was killed and the kernel may be unstable",
        re.compile(r"(?:^|\s)Oops: (\S{1,32}(?: \[#\d{1,6}\])?.{0,120})|BUG: unable to handle (?:kernel )?(.{0,160})"),
    ),
    KernelSignature(
        "soft_lockup",
        "kernel",
        "failure",
        "a CPU ran kernel code without yielding for tens of seconds (soft lockup)",
        re.compile(r"BUG: soft lockup - CPU#(\d{1,5}) stuck for (\d{1,6})s"),
    ),
    KernelSignature(
        "hard_lockup",
        "kernel",
        "failure",
        "a CPU stopped taking interrupts (hard lockup): the node is wedged",
        re.compile(
            r"(?:Watchdog detected hard LOCKUP on cpu|NMI watchdog: Watchdog detected hard LOCKUP on cpu) (\d{1,5})"
        ),
    ),
    KernelSignature(
        "hung_task",
        "kernel",
        "follower",
        "a task sat in uninterruptible sleep for minutes: stuck I/O, a driver or a filesystem",
        re.compile(r"INFO: task (\S{1,64}):(\d{1,10}) blocked for more than (\d{1,7}) seconds"),
    ),
    KernelSignature(
        "kernel_bug",
        "kernel",
        "failure",
        "a kernel assertion failed (BUG)",
        re.compile(r"(?:^|\s)(?:kernel BUG at (\S{1,200})|BUG: (?!soft lockup|unable to handle)(.{1,160}))"),
    ),
    KernelSignature(
        "machine_check",
        "hardware",
        "failure",
        "the CPU or memory reported a machine check (MCE): a hardware error on the node",
        re.compile(
            r"(?:mce: )?\[Hardware Error\]: ?(.{0,200})|Machine check events logged|Machine Check Exception: "
            r"?(.{0,120})"
        ),
    ),
    KernelSignature(
        "gpu_ecc",
        "hardware",
        "failure",
        "GPU memory reported an uncorrectable ECC error or a row that must be remapped",
        re.compile(
            r"NVRM: .{0,160}?(?:uncorrectable (?:ECC|DBE) error|double[- ]bit ECC|row[- ]remap(?:ping)?(?: failure| "
            r"pending| event)?|Row Remapper)",
            re.IGNORECASE,
        ),
    ),
    KernelSignature(
        "nvrm_error",
        "driver",
        "failure",
        "the NVIDIA kernel driver reported an error that is not an Xid (init, RPC, GSP, resources)",
        re.compile(
            r"NVRM: (?!Xid|Rate limiting)(.{0,160}?(?:failed|[Ee]rror|ERROR|[Tt]imeout|[Tt]imed out|not "
            r"responding|unable to|Unable to).{0,120})"
        ),
    ),
)
SIGNATURE_CLASS = {  # the class of the signatures matched above, for the kinds that have no catalog
    "segfault": "application",
    "host_oom_kill": "memory limit",
    "oom_invoked": "memory limit",
    "oom_reaper": "memory limit",
    "slurm_oom": "memory limit",
    "k8s_oomkilled": "memory limit",
    "cuda_oom": "memory limit",
    "sxid": "hardware",
    **{sig.kind: sig.klass for sig in KERNEL_SIGNATURES},
}
_KERNEL_KINDS = frozenset(sig.kind for sig in KERNEL_SIGNATURES)
SIGNATURE_MEANING = {
    "segfault": "a process read or wrote memory it does not own (segfault): a bug in it or in a library it loaded",
    "host_oom_kill": "the kernel killed a process for memory (OOM killer): a host or cgroup memory limit was reached",
    **{sig.kind: sig.meaning for sig in KERNEL_SIGNATURES},
}

# Every signature above contains one of these; lines with none are skipped before any
# regex runs (most of a log is noise, and ~30 searches per line would dominate).
_KEYWORDS = (
    "Xid",
    "fallen off the bus",
    "out of memory",
    "Out of memory",
    "Out Of Memory",
    "OutOfMemory",
    "ALLOC_FAILED",
    "MemoryAllocation",
    "oom",
    "OOM",
    "segfault",
    "atchdog",
    "dump signal",
    "NCCL",
    "nccl",
    "Signal ",
    "exitcode",
    "closing signal",
    "srun: error",
    "CANCELLED",
    "Exit Code",
    "exitCode",
    "Aborted",
    "Segmentation fault",
    "Killed",
    "Kill process",
    "Bus error",
    "Terminated",
    "Error",
    "Exception",
    "Interrupt",
    "Failure",
    "Traceback",
    "Root Cause",
    "remote process",
    "ECC",
    "GPU is lost",
    "panic",
    "Oops",
    "BUG",
    "LOCKUP",
    "blocked for more than",
    "Hardware Error",
    "Machine check",
    "Machine Check",
    "NVRM",
    "emap",
    *engine_logs.KEYWORDS,
    *host_events.KEYWORDS,
)


_REPORT_START = re.compile(r"ChildFailedError|Root Cause \(first observed failure\)|^\s*Failures:", re.MULTILINE)
CHUNK_BYTES = 4 << 20
REPORT_LINES = 400  # lines after a torchrun report header that are read whole
MAX_ERROR_FILE = 16 << 20  # a '{' file larger than this is read as a log, not an error file
_LAST_EPOCH_S = 253_402_300_799  # 9999-12-31 23:59:59 UTC: the last second a date can show


SIGNALS = {1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 7: "SIGBUS", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}


def rank_from_path(path: Path) -> int | None:
    """A rank named in the file name or its parent folder (``rank3.log``, ``rank_3/...``)."""
    for part in (path.name, path.parent.name):
        m = _RANK_IN_NAME.search(part)
        if m:
            return int(m.group(1))
    return None


# ---------------------------------------------------------------- time prefixes


def _frac(digits: str | None) -> float:
    return float("0." + digits) if digits else 0.0


def _zone(text: str | None) -> timezone | None:
    if not text:
        return None
    if text in ("Z", "UTC"):
        return timezone.utc
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0)))


def _stamp(y: int, mo: int, d: int, h: int, mi: int, s: int, frac: float, tz: timezone | None) -> tuple[float, bool]:
    dt = datetime(y, mo, d, h, mi, s, tzinfo=tz or timezone.utc)
    return dt.timestamp() + frac, tz is None


class _Stamp(TypedDict, total=False):
    """What a line's prefix says of its time (and, for syslog, its host)."""

    printk_level: int
    since_boot: float
    resolution: float
    time: float
    naive: bool
    partial: PartialTime
    host: str


def _take_time(line: str, ev: _Stamp) -> str:
    """Strip a time prefix from ``line``, recording it in ``ev``; return the rest."""
    m = _PRINTK_LEVEL.match(line)
    if m:
        ev["printk_level"] = int(m.group(1))
        line = line[m.end() :]
    m = _KMSG.match(line)
    if m:
        ev["since_boot"] = int(m.group(3)) / 1e6
        ev["resolution"] = 1e-6
        return line[m.end() :]
    m = _DMESG_BOOT.match(line)
    if m:
        ev["since_boot"] = float(m.group(1))
        ev["resolution"] = 1e-6
        return line[m.end() :]
    m = _DMESG_T.match(line)
    if m and m.group(1) in _MONTHS:
        ev["time"], ev["naive"] = _stamp(
            int(m.group(6)),
            _MONTHS[m.group(1)],
            int(m.group(2)),
            int(m.group(3)),
            int(m.group(4)),
            int(m.group(5)),
            0.0,
            None,
        )
        ev["resolution"] = 1.0
        return line[m.end() :]
    for pattern in (_DMESG_ISO, _ISO):
        m = pattern.match(line)
        if m:
            y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
            try:
                ev["time"], ev["naive"] = _stamp(y, mo, d, h, mi, s, _frac(m.group(7)), _zone(m.group(8)))
            except ValueError:
                return line
            ev["resolution"] = 10.0 ** -len(m.group(7)) if m.group(7) else 1.0
            return line[m.end() :]
    m = _SYSLOG.match(line)
    if m and m.group(1) in _MONTHS:
        ev["partial"] = PartialTime(
            _MONTHS[m.group(1)], int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)) + _frac(m.group(6))
        )
        ev["resolution"] = 10.0 ** -len(m.group(6)) if m.group(6) else 1.0
        ev["host"] = m.group(7)
        return line[m.end() :]
    for pattern in (_GLOG, _LEVEL_MONTH_DAY):
        m = pattern.match(line)
        if m:
            ev["partial"] = PartialTime(
                int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)) + _frac(m.group(6))
            )
            ev["resolution"] = 10.0 ** -min(len(m.group(6)), 6) if m.group(6) else 1.0
            return line[m.end() :]
    return line


def _strip_process_prefixes(line: str) -> tuple[str, str]:
    """The line without what process managers put before a program's own output (ANSI
    colour, a docker compose service name, vLLM's ``(EngineCore_DP0 pid=212)``), and that
    prefix: the process the line is from, as far as the log says."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    cut = 0
    m = _COMPOSE_PREFIX.match(line)
    if m:
        cut = m.end()
    m = _PROCESS_PREFIX.match(line, cut)
    if m:
        cut = m.end()
    return line[cut:], line[:cut]


def _read_prefixes(line: str, stamp: _Stamp) -> tuple[str, int | None, str]:
    """The message of ``line`` with its prefixes read into ``stamp``, the rank a prefix names
    and the process prefix."""
    body, process = _strip_process_prefixes(line)
    line_rank = None
    m = _RANK_PREFIX.match(body)
    if m:
        line_rank = int(m.group(1))
        body = body[m.end() :]
    body = _take_time(body, stamp)
    m = _RANK_PREFIX.match(body)
    if m:
        line_rank = int(m.group(1))
        body = body[m.end() :]
    return body, line_rank, process


# ---------------------------------------------------------------- per-line matching


def _match(msg: str) -> tuple[str, EventRole, EventValues] | None:
    """(kind, role, values) for a message with prefixes removed, or None: the first signature that matches,
    in the order of the tables (the engine's KV-cache refusal and the host's events first)."""
    kv = engine_logs.kv_cache_refusal(msg) if "cache" in msg or "memory" in msg else None
    if kv is not None:
        return engine_logs.KV_CACHE_KIND, "failure", kv
    host = host_events.match(msg)
    if host is not None:
        return host
    return _first(_SIGNATURES_BEFORE_KERNEL, msg) or _kernel(msg) or _first(_SIGNATURES_AFTER_KERNEL, msg)


@dataclass(frozen=True)
class LineSignature:
    """A signature with values of its own: the pattern, the event's kind, its role (or the rule that reads
    the role from the values) and what the match says (``extract``: None when the line is no event after all)."""

    pattern: re.Pattern[str]
    kind: str
    role: EventRole | Callable[[EventValues], EventRole]
    extract: Callable[[re.Match[str], str], EventValues | None]
    stripped: bool = False  # matched at the start of the stripped message, not searched for

    def find(self, msg: str) -> tuple[str, EventRole, EventValues] | None:
        m = self.pattern.match(msg.strip()) if self.stripped else self.pattern.search(msg)
        values = self.extract(m, msg) if m else None
        if values is None:
            return None
        return self.kind, self.role(values) if callable(self.role) else self.role, values


def _first(signatures: tuple[LineSignature, ...], msg: str) -> tuple[str, EventRole, EventValues] | None:
    for sig in signatures:
        found = sig.find(msg)
        if found is not None:
            return found
    return None


# Words one of the kernel signatures needs: most lines skip their nine searches.
_KERNEL_WORDS = ("NVRM", "BUG", "panic", "Oops", "LOCKUP", "blocked for", "Hardware Error", "achine")


def _kernel(msg: str) -> tuple[str, EventRole, EventValues] | None:
    if not any(word in msg for word in _KERNEL_WORDS):
        return None
    for sig in KERNEL_SIGNATURES:
        m = sig.pattern.search(msg)
        if m:
            detail = next((g for g in m.groups() if g), "")
            return sig.kind, sig.role, {"detail": detail.strip()[:200]} if detail else {}
    return None


def _xid(m: re.Match[str], _msg: str) -> EventValues:
    values: EventValues = {"code": int(m.group(3)), "pci": _pci(m.group(1)), "detail": m.group(4)[:200]}
    if m.group(2):
        values["mig_gpu_instance"] = int(m.group(2))
    pid = _XID_PID.search(m.group(4))
    if pid:
        values["pid"] = int(pid.group(1)) if pid.group(1) else None
    name = _XID_NAME.search(m.group(4))
    if name:
        values["process"] = name.group(1)
    return values


def _cuda_oom(m: re.Match[str], msg: str) -> EventValues:
    values: EventValues = {}
    if m.group(1):
        values["requested"] = m.group(1)
    g = _OOM_GPU.search(msg)
    if g:
        values["gpu"] = int(g.group(1) or g.group(2))
    return values


def _oom_kill_line(m: re.Match[str], _msg: str) -> EventValues:
    values: EventValues = {"constraint": m.group(1)}
    if m.group(3):
        values["process"], values["pid"] = m.group(2), int(m.group(3))
    return values


def _watchdog(m: re.Match[str], _msg: str) -> EventValues:
    values: EventValues = {
        "seq": int(m.group(2)),
        "op": m.group(3),
        "timeout_ms": int(m.group(6)),
        "ran_ms": int(m.group(7)),
    }
    if m.group(1):
        values["rank"] = int(m.group(1))
    if m.group(4):
        values["numel_in"], values["numel_out"] = int(m.group(4)), int(m.group(5))
    return values


def _k8s_exit(m: re.Match[str], _msg: str) -> EventValues | None:
    code = int(m.group(1) or m.group(2))
    if not code:
        return None
    return {"exitcode": code, **_signal_of(code - 128 if code > 128 else 0, negative=False)}


def _slurm_cancel(m: re.Match[str], _msg: str) -> EventValues:
    return {"job": m.group(1), "node": m.group(2), "at": m.group(3), "reason": (m.group(4) or "").strip()}


_SIGNATURES_BEFORE_KERNEL: tuple[LineSignature, ...] = (
    LineSignature(_XID, "xid", lambda v: _xid_role(int(v["code"])), _xid),
    LineSignature(
        _FELL_OFF,
        "xid",
        "failure",
        lambda m, _: {
            "code": 79,
            "pci": _pci(m.group(1)),
            "detail": "GPU has fallen off the bus (no Xid line)",
            "inferred": True,
        },
    ),
    LineSignature(
        _SXID,
        "sxid",
        lambda v: "failure" if v["fatal"] else "info",
        lambda m, _: {"code": int(m.group(2)), "pci": m.group(1), "fatal": m.group(3).lower() == "fatal"},
    ),
    LineSignature(_CUDA_OOM, "cuda_oom", "failure", _cuda_oom),
    LineSignature(_CUDA_HW, "cuda_device_error", "failure", lambda m, _: {"signature": m.group(0)}),
    LineSignature(_GPU_ALLOC, "gpu_alloc_failure", "failure", lambda m, _: {"signature": m.group(0)}),
    LineSignature(
        _KILLED,
        "host_oom_kill",
        "failure",
        lambda m, msg: {
            "pid": int(m.group(1)),
            "process": m.group(2),
            "cgroup": msg.lstrip().startswith("Memory cgroup"),
        },
    ),
    LineSignature(_OOM_KILL_LINE, "host_oom_kill", "failure", _oom_kill_line),
    LineSignature(_OOM_INVOKED, "oom_invoked", "info", lambda m, _: {"process": m.group(1)}),
    LineSignature(_OOM_REAPER, "oom_reaper", "info", lambda m, _: {"pid": int(m.group(1)), "process": m.group(2)}),
    LineSignature(_SLURM_OOM, "slurm_oom", "failure", lambda m, _: {"events": int(m.group(1)), "step": m.group(2)}),
    LineSignature(_SRUN_OOM, "slurm_oom", "failure", lambda m, _: {"node": m.group(1), "tasks": m.group(2)}),
    LineSignature(_K8S_OOM, "k8s_oomkilled", "failure", lambda m, _: {}),
    LineSignature(
        _SEGFAULT,
        "segfault",
        "failure",
        lambda m, _: {"process": m.group(1), "pid": int(m.group(2)), "library": m.group(3)},
    ),
)

_SIGNATURES_AFTER_KERNEL: tuple[LineSignature, ...] = (
    LineSignature(_WATCHDOG, "watchdog_timeout", "follower", _watchdog),
    LineSignature(
        _WATCHDOG_COUNTERS,
        "watchdog_counters",
        "follower",
        lambda m, _: {
            "pg_id": m.group(1),
            "pg_desc": m.group(3) or "",
            "rank": int(m.group(4)),
            "work": int(m.group(5)),
            "last_enqueued": int(m.group(6)),
            "last_completed": int(m.group(7)),
        },
    ),
    LineSignature(
        _DUMP_SIGNAL,
        "dump_signal",
        "follower",
        lambda m, _: {"from_rank": int(m.group(1)) if m.group(1) else "self"},
    ),
    LineSignature(
        _NCCL_WARN,
        "nccl_warn",
        "follower",
        lambda m, _: {
            "host": m.group(1),
            "pid": int(m.group(2)),
            "cuda_dev": int(m.group(4)),
            "where": m.group(5),
            "message": m.group(6)[:200],
        },
    ),
    LineSignature(_NCCL_WARN_ANY, "nccl_warn", "follower", lambda m, _: {"message": m.group(1)[:200]}),
    LineSignature(
        _SIGNAL_PID,
        "signal",
        "outcome",
        lambda m, _: {"signal": int(m.group(1)), "name": m.group(2), "pid": int(m.group(3))},
    ),
    LineSignature(
        _AGENT_FAILED,
        "exit",
        "outcome",
        lambda m, _: {
            "exitcode": int(m.group(1)),
            "local_rank": int(m.group(2)),
            "pid": int(m.group(3)),
            **_signal_of(int(m.group(1))),
        },
    ),
    LineSignature(_CLOSING, "teardown_signal", "follower", lambda m, _: {"pid": int(m.group(1)), "signal": m.group(2)}),
    LineSignature(
        _SRUN_EXIT,
        "exit",
        "outcome",
        lambda m, _: {"node": m.group(1), "tasks": m.group(2), "how": m.group(3)},
    ),
    LineSignature(
        _SLURM_CANCEL,
        "slurm_cancel",
        lambda v: "failure" if v["reason"] == "NODE FAILURE" else "outcome",
        _slurm_cancel,
    ),
    LineSignature(
        _SHELL_DEATH,
        "exit",
        "outcome",
        lambda m, _: {"how": m.group(1), **_signal_of(_SHELL_SIGNALS[m.group(1)], negative=False)},
        stripped=True,
    ),
    LineSignature(
        _NCCL_ERROR,
        "nccl_error",
        "follower",
        lambda m, msg: {"remote": "ncclRemoteError" in msg or "remote process exited" in msg},
    ),
    LineSignature(_K8S_EXIT, "exit", "outcome", _k8s_exit),
)


def _pci(bus_id: str) -> str:
    """PCI bus id without the function number: ``0000:3b:00.0`` and ``0000:3b:00`` are one GPU."""
    bus_id = bus_id.rstrip(":").lower()
    return bus_id[:-2] if re.search(r"\.\d$", bus_id) else bus_id


def _xid_role(code: int) -> EventRole:
    info = xid_catalog.lookup(code)
    if info is None:
        return "failure"  # unknown codes are not waved through as harmless
    if info.klass == "sympathetic":
        return "follower"
    if info.klass == "informational":
        return "info"
    return "failure"


def _signal_of(code: int, *, negative: bool = True) -> EventValues:
    sig = -code if negative else code
    if sig > 0:
        return {"signal": sig, "signal_name": SIGNALS.get(sig, f"signal {sig}")}
    return {}


def _exception(msg: str, *, bare_ok: bool = True) -> tuple[str, EventRole, EventValues] | None:
    """An exception line (``Type: message``); a bare ``Exception:`` only where ``bare_ok``
    (right after a traceback or in an error file: elsewhere it is any program's word)."""
    m = _EXCEPTION.match(msg.strip())
    if not m:
        return None
    exc_type, text = m.group(1), (m.group(2) or "")
    if exc_type.endswith("ChildFailedError") or (exc_type in _BARE_EXCEPTIONS and not bare_ok):
        return None  # the block that follows carries the facts
    if "NCCL" in text or "DistBackendError" in exc_type or "nccl" in text:
        return (
            "nccl_error",
            "follower",
            {"exception": exc_type, "remote": "remote process exited" in text or "ncclRemoteError" in text},
        )
    # "Engine core initialization failed. See root cause above.": it follows a failure logged elsewhere.
    role: EventRole = "follower" if engine_logs.points_elsewhere(text) else "failure"
    return "exception", role, {"exception": exc_type, "message": text[:200]}


# ---------------------------------------------------------------- files


def parse_file(
    path: Path, *, host: str | None = None, rank: int | None = None, display: str | None = None
) -> list[Event]:
    """Every failure-relevant event in the text file ``path`` (streamed in large blocks)."""
    name = display or str(path)
    try:
        with open_binary(path) as fh:
            first = b""
            if fh.peek(1)[:1] == b"{":
                first = fh.read(MAX_ERROR_FILE + 1)
                if len(first) <= MAX_ERROR_FILE:
                    parsed = _error_file(first, name, host, rank)
                    if parsed is not None:
                        return parsed
            anchors: list[tuple[int, float]] = []  # (line, time) of lines whose stamp has a year
            events = _bounded(_parse_lines(_scan(fh, first, anchors), name, host, rank), name)
    except READ_ERRORS as exc:
        raise BadInput(path, f"cannot be read ({exc})") from None
    log_year.date_partials(events, anchors)
    return events


def _scan(
    fh: IO[bytes], first: bytes = b"", anchors: list[tuple[int, float]] | None = None
) -> Iterator[tuple[int, str]]:
    """(line number, line) of the lines that may carry a signature.

    Blocks are searched with ``str.find`` per keyword (C speed) instead of running every
    regex on every line; a torchrun report is passed on whole (its field lines carry no
    keyword). Near each end of a block, the first line whose stamp has a year goes to
    ``anchors``: the context that dates the file's stamps without one.
    """
    done = 0  # lines before the current block
    carry = first
    window = [0]  # report lines still to pass on whole, across a block boundary
    while True:
        block = fh.read(CHUNK_BYTES)
        data = carry + block
        if not block:
            if data:
                text = data.decode("utf-8", errors="replace")
                text = text if text.endswith("\n") else text + "\n"
                _dated_line(text, done, anchors)
                yield from _hits(text, done, window)
            return
        cut = data.rfind(b"\n")
        if cut == -1 and len(data) < 4 * CHUNK_BYTES:
            carry = data
            continue
        cut = cut if cut != -1 else len(data) - 1  # one enormous line: cut it
        carry = data[cut + 1 :]
        text = data[: cut + 1].decode("utf-8", errors="replace")
        if not text.endswith("\n"):
            text += "\n"
        _dated_line(text, done, anchors)
        yield from _hits(text, done, window)
        done += text.count("\n")


DATE_WINDOW = 64 << 10  # characters at each end of a block searched for a dated line


def _dated_line(text: str, done: int, anchors: list[tuple[int, float]] | None) -> None:
    """Add the first line near each end of ``text`` whose own stamp has a year (not a date
    in a message). Only the ends are searched: a block with no date at all would cost a
    regex pass over megabytes, and a log that dates its lines dates them throughout."""
    if anchors is None:
        return
    for lo, hi in ((0, DATE_WINDOW), (max(len(text) - DATE_WINDOW, DATE_WINDOW), len(text))):
        pos, tries = lo, 64
        while pos < hi and tries:
            m = _DATE_HINT.search(text, pos, hi)
            if m is None:
                break
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.start())
            stamp: _Stamp = {}
            if m.start() - start <= 160:
                _read_prefixes(text[start:end], stamp)
            if "time" in stamp:
                anchors.append((done + 1 + text.count("\n", 0, start), stamp["time"]))
                break
            pos, tries = end + 1, tries - 1


def _hits(text: str, done: int, window: list[int]) -> Iterator[tuple[int, str]]:
    starts: set[int] = set()
    for key in _KEYWORDS:
        i = text.find(key)
        while i != -1:
            starts.add(text.rfind("\n", 0, i) + 1)
            i = text.find(key, text.find("\n", i) + 1)
    carried, window[0] = window[0], 0
    reports = [(s, REPORT_LINES) for s in starts if _REPORT_START.search(text, s, text.find("\n", s))]
    if carried:
        starts.add(0)
        reports.append((0, carried - 1))
    for s, lines in reports:
        pos = s
        for left in range(lines, 0, -1):
            pos = text.find("\n", pos) + 1
            if pos >= len(text):
                window[0] = max(window[0], left)
                break
            starts.add(pos)
    line_no, prev = done + 1, 0
    for s in sorted(starts):
        line_no += text.count("\n", prev, s)
        prev = s
        yield line_no, text[s : text.find("\n", s)].rstrip("\r")


def _bounded(events: Iterator[Event], name: str) -> list[Event]:
    kept: list[Event] = []
    dropped = 0
    for e in events:
        if len(kept) < MAX_EVENTS_PER_FILE:
            kept.append(e)
        else:
            dropped += 1
    if dropped:
        kept.append(
            Event(
                "truncated",
                "info",
                name,
                None,
                f"{dropped} more events in this file were counted but not kept",
                values={"dropped": dropped},
            )
        )
    return kept


def _error_file(data: bytes, name: str, host: str | None, rank: int | None) -> list[Event] | None:
    """A torchelastic error file (``{"message": {"message": ..., "extraInfo": {...}}}``)."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):  # not JSON, absurdly nested, or a 4,300-digit integer: read it as text
        return None
    if not isinstance(doc, dict) or "message" not in doc:
        return None
    message = doc["message"]
    if not ((isinstance(message, dict) and "extraInfo" in message) or "errorCode" in doc):
        return None  # some other JSON with a "message": read it as text
    extra: object = {}  # the file's extraInfo: untrusted JSON, read only if it is an object
    if isinstance(message, dict):
        extra = message.get("extraInfo") or {}
        message = message.get("message", "")
    message = str(message)
    first = message.strip().splitlines()[-1] if message.strip() else ""
    fallback: tuple[str, EventRole, EventValues] = ("exception", "failure", {"message": first[:200]})
    kind, role, values = _match(message) or _exception(first) or fallback
    values = {**values, "error_file": True}
    if "errorCode" in doc:
        values["error_code"] = doc["errorCode"]
    ev = Event(
        kind,
        role,
        name,
        None,
        _short(message.strip().splitlines()[0] if message.strip() else ""),
        host=host,
        rank=rank,
        values=values,
    )
    ts = extra.get("timestamp") if isinstance(extra, dict) else None
    try:
        seconds = int(str(ts))
    except (TypeError, ValueError):
        ev.notes.append("error file has no timestamp")
    else:
        if not 0 <= seconds <= _LAST_EPOCH_S:  # 17 digits is the year 352 million; 401 no float holds
            shown = str(ts) if len(str(ts)) <= 24 else f"{str(ts)[:20]}… ({len(str(ts))} characters)"
            raise BadInput(
                name, f"timestamp {shown} is not epoch seconds of a year 1970-9999", where="message.extraInfo.timestamp"
            )
        ev.time, ev.resolution = float(seconds), 1.0
    return [ev]


def _short(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _parse_lines(lines: Iterator[tuple[int, str]], name: str, host: str | None, rank: int | None) -> Iterator[Event]:
    after_traceback = False
    report = _TorchrunReport(name, host)
    phases: dict[str, str] = {}  # process prefix -> the engine start-up phase its lines last named
    for number, line in lines:
        if len(line) > 65536:
            line = line[:65536]
        stamp: _Stamp = {}
        body, prefix_rank, process = _read_prefixes(line, stamp)
        opened = engine_logs.phase_of(body)
        if opened is not None:
            phases[process] = opened
        consumed, closed = report.feed(number, body)
        yield from closed
        if consumed:
            continue
        if body.strip() == _TRACEBACK:
            after_traceback = True
            continue
        matched = _match(body)
        if matched is None and (after_traceback or _EXCEPTION.match(body.strip())):
            matched = _exception(body, bare_ok=after_traceback)
            if matched is not None:
                after_traceback = False
        if matched is not None:
            where = _Where(name, number, line, host, rank if prefix_rank is None else prefix_rank)
            yield _event(matched, where, stamp, phases.get(process))
    yield from report.finish()


@dataclass(frozen=True)
class _Where:
    """The line an event is read from: file, number, text, and the host and rank its prefixes (or the file) name."""

    name: str
    number: int
    line: str
    host: str | None
    rank: int | None


def _event(matched: tuple[str, EventRole, EventValues], where: _Where, stamp: _Stamp, phase: str | None) -> Event:
    """The event of a matched line: its values completed (engine phase, catalog, class), its time from the stamp."""
    kind, role, values = matched
    if phase is not None and role == "failure":
        values["phase"] = phase
    ev = Event(
        kind,
        role,
        where.name,
        where.number,
        _short(where.line.strip()),
        host=stamp.get("host") or where.host,
        rank=where.rank,
        values=values,
    )
    if kind == "nccl_warn" and "host" in values:
        ev.host = values["host"]
    if kind == "watchdog_timeout" and "rank" in values and ev.rank is None:
        ev.rank = values["rank"]
    if kind == "watchdog_counters" and ev.rank is None:
        ev.rank = values["rank"]
    if kind == "xid":
        info = xid_catalog.lookup(values["code"])
        values["catalog"] = info.to_json() if info else None
    elif kind in _KERNEL_KINDS:
        values["class"] = SIGNATURE_CLASS[kind]
        values["meaning"] = SIGNATURE_MEANING[kind]
    if "printk_level" in stamp:
        values["printk_level"] = stamp["printk_level"]
    ev.time = stamp.get("time")
    ev.resolution = stamp.get("resolution", 0.0)
    ev.since_boot = stamp.get("since_boot")
    ev.partial = stamp.get("partial")
    ev.naive = stamp.get("naive", False)
    return ev


class _TorchrunReport:
    """torchrun's ChildFailedError report: "field : value" lines, one record per "[N]:", read as the lines come."""

    def __init__(self, name: str, host: str | None) -> None:
        self.name, self.host = name, host
        self.open, self.root_cause = False, False
        self.record: _ChildReport | None = None
        self.record_line = 0

    def feed(self, number: int, body: str) -> tuple[bool, list[Event]]:
        """Whether the line is the report's (then no signature is looked for in it), and the records it closed."""
        stripped = body.strip()
        if _CHILD_FAILED_START.search(body) or (self.open and stripped == "Failures:"):
            closed = self.finish()
            self.open, self.root_cause = True, "Root Cause" in body
            return True, closed
        if not self.open:
            return False, []
        field_line = _CHILD_FIELD.match(body)
        if field_line:
            if self.record is None:
                self.record, self.record_line = _ChildReport(self.root_cause), number
            self.record.fields[field_line.group(1)] = field_line.group(2).strip()
            return True, []
        if _CHILD_INDEX.match(body):
            closed = self.finish()
            self.record, self.record_line = _ChildReport(self.root_cause), number
            return True, closed
        if (
            not stripped
            or set(stripped) <= {"=", "-"}
            or stripped == "<NO_OTHER_FAILURES>"
            or stripped.endswith(" FAILED")
        ):
            return True, []
        self.open = False
        return False, self.finish()

    def finish(self) -> list[Event]:
        """The record still open, as an event (none when there is none)."""
        record, self.record = self.record, None
        return [_child_event(record, self.name, self.record_line, self.host)] if record else []


_CHILD_RANK = re.compile(r"(-?\d+)(?: \(local_rank: (\d+)\))?")
_CHILD_EXIT = re.compile(r"(-?\d+)(?: \(pid: (\d+)\))?")


@dataclass
class _ChildReport:
    """One failure of a torchrun report: its section (Root Cause or not) and its field lines."""

    root_cause: bool
    fields: dict[str, str] = field(default_factory=dict)  # time, host, rank, exitcode, error_file, traceback


def _child_event(report: _ChildReport, name: str, line: int, host: str | None) -> Event:
    block = report.fields
    values: EventValues = {"root_cause": report.root_cause}
    rank = None
    m = _CHILD_RANK.match(block.get("rank", ""))
    if m:
        rank = int(m.group(1))
        if m.group(2):
            values["local_rank"] = int(m.group(2))
    m = _CHILD_EXIT.match(block.get("exitcode", ""))
    if m:
        values["exitcode"] = int(m.group(1))
        if m.group(2):
            values["pid"] = int(m.group(2))
        values.update(_signal_of(values["exitcode"]))
    if block.get("error_file") and block["error_file"] != "<N/A>":
        values["error_file"] = block["error_file"]
    if block.get("traceback"):
        values["traceback"] = block["traceback"][:200]
    text = f"torchrun failure report: rank {block.get('rank', '?')}, exitcode {block.get('exitcode', '?')}"
    ev = Event("child_failed", "outcome", name, line, text, host=block.get("host") or host, rank=rank, values=values)
    m = re.match(r"(\d{4})-(\d\d)-(\d\d)_(\d\d):(\d\d):(\d\d)", block.get("time", ""))
    if m:
        y, mo, d, h, mi, sec = (int(g) for g in m.groups())
        ev.time, ev.naive = _stamp(y, mo, d, h, mi, sec, 0.0, None)
        ev.resolution = 1.0
        ev.notes.append("torchrun time: when the agent observed the exit (second resolution)")
    return ev


# ---------------------------------------------------------------- which log format a file is

LOG_FORMATS = (  # (name, test on a raw line): the first that most sample lines pass names the file
    (
        "pstore/ERST dump (printk levels, boot-relative)",
        lambda ln: bool(re.match(r"^(?:Panic|Oops|Emergency|Unknown)#\d+ Part\d+", ln)),
    ),
    ("/dev/kmsg records (prio,seq,usec)", lambda ln: bool(_KMSG.match(ln))),
    ("printk with levels <N>[ s.us] (boot-relative)", lambda ln: bool(re.match(r"^<\d>\[\s*\d+\.\d+\]", ln))),
    ("journalctl short-monotonic / dmesg [ s.us] (boot-relative)", lambda ln: bool(_DMESG_BOOT.match(ln))),
    ("dmesg -T (wall clock, no zone)", lambda ln: bool(_DMESG_T.match(ln))),
    ("dmesg --time-format iso / journalctl short-iso", lambda ln: bool(_DMESG_ISO.match(ln))),
    ("ISO-stamped log", lambda ln: bool(_ISO.match(ln))),
    ("syslog / journalctl short (no year)", lambda ln: bool(_SYSLOG.match(ln))),
    ("glog / c10 log", lambda ln: bool(_GLOG.match(ln))),
    ("vLLM / Python logging LEVEL MM-DD HH:MM:SS (no year)", lambda ln: bool(_LEVEL_MONTH_DAY.match(ln))),
)


def log_format(path: Path, sample_lines: int = 200) -> str:
    """The log format ``path``'s first lines are in (what ``wb diagnose`` prints per
    file), e.g. "printk with levels <N>[ s.us] (boot-relative)"; "plain text" otherwise."""
    try:
        with open_binary(path) as fh:
            head = fh.read(64 << 10).decode("utf-8", errors="replace")
    except READ_ERRORS:
        return "unreadable"
    lines = [ln for ln in head.splitlines()[:sample_lines] if ln.strip()]
    if not lines:
        return "empty"
    if head.lstrip().startswith("{") and '"message"' in head[:4096]:
        return "torchelastic error file (JSON)"
    if LOG_FORMATS[0][1](lines[0]):
        return LOG_FORMATS[0][0]
    votes: Counter[str] = Counter()
    for ln in lines:
        ln = _RANK_PREFIX.sub("", _strip_process_prefixes(ln)[0], count=1)
        for name, test in LOG_FORMATS[1:]:
            if test(ln):
                votes[name] += 1
                break
    if not votes:
        return "plain text (no time stamps)"
    name, count = votes.most_common(1)[0]
    return name if count * 2 >= len(lines) else f"{name} (mixed with other lines)"
