"""The recorder's typed records: its configuration as a snapshot states it, the GPU
devices and samples, the recorder's own state, and the capture document a snapshot
writes (``workbench.capture/1``, the contract in docs/capture-format.md).

Frozen ``msgspec.Struct`` records, built at the edges only (a snapshot, ``stats()``,
the GPU sampler opening NVML): never per span. Field order is the written JSON's key
order; a key the file leaves out when it does not apply defaults to ``UNSET`` (never
written). Samples stay plain dicts: their keys are the workload's own phase and value
names.
"""

from __future__ import annotations

from typing import ClassVar

import msgspec
from msgspec import UNSET, UnsetType

from workbench.vocabulary import NonFinite, Record as BaseRecord

# One sample (a step or a request): fixed keys (``step``, ``step_ms``, ``id``, ...)
# beside the workload's phase and value names, each a JSON scalar.
Sample = dict[str, float | int | bool | str]
# An event's or a trigger's detail: JSON scalars under the recorder's or the caller's keys.
Detail = dict[str, str | int | float | bool | None]


class Record(BaseRecord, frozen=True, kw_only=True, omit_defaults=True):
    """The vocabulary's record as a capture writes it: ``UNSET`` left out, values as they are
    (the capture's writer encodes them)."""

    json_nonfinite: ClassVar[NonFinite] = "keep"


class BudgetInfo(Record, frozen=True, kw_only=True):
    """A stream's retention (``config.Budget``) as a snapshot states it."""

    max_bytes: int
    segment_rows: int
    max_age_s: float | UnsetType = UNSET


class ConfigInfo(Record, frozen=True, kw_only=True):
    """What of ``RecorderConfig`` a snapshot states (``recorder.config``)."""

    lens: str
    spans: BudgetInfo
    gpu: BudgetInfo
    gpu_interval_s: float | UnsetType = UNSET
    trigger: dict[str, float | int] | UnsetType = UNSET  # TriggerRule.to_json()
    stack_hz: float | UnsetType = UNSET
    stacks: BudgetInfo | UnsetType = UNSET
    max_frames: int | UnsetType = UNSET
    max_stacks: int | UnsetType = UNSET
    max_depth: int | UnsetType = UNSET
    host_interval_s: float | UnsetType = UNSET
    cpu: BudgetInfo | UnsetType = UNSET
    gc_pauses: bool | UnsetType = UNSET
    gc: BudgetInfo | UnsetType = UNSET
    incident_window_s: float | UnsetType = UNSET
    # The hang watchdog (watchdog.py): a fixed threshold, or the derived rule (k x median, floor).
    hang_after_s: float | UnsetType = UNSET
    hang_rule: str | UnsetType = UNSET
    max_hangs: int | UnsetType = UNSET


class Device(Record, frozen=True, kw_only=True):
    """One GPU as NVML names it; an identity field NVML would not give is left out (unknown)."""

    index: int
    name: str | UnsetType = UNSET
    uuid: str | UnsetType = UNSET
    pci_bus_id: str | UnsetType = UNSET
    memory_total_bytes: int | UnsetType = UNSET
    driver: str | UnsetType = UNSET


class GpuSample(Record, frozen=True, kw_only=True):
    """One device read at one tick (epoch seconds); a metric NVML did not give is left
    out (unknown, never zero). Field order follows ``gpu.METRICS``."""

    t: float
    device: int
    util_pct: float | UnsetType = UNSET
    mem_util_pct: float | UnsetType = UNSET
    sm_clock_mhz: float | UnsetType = UNSET
    mem_clock_mhz: float | UnsetType = UNSET
    power_w: float | UnsetType = UNSET
    temperature_c: float | UnsetType = UNSET
    memory_used_bytes: int | UnsetType = UNSET
    throttle_reasons: int | UnsetType = UNSET


class GpuSection(Record, frozen=True, kw_only=True):
    """The GPU sampler's state (``GpuSampler.describe()``), and in a capture its samples.
    ``status`` ``off``: not configured (then only a reason)."""

    status: str
    interval_s: float | UnsetType = UNSET
    reason: str | UnsetType = UNSET
    devices: list[Device] | UnsetType = UNSET
    samples_taken: int | UnsetType = UNSET
    overruns: int | UnsetType = UNSET
    xid_events: str | UnsetType = UNSET
    fields: dict[str, str] | UnsetType = UNSET  # metric -> unit
    samples: list[GpuSample] | UnsetType = UNSET
    evicted_samples: int | UnsetType = UNSET


class RecorderInfo(Record, frozen=True, kw_only=True):
    """The recorder's own state as it goes into a snapshot (``recorder``) and
    ``stats()``; ``events`` and ``host`` only in a snapshot."""

    tool: str
    version: str
    pid: int
    config: ConfigInfo
    spans: dict[str, int]  # SegmentRing.counters()
    gpu: dict[str, int]
    stacks: dict[str, int] | UnsetType = UNSET  # the host streams' rings, each its own budget
    cpu: dict[str, int] | UnsetType = UNSET
    gc: dict[str, int] | UnsetType = UNSET
    faults: int
    events_dropped: int
    fault_places: dict[str, int] | UnsetType = UNSET
    last_fault: str | UnsetType = UNSET
    incidents: int | UnsetType = UNSET
    in_flight: int | UnsetType = UNSET
    suppressed: dict[str, int] | UnsetType = UNSET
    names_dropped: int | UnsetType = UNSET
    cuda_events_dropped: int | UnsetType = UNSET
    forked_from_pid: int | UnsetType = UNSET
    # The watchdog, the signal handlers and the control socket: their state (a plain dict each).
    watchdog: dict[str, float | int | str] | UnsetType = UNSET
    signals: str | UnsetType = UNSET
    control: str | UnsetType = UNSET
    events: list[Detail] | UnsetType = UNSET  # {"t", "kind", **detail}
    host: str | UnsetType = UNSET


class Window(Record, frozen=True, kw_only=True):
    """The snapshot's window: the span of its samples (absent when it has none) and why it was taken."""

    kind: str
    source: str
    start: float | UnsetType = UNSET
    end: float | UnsetType = UNSET
    first_seq: int | UnsetType = UNSET
    last_seq: int | UnsetType = UNSET
    snapshot_reason: str
    incident_seq: int | None | UnsetType = UNSET
    # An incident window (kind "incident"): the rule that fired and its threshold.
    trigger_rule: str | UnsetType = UNSET
    threshold_ms: float | UnsetType = UNSET


class ThreadInfo(Record, frozen=True, kw_only=True):
    """A workload thread as the host streams number it (``thread`` in their rows)."""

    id: int
    name: str
    native_id: int | UnsetType = UNSET


Row = list[float | int | None]  # one row of a host stream (``fields`` name the columns; null: unknown)


class StacksSection(Record, frozen=True, kw_only=True):
    """Sampled Python stacks: interned ``frames`` ([function, file, first line]) and
    ``stacks`` (frame ids, innermost first); one row per thread per tick."""

    status: str
    reason: str | UnsetType = UNSET
    rate_hz: float | UnsetType = UNSET
    achieved_hz: float | UnsetType = UNSET
    gil: str | UnsetType = UNSET
    max_depth: int | UnsetType = UNSET
    frames: list[list[str | int]] = []
    stacks: list[list[int]] = []
    fields: list[str] = []
    rows: list[Row] = []
    ticks: int | UnsetType = UNSET
    overruns: int | UnsetType = UNSET
    sampler_cpu_s: float | UnsetType = UNSET
    dropped: dict[str, int] | UnsetType = UNSET


class CpuSection(Record, frozen=True, kw_only=True):
    """Process (``thread`` -1) and per-thread CPU time, faults, RSS, context switches:
    cumulative counters at each tick (epoch seconds)."""

    status: str
    reason: str | UnsetType = UNSET
    interval_s: float | UnsetType = UNSET
    source: str | UnsetType = UNSET
    units: dict[str, str] | UnsetType = UNSET
    fields: list[str] = []
    rows: list[Row] = []
    dropped: dict[str, int] | UnsetType = UNSET


class GcSection(Record, frozen=True, kw_only=True):
    """Garbage-collector pauses: one row per collection (start in epoch seconds)."""

    status: str
    fields: list[str] = []
    rows: list[Row] = []
    pauses_seen: int | UnsetType = UNSET
    dropped: dict[str, int] | UnsetType = UNSET


class HostActivity(Record, frozen=True, kw_only=True):
    """What the host was doing (``host`` in a capture): its threads, stacks, CPU and memory, GC."""

    threads: list[ThreadInfo] = []
    stacks: StacksSection
    cpu: CpuSection
    gc: GcSection


class StackFrame(Record, frozen=True, kw_only=True):
    """One Python frame of a thread at the snapshot's moment: the line it was on.
    ``stdlib``: the frame is in the Python standard library of the recording interpreter."""

    function: str
    file: str
    line: int | None
    stdlib: bool | UnsetType = UNSET


class ThreadStack(Record, frozen=True, kw_only=True):
    """A thread's Python stack at the snapshot's moment, innermost frame first.
    ``workload``: the thread that runs the recorded loop (``workload_how`` says how it
    was told apart); ``truncated``: frames past ``max_depth`` were left out."""

    name: str
    native_id: int | UnsetType = UNSET
    daemon: bool | UnsetType = UNSET
    workload: bool = False
    frames: list[StackFrame] = []
    truncated: bool | UnsetType = UNSET


class OpenSpan(Record, frozen=True, kw_only=True):
    """The step or request still open at the snapshot's moment; ``phases_done``: its phases
    that had ended, in the order they began (``[name, ms]``)."""

    kind: str
    seq: int
    opened_at: float  # epoch seconds, the recording host's clock
    open_s: float
    phases_done: list[list[str | float]] = []


class OpenPhase(Record, frozen=True, kw_only=True):
    """The phase of the open span that was still open (the most recently entered one)."""

    name: str
    opened_at: float
    open_s: float


class AtSnapshot(Record, frozen=True, kw_only=True):
    """Where the process was at the snapshot's moment (a hang, a termination, a request from
    outside): the open span and phase, the latest closed span, and every thread's stack.
    ``rank``/``host``/``pid`` say whose state it is (``wb diagnose`` reads it across ranks)."""

    reason: str
    at: float  # epoch seconds, the recording host's clock
    rank: int | UnsetType = UNSET
    host: str
    pid: int
    open_span: OpenSpan | UnsetType = UNSET
    open_phase: OpenPhase | UnsetType = UNSET
    open_phase_note: str | UnsetType = UNSET
    last_closed_seq: int | UnsetType = UNSET
    last_closed_at: float | UnsetType = UNSET
    workload_how: str
    threads: list[ThreadStack] = []


class Work(Record, frozen=True, kw_only=True):
    unit: str
    amount: int | float


class Capture(Record, frozen=True, kw_only=True):
    """One snapshot as a native capture. ``samples`` may be long: ``capture.iter_json``
    writes it in pieces."""

    format: str
    lens: str
    label: str
    recorded_at: str
    dimensions: dict[str, object]  # declared as-is (plain JSON values)
    window: Window
    # A hang, termination or on-request snapshot: the process's state at that moment.
    at_snapshot: AtSnapshot | UnsetType = UNSET
    work: Work | UnsetType = UNSET
    quality: dict[str, float] | UnsetType = UNSET
    samples: list[Sample]
    trigger: Detail | UnsetType = UNSET
    gpu: GpuSection
    host: HostActivity | UnsetType = UNSET
    recorder: RecorderInfo


def fields_of(record: msgspec.Struct) -> dict[str, object]:
    """A record's set fields, in order, one level deep (nested records stay records)."""
    return {name: value for name in record.__struct_fields__ if (value := getattr(record, name)) is not UNSET}
