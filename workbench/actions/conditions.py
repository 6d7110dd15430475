"""The conditions a retry depends on: what a diagnosis blamed, and what a retry ran under.

"A retry is useful only if the conditions that caused the failure have changed." Which
conditions those are depends on the failure (``RETRY_CONDITIONS``): an out-of-memory error
(CUDA or cgroup) comes back on any node unless the memory limit, the batch (``batch_size``,
``max_num_seqs``) or ``gpu_memory_utilization`` changes; an Xid or ECC error stays with its
node and GPU; a hang in a collective with its rank set (the nodes the ranks ran on) or its
network (the NCCL transport settings). Only those are blamed, so "the conditions have not
changed" is judged on them (``bundle/action_status.conditions_changed``).

Values come from a ``wb diagnose`` document: the node(s) the failure class names, the GPU
(index, PCI address or serial) of the first failure, the memory limit its line states; and
settings the job's own files state (``max_num_seqs=256``, ``--batch-size 32``,
``gpu_memory_utilization=0.9``, ``NCCL_SOCKET_IFNAME=eth0``, NCCL's ``NET/IB : Using ...``).
From a rerun execution's preflight: its host, driver and GPU serials. A condition the data do
not state is left out: unknown, never "changed".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from workbench.errors import BadInput
from workbench.inputs import READ_ERRORS, open_binary

# Condition name -> what it was: one value (driver, gpu, memory_limit, ...) or several (node, rank_set, network).
Conditions = dict[str, str | list[str]]

_MEMORY = ("memory_limit", "batch_size", "max_num_seqs", "gpu_memory_utilization")
# Per failure class (workbench.diagnostics.classify), the conditions whose change makes a retry worthwhile.
RETRY_CONDITIONS: dict[str, tuple[str, ...]] = {
    "gpu-memory-exhaustion": _MEMORY,
    "cpu-memory-limit": _MEMORY,
    "node-or-gpu-hardware": ("node", "gpu", "gpu_serial"),
    "communication-timeout": ("rank_set", "network"),
    # A code, input or configuration error: no condition of the infrastructure makes a retry worth it.
    "application-error": (),
}

_CAPACITY = re.compile(r"total capacity of ([0-9.]+ ?[KMGT]i?B)")
_CGROUP_LIMIT = re.compile(r"(?:memory limit|limit)[ =:]+([0-9.]+ ?[KMGT]i?B|[0-9]+kB)", re.I)
# Settings a job's files state (logs, engine banners, launch lines, recorder snapshots' dimensions).
_SETTINGS = {
    "max_num_seqs": re.compile(rb"max[_-]num[_-]seqs\"?\s{0,3}[=: ]\s{0,3}\"?([0-9]{1,9})\b"),
    "gpu_memory_utilization": re.compile(
        rb"gpu[_-]memory[_-]utilization\"?\s{0,3}[=: ]\s{0,3}\"?([0-9]{0,3}\.?[0-9]{1,6})"
    ),
    "batch_size": re.compile(rb"(?:micro[_-])?batch[_-]size\"?\s{0,3}[=: ]\s{0,3}\"?([0-9]{1,9})\b"),
}
_NCCL_ENV = re.compile(
    rb"\b(NCCL_(?:SOCKET_IFNAME|IB_HCA|NET|IB_DISABLE|NET_GDR_LEVEL|P2P_DISABLE|P2P_LEVEL|CROSS_NIC)=[^\s\"',;]{1,64})"
)
_NCCL_NET = re.compile(rb"NET/(IB|Socket|OFI|[A-Za-z]{1,16}) ?: Using ([^\r\n]{1,120})")
_KEYWORDS = (
    b"max_num_seqs",
    b"max-num-seqs",
    b"memory_utilization",
    b"memory-utilization",
    b"atch_size",
    b"atch-size",
    b"NCCL_",
    b"NET/",
)
_MAX_SCAN_BYTES = 256 << 20  # settings are stated near a job's start; a huge log is read this far
_MAX_VALUES = 16
_UNREADABLE: tuple[type[BaseException], ...] = (BadInput, *READ_ERRORS)


def retry_conditions(failure_class: Mapping[str, Any]) -> tuple[str, ...]:
    """The conditions that matter for a ``failure_class`` record (an undecided class: its candidates')."""
    klass = str(failure_class.get("class") or "")
    if klass in RETRY_CONDITIONS:
        return RETRY_CONDITIONS[klass]
    names: list[str] = []
    for candidate in failure_class.get("candidate_classes") or ():
        names.extend(n for n in RETRY_CONDITIONS.get(str(candidate), ()) if n not in names)
    return tuple(names)


def blamed_conditions(diagnosis: Mapping[str, Any]) -> Conditions:
    """What the diagnosis blamed (``Diagnosis.to_json()``), limited to the conditions its
    failure class names: ``{}`` when it names no failure or none is stated."""
    fc = diagnosis.get("failure_class") or {}
    first = (diagnosis.get("first_failure") or {}).get("event") or {}
    known: Conditions = {}
    hosts = list((fc.get("where") or {}).get("hosts") or ([first["host"]] if first.get("host") else []))
    if hosts:
        known["node"] = sorted(map(str, hosts))
    known.update(_event_conditions(first))
    known.update(_job_conditions(diagnosis))
    wanted = retry_conditions(fc)
    return {name: known[name] for name in wanted if name in known}


def observed_conditions(diagnosis: Mapping[str, Any]) -> Conditions:
    """What a retry's own files say (``Diagnosis.to_json()`` of the new job): every host its
    events name, the first failure's GPU and memory limit if it failed, and the settings and
    rank set its files state."""
    hosts = {str(e["host"]) for e in diagnosis.get("timeline") or [] if e.get("host")}
    out: Conditions = {"node": sorted(hosts)} if hosts else {}
    out.update(_event_conditions((diagnosis.get("first_failure") or {}).get("event") or {}))
    out.update(_job_conditions(diagnosis))
    return out


def preflight_conditions(preflight: Mapping[str, Any]) -> Conditions:
    """A rerun execution's preflight (``PreflightReport.to_json()``): host, driver, GPU serials."""
    env = preflight.get("environment") or {}
    out: Conditions = {}
    if preflight.get("host"):
        out["node"] = [str(preflight["host"])]
    if env.get("driver_version") and env["driver_version"] != "unknown":
        out["driver"] = str(env["driver_version"])
    serials = sorted(str(d["serial"]) for d in env.get("devices") or [] if d.get("serial") and d["serial"] != "unknown")
    if serials:
        out["gpu_serial"] = serials
    return out


def _event_conditions(event: Mapping[str, Any]) -> Conditions:
    values = event.get("values") or {}
    text = str(event.get("text") or "")
    out: Conditions = {}
    if values.get("serial"):
        out["gpu_serial"] = [str(values["serial"])]
    if values.get("pci"):
        out["gpu"] = str(values["pci"])
    elif values.get("gpu") is not None:
        out["gpu"] = str(values["gpu"])
    if values.get("driver"):
        out["driver"] = str(values["driver"])
    match = _CAPACITY.search(text) or (_CGROUP_LIMIT.search(text) if "oom" in str(event.get("kind")) else None)
    if match:
        out["memory_limit"] = match.group(1)
    return out


def _job_conditions(diagnosis: Mapping[str, Any]) -> Conditions:
    """The rank set (the nodes the job's ranks ran on) and the settings its files state."""
    out: Conditions = {}
    hosts = {str(e["host"]) for e in diagnosis.get("timeline") or [] if e.get("host") and e.get("rank") is not None}
    hosts |= {str(r["host"]) for r in (diagnosis.get("hangs") or {}).get("ranks") or [] if r.get("host")}
    if hosts:
        out["rank_set"] = sorted(hosts)
    files = (diagnosis.get("inputs") or {}).get("files") or []
    out.update(stated_settings(Path(f) for f in files))
    return out


def stated_settings(files: Iterable[Path]) -> Conditions:
    """Settings the files state: ``batch_size``, ``max_num_seqs``, ``gpu_memory_utilization``
    (one value, or the values when they differ) and ``network`` (NCCL transport lines)."""
    found: dict[str, set[str]] = {}
    for path in files:
        try:
            _scan(path, found)
        except _UNREADABLE:
            continue  # a file diagnose could read may be gone or swapped since: what it said is unknown
    out: Conditions = {}
    for name, values in sorted(found.items()):
        ordered = sorted(values)[:_MAX_VALUES]
        out[name] = ordered if name == "network" or len(ordered) > 1 else ordered[0]
    return out


def _scan(path: Path, found: dict[str, set[str]]) -> None:
    read = 0
    with open_binary(path) as stream:
        for line in stream:
            read += len(line)
            if read > _MAX_SCAN_BYTES:
                return
            if not any(k in line for k in _KEYWORDS):
                continue
            for name, pattern in _SETTINGS.items():
                for m in pattern.finditer(line):
                    found.setdefault(name, set()).add(m.group(1).decode("ascii", "replace"))
            for m in _NCCL_ENV.finditer(line):
                found.setdefault("network", set()).add(m.group(1).decode("utf-8", "replace"))
            for m in _NCCL_NET.finditer(line):
                using = m.group(2).decode("utf-8", "replace").strip()
                found.setdefault("network", set()).add(f"NET/{m.group(1).decode('ascii', 'replace')}: {using}")
