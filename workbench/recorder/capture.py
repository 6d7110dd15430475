"""Turn what a snapshot took into a native capture (``workbench.capture/1``) and write it.

Runs on the snapshot writer thread, never on a recording thread. numpy is imported
here, lazily, to group rows without a Python loop per row.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import re
import socket
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from workbench.recorder.gpu import METRICS
from workbench.recorder.host_capture import HostTaken, build_host
from workbench.recorder.records import (
    AtSnapshot,
    Capture,
    Detail,
    GpuSample,
    GpuSection,
    RecorderInfo,
    Sample,
    Window,
    Work,
    fields_of,
)
from workbench.recorder.ring import RingView

FORMAT = "workbench.capture/1"

# One row of the span ring is three float64: (code, a, b).
#   code = seq * SEQ_UNIT + name_id * NAME_UNIT + kind
# Spans draw their ``seq * SEQ_UNIT`` (the *base*) from a counter stepping by SEQ_UNIT,
# so a step's row code is its base plus a constant: no arithmetic on the hot path.
# For STEP/REQUEST/PHASE rows a, b are start and end (raw recorder clock, ns: exact in
# float64 for 104 days of CLOCK_MONOTONIC, a few ns coarser after);
# for VALUE rows a is the value; for CUDA rows a is the start and b the elapsed ms.
SPAN_FIELDS: tuple[str, ...] = ("code", "a", "b")
STEP, REQUEST, PHASE, VALUE, CUDA = 0, 1, 2, 3, 4
NAME_UNIT = 8  # 3 bits of kind
MAX_NAMES = 1024  # 10 bits of name id
SEQ_UNIT = NAME_UNIT * MAX_NAMES  # 2**13
# Codes are exact in float64 below 2**53; the recorder restarts its counter here
# (after 2**39 spans), and samples are ordered by time, not by seq.
SEQ_LIMIT = 2**52


def decode(codes: Any) -> tuple[Any, Any, Any]:
    """(seq, name id, kind) arrays from a float64 array of row codes."""
    as_int = codes.astype("int64")
    return as_int >> 13, (as_int >> 3) & (MAX_NAMES - 1), as_int & (NAME_UNIT - 1)


# Values that are flags or counts in the capture, not floats.
_INTEGRAL = {"prompt_tokens", "output_tokens", "tokens", "samples", "rank", "step"}
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_]+")


def safe_name(name: str) -> str:
    """A phase or value name as a capture key: letters, digits and underscores."""
    cleaned = _SAFE_NAME.sub("_", str(name)).strip("_")[:64]
    return cleaned or "unnamed"


@dataclass
class SnapshotData:
    """Everything one snapshot took, by reference, at the moment it was taken."""

    reason: str
    taken_ns: float  # recorder clock (raw ns), as are all times in the rows and events
    wall0_s: float  # epoch seconds at recorder clock t0_ns
    t0_ns: float
    lens: str
    spans: RingView
    gpu: RingView | None
    names: tuple[str, ...]
    events: list[tuple[float, str, Detail]]
    gpu_info: GpuSection
    recorder: RecorderInfo
    trigger: Detail | None = None
    label: str | None = None
    dimensions: dict[str, object] = field(default_factory=dict)
    window_kind: str = "steady"
    rank: int | None = None
    # Keep only spans that ended at or after this time (ns since start); None: all.
    since_ns: float | None = None
    host: HostTaken | None = None
    # A hang, termination or on-request snapshot: where the process was (moment.py).
    at_snapshot: AtSnapshot | None = None


def _rows(view: RingView) -> Any:
    import numpy as np  # lazy: only the writer thread needs it, not `import workbench.recorder`

    width = len(view.fields)
    parts = []
    for seg in view.segments:
        # tobytes() is one C call: a stale writer appending to this array can't
        # interleave, and numpy never holds a buffer export on the live array.
        raw = np.frombuffer(seg.values.tobytes(), dtype=np.float64)
        usable = (raw.size // width) * width
        parts.append(raw[:usable].reshape(-1, width))
    if not parts:
        return np.empty((0, width))
    return np.concatenate(parts)


def _epoch(data: SnapshotData, t_ns: float) -> float:
    return round(data.wall0_s + (t_ns - data.t0_ns) / 1e9, 6)


def _ms(ns: float) -> float:
    return round(ns / 1e6, 6)


def _finite(value: float) -> bool:
    return not (math.isnan(value) or math.isinf(value))


def _samples(data: SnapshotData) -> tuple[list[Sample], dict[str, float | int]]:
    """One sample per closed step (training) or request (inference), oldest first."""
    import numpy as np  # lazy: only the writer thread needs it, not `import workbench.recorder`

    rows = _rows(data.spans)
    seq, name, kind = decode(rows[:, 0])
    primary = REQUEST if data.lens == "inference" else STEP
    pick = kind == primary
    if data.since_ns is not None:
        pick &= rows[:, 2] >= data.since_ns
    order = np.flatnonzero(pick)
    order = order[np.argsort(rows[order, 1], kind="stable")]  # by start time
    if not order.size:
        return [], {}
    span_seqs = seq[order]
    index = {int(s): i for i, s in enumerate(span_seqs)}
    names = data.names
    extra: list[Sample] = [{} for _ in range(order.size)]

    # Phases and CUDA-event phases: summed per (span, name), vectorized.
    for row_kind, suffix, amount in (
        (PHASE, "_ms", (rows[:, 2] - rows[:, 1]) / 1e6),
        (CUDA, "_gpu_ms", rows[:, 2]),
    ):
        sel = np.flatnonzero(kind == row_kind)
        if not sel.size:
            continue
        keys = seq[sel] * MAX_NAMES + name[sel]
        unique, inverse = np.unique(keys, return_inverse=True)
        totals = np.bincount(inverse, weights=amount[sel])
        for key, total in zip(unique.tolist(), totals.tolist()):
            i = index.get(key // MAX_NAMES)
            if i is not None:
                extra[i][f"{safe_name(names[key % MAX_NAMES])}{suffix}"] = round(total, 6)
    # Values: the last one recorded wins.
    for r in np.flatnonzero(kind == VALUE).tolist():
        i = index.get(int(seq[r]))
        value = float(rows[r, 1])
        if i is None or not _finite(value):
            continue
        key = names[int(name[r])]
        if key == "ok":
            extra[i]["ok"] = bool(value)
        elif key in _INTEGRAL and value.is_integer():
            extra[i][key] = int(value)
        else:
            extra[i][key] = value

    samples: list[Sample] = []
    for i, (s, start, end) in enumerate(zip(span_seqs.tolist(), rows[order, 1].tolist(), rows[order, 2].tolist())):
        if primary == STEP:
            sample: Sample = {"step": s}
            if data.rank is not None:
                sample["rank"] = data.rank
            sample["step_ms"] = _ms(end - start)
        else:
            sample = {"id": f"r-{s}", "e2e_ms": _ms(end - start), "ok": True}
        sample.update(extra[i])
        sample["started_at"] = _epoch(data, start)  # epoch seconds (a timestamp, not a duration)
        samples.append(sample)
    bounds = {
        "start": _epoch(data, float(rows[order, 1].min())),
        "end": _epoch(data, float(rows[order, 2].max())),
        "first_seq": int(span_seqs[0]),
        "last_seq": int(span_seqs[-1]),
    }
    return samples, bounds


def _gpu_section(data: SnapshotData) -> GpuSection:
    section = data.gpu_info
    if data.gpu is None or section.status not in ("ok", "stopped", "failed"):
        return msgspec.structs.replace(section, samples_taken=UNSET)
    rows = _rows(data.gpu)
    out = []
    for r in rows:
        # unsupported or failed reads stay absent: unknown
        metrics = {
            name: int(value) if name in _INTEGRAL_METRICS else value
            for name, value in zip(METRICS, r[2:].tolist())
            if _finite(value)
        }
        out.append(GpuSample(t=_epoch(data, float(r[0])), device=int(r[1]), **metrics))
    return msgspec.structs.replace(section, fields=_GPU_UNITS, samples=out, evicted_samples=data.gpu.evicted_rows)


_INTEGRAL_METRICS = ("memory_used_bytes", "throttle_reasons")
_GPU_UNITS = {
    "util_pct": "%",
    "mem_util_pct": "%",
    "sm_clock_mhz": "MHz",
    "mem_clock_mhz": "MHz",
    "power_w": "W",
    "temperature_c": "C",
    "memory_used_bytes": "bytes",
    "throttle_reasons": "NVML clocks event reasons bitmask",
}


def _work_and_quality(lens: str, samples: list[Sample]) -> tuple[Work | None, dict[str, float]]:
    quality: dict[str, float] = {}
    if lens == "inference":
        if samples:
            failed = sum(1 for s in samples if not s.get("ok", True))
            quality["error_rate"] = failed / len(samples)
        unit_keys = (("tokens", "output_tokens"),)
    else:
        unit_keys = (("tokens", "tokens"), ("samples", "samples"))
    for unit, key in unit_keys:
        if samples and all(key in s for s in samples):
            return Work(unit=unit, amount=sum(s[key] for s in samples)), quality  # type: ignore[misc]
    return None, quality


def build_capture(data: SnapshotData) -> Capture:
    """The capture document for one snapshot (pure: no I/O)."""
    samples, bounds = _samples(data)
    taken_at = _epoch(data, data.taken_ns)
    dims = dict(data.dimensions)
    gpu = _gpu_section(data)
    devices = gpu.devices or []
    if "hardware" not in dims and devices:
        names = sorted({d.name or "" for d in devices} - {""})
        if len(names) == 1:
            dims["hardware"] = f"{len(devices)}x {names[0]}"
    label = data.label or f"{data.lens} recorder"
    trig = data.trigger
    window = Window(
        kind=data.window_kind,
        source="flight recorder",
        **bounds,  # type: ignore[arg-type]
        snapshot_reason=data.reason,
        incident_seq=UNSET if trig is None else trig.get("seq"),  # type: ignore[arg-type]
        trigger_rule=UNSET if trig is None or "rule" not in trig else str(trig["rule"]),
        threshold_ms=UNSET if trig is None or "threshold_ms" not in trig else float(trig["threshold_ms"]),  # type: ignore[arg-type]
    )
    host = (
        UNSET
        if data.host is None
        else build_host(data.host, lambda t: _epoch(data, t), _host_since(data, bounds), _rows)
    )
    work, quality = _work_and_quality(data.lens, samples)
    events: list[Detail] = [{"t": _epoch(data, t), "kind": kind, **detail} for t, kind, detail in data.events]
    return Capture(
        format=FORMAT,
        lens=data.lens,
        label=f"{label}: {data.reason}",
        recorded_at=datetime.fromtimestamp(taken_at, timezone.utc).isoformat().replace("+00:00", "Z"),
        dimensions=dims,
        window=window,
        at_snapshot=UNSET if data.at_snapshot is None else data.at_snapshot,
        work=UNSET if work is None else work,
        quality=quality or UNSET,
        samples=samples,
        trigger=UNSET if data.trigger is None else data.trigger,
        gpu=gpu,
        host=host,
        recorder=msgspec.structs.replace(data.recorder, events=events, host=socket.gethostname()),
    )


def _host_since(data: SnapshotData, bounds: dict[str, float | int]) -> float | None:
    """Host rows are kept from where the window's spans begin (all, when it keeps all)."""
    if data.since_ns is None:
        return None
    if "start" in bounds:  # the earliest kept span's start, on the recorder clock
        return min(data.since_ns, data.t0_ns + (float(bounds["start"]) - data.wall0_s) * 1e9)
    return data.since_ns


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:120] or "snapshot"


def iter_json(value: Any, *, chunk: int = 256) -> Iterator[str]:
    """``json.dumps(value)`` in pieces, pausing between chunks of long lists (records
    written as objects of their set fields, in field order).

    One ``json.dumps`` of a large snapshot is a single C call that holds the GIL for
    its whole length, stalling the workload's threads; in pieces, with a ``sleep(0)``
    between them, the writer yields the GIL at least every ``chunk`` items.
    """
    if isinstance(value, msgspec.Struct):
        value = fields_of(value)
    if isinstance(value, dict):
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield ("," if i else "") + json.dumps(str(key)) + ":"
            yield from iter_json(item, chunk=chunk)
        yield "}"
    elif isinstance(value, list) and len(value) > chunk:
        yield "["
        for start in range(0, len(value), chunk):
            body = json.dumps(value[start : start + chunk], allow_nan=False, separators=(",", ":"), default=fields_of)
            yield ("," if start else "") + body[1:-1]
            time.sleep(0)  # let the recording threads run
        yield "]"
    else:
        yield json.dumps(value, allow_nan=False, separators=(",", ":"), default=fields_of)


def write_capture(doc: Capture, out_dir: Path, stem: str, *, compress: bool) -> Path:
    """Write ``doc`` to ``out_dir`` atomically (temporary file, then rename): a crash or
    a kill mid-write leaves no half-written capture behind."""
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = ".json.gz" if compress else ".json"
    final = out_dir / f"{_slug(stem)}{suffix}"
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".wb-snapshot-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as raw:
            sink: Any = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if compress else raw
            with io.BufferedWriter(_Unclosed(sink), buffer_size=1 << 16) as out:
                for piece in iter_json(doc):
                    out.write(piece.encode())
            if compress:
                sink.close()
        os.replace(tmp, final)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return final


class _Unclosed(io.RawIOBase):
    """A raw writer over ``sink`` that does not close it (the caller does)."""

    def __init__(self, sink: Any) -> None:
        self._sink = sink

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        self._sink.write(b)
        return len(b)
