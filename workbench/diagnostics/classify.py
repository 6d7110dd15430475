"""Failure class of an incident, with its evidence lines and what a retry would need.

Classes: application error, CPU memory limit, GPU memory exhaustion, communication timeout
(victim or origin), node or GPU hardware (by Xid class). A class is a label for the
evidence, not a proven cause; the retry advice says what would have to change.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from workbench.diagnostics import engine_logs, xid_catalog
from workbench.diagnostics.events import Event
from workbench.diagnostics.result import Evidence, FailureClassRecord, Retry, Where
from workbench.diagnostics.timeline import FirstFailure

APPLICATION = "application-error"
CPU_MEMORY = "cpu-memory-limit"
GPU_MEMORY = "gpu-memory-exhaustion"
COMMUNICATION = "communication-timeout"
HARDWARE = "node-or-gpu-hardware"
UNDECIDED = "undecided"
NONE = "none"

# The kernel/driver signatures of workbench.diagnostics.logs by their class: a panic, lockup,
# MCE or NVRM error takes the node (or its GPU) out, whatever the job did.
SIGNATURE_CLASSES = {
    kind: HARDWARE
    for kind in (
        "kernel_panic",
        "kernel_oops",
        "soft_lockup",
        "hard_lockup",
        "kernel_bug",
        "machine_check",
        "gpu_ecc",
        "nvrm_error",
    )
}

RETRY_RULE = "A retry helps only if the conditions that caused the failure have changed."
WHAT_CHANGES = {
    APPLICATION: "a fix to the code, input or configuration that raised the error; an unchanged retry fails the same "
    "way",
    CPU_MEMORY: "a higher host memory limit (cgroup / Slurm --mem / pod limit) or less host memory per process (fewer "
    "dataloader workers, smaller prefetch or pinned buffers)",
    GPU_MEMORY: "less GPU memory per rank (smaller micro-batch or sequence, activation checkpointing, more sharding) "
    "or, when reserved-but-unallocated memory is large, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    COMMUNICATION: "the rank that never entered the collective must be found and its cause removed (code path, data, "
    "or node); a longer timeout only helps a rank that is slow, not one that is stuck",
    HARDWARE: "the job must land on healthy hardware: drain the node and reset or replace the GPU as the Xid action "
    "says",
}


def event_class(e: Event) -> str | None:
    """The class an event points at, or None when it points at none."""
    if e.kind in SIGNATURE_CLASSES and e.role == "failure":  # kernel and driver signatures (logs.KERNEL_SIGNATURES)
        return SIGNATURE_CLASSES[e.kind]
    if e.kind == "xid":
        info = xid_catalog.lookup(e.values.get("code", -1))
        if info is None:
            return None
        if info.is_hardware:
            return HARDWARE
        if info.klass == "application":
            return APPLICATION
        return None
    if e.kind == "sxid":
        return HARDWARE if e.values.get("fatal") else None
    if e.kind == "cuda_device_error":
        return HARDWARE
    if e.kind == "slurm_cancel" and e.values.get("reason") == "NODE FAILURE":
        return HARDWARE
    if e.kind in ("host_oom_kill", "slurm_oom", "k8s_oomkilled"):
        return CPU_MEMORY
    if e.kind in ("cuda_oom", "gpu_alloc_failure", engine_logs.KV_CACHE_KIND):
        return GPU_MEMORY
    if e.kind in ("exception", "segfault"):
        return APPLICATION
    if e.kind in ("watchdog_timeout", "watchdog_counters", "dump_signal", "nccl_error", "nccl_warn"):
        return COMMUNICATION
    return None


@dataclass
class FailureClass:
    klass: str
    role: str | None = None  # for communication: "victim" | "origin" | "origin-undetermined"
    where: Where = Where()  # hosts / ranks
    evidence: list[Evidence] = field(default_factory=list)
    detail: str = ""
    candidates: list[str] = field(default_factory=list)
    xid_action: str | None = None
    what_changes: str | None = None  # the signature's own retry advice, over the class's

    def record(self) -> FailureClassRecord:
        retry = None
        if self.klass in WHAT_CHANGES:
            retry = Retry(
                rule=RETRY_RULE,
                what_would_change_it=self.what_changes or WHAT_CHANGES[self.klass],
                xid_action=self.xid_action or None,
            )
        return FailureClassRecord(
            klass=self.klass,
            role=self.role,
            where=self.where,
            detail=self.detail,
            evidence=tuple(self.evidence),
            candidate_classes=tuple(self.candidates) or None,
            retry=retry,
        )


def classify(events: list[Event], first: FirstFailure, never_entered: list[int]) -> FailureClass:
    """Class of the incident, decided from the first failure (or its tied candidates)."""
    if first.status == "none":
        if never_entered:
            return FailureClass(
                COMMUNICATION,
                "origin",
                Where(ranks=tuple(never_entered)),
                detail="collective hang: ranks that never entered the collective their peers wait on (flight recorder)",
            )
        return FailureClass(NONE, detail="no failure signature found")
    if first.status == "undecided":
        classes = sorted({c for c in (event_class(e) for e in first.candidates) if c})
        if len(classes) == 1:
            fc = _of(classes[0], first.candidates, events, never_entered)
            fc.detail = (
                fc.detail + "; " if fc.detail else ""
            ) + "first failure undecided, but every candidate has this class"
            return fc
        return FailureClass(
            UNDECIDED, detail=first.reason, candidates=classes, evidence=[c.evidence() for c in first.candidates]
        )
    assert first.event is not None
    klass = event_class(first.event)
    if klass is None:
        return FailureClass(
            UNDECIDED, detail=f"the first failure ({first.event.kind}) has no class", evidence=[first.event.evidence()]
        )
    return _of(klass, [first.event], events, never_entered)


def _of(klass: str, primary: list[Event], events: list[Event], never_entered: list[int]) -> FailureClass:
    related = [e for e in events if event_class(e) == klass and any(_same_place(e, p) for p in primary)]
    evidence = [e.evidence() for e in _dedupe([*primary, *related])][:12]
    where = Where(
        hosts=tuple(sorted({e.host for e in primary if e.host})),
        ranks=tuple(sorted({e.rank for e in primary if e.rank is not None})),
    )
    fc = FailureClass(klass, where=where, evidence=evidence)
    if klass == COMMUNICATION:
        if never_entered:
            fc.role = "origin"
            fc.where = msgspec.structs.replace(where, ranks_never_entered=tuple(never_entered))
            fc.detail = (
                "ranks that never entered the collective their peers wait on; the ranks that logged the "
                "timeout are waiting on them"
            )
        else:
            fc.role = "origin-undetermined"
            fc.detail = (
                "the ranks that logged timeouts are usually waiting on another rank; the data do not single one out"
            )
    elif klass == HARDWARE:
        xids = [e for e in primary if e.kind == "xid"]
        if xids:
            info = xid_catalog.lookup(xids[0].values["code"])
            if info:
                fc.xid_action = f"Xid {info.code} ({info.name}): {info.action}"
                fc.detail = f"Xid {info.code}: {info.description} [{info.klass}]"
    elif klass == GPU_MEMORY:
        _gpu_memory(fc, primary)
    return fc


def _gpu_memory(fc: FailureClass, primary: list[Event]) -> None:
    """Detail and retry advice of a GPU-memory class: a KV-cache refusal, or an allocation
    that failed (in the start-up phase the log named before it)."""
    kv = next((e for e in primary if e.kind == engine_logs.KV_CACHE_KIND), None)
    if kv is not None:
        fc.detail, fc.what_changes = engine_logs.kv_cache_detail(kv.values), engine_logs.KV_CACHE_RETRY
        return
    req = next((e.values.get("requested") for e in primary if e.values.get("requested")), None)
    fc.detail = f"CUDA allocation failed (tried to allocate {req})" if req else "CUDA allocation failed"
    phase = next((e.values["phase"] for e in primary if e.values.get("phase")), None)
    if phase is not None:
        fc.detail += f" during {phase}"
        if phase == "CUDA graph capture":
            fc.what_changes = engine_logs.GRAPH_CAPTURE_RETRY


def communication_victims(events: list[Event], first: FirstFailure) -> list[Event]:
    """Communication errors that come after a first failure of another class: victims."""
    if first.status != "named" or first.event is None or event_class(first.event) == COMMUNICATION:
        return []
    return [e for e in events if event_class(e) == COMMUNICATION and e.time is not None and e.time >= first.event.time]


def _same_place(a: Event, b: Event) -> bool:
    if a.rank is not None and b.rank is not None:
        return a.rank == b.rank and a.host == b.host
    return a.host == b.host and (a.host is not None or a.file == b.file)


def _dedupe(events: list[Event]) -> list[Event]:
    seen, out = set(), []
    for e in events:
        if id(e) not in seen:
            seen.add(id(e))
            out.append(e)
    return out
