"""A Kineto trace's events to columns, a run at a time, for ``kineto.py``.

msgspec decodes each run of events into Structs holding only the fields wb keeps (the
rest is skipped unread); the columns are then taken a field at a time (``attrgetter``
over the run, numpy over the values): no Python loop per event. Names are interned
once per distinct name, as are shape keys and what a name means (a communication
kernel, a data-loader wait, a step). A run whose fields the Structs refuse (a float
``pid``, a ``null`` timestamp) is decoded untyped and each event checked as the
format allows, into the same Structs: one column path for both.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from functools import cache
from itertools import repeat
from operator import attrgetter, eq, is_not, itemgetter
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from workbench.errors import BadInput
from workbench.training import model as m

MAX_DURATION_US = 7 * 24 * 3600 * 1e6  # an event longer than a week is corruption
MAX_TS_US = 1e17  # microseconds; beyond year 5000
MAX_SHAPE_KEY = 72  # characters of a shape key

# Category -> role. Legacy 2021 names first, then the current ActivityType names.
GPU, RUNTIME, CPU = 1, 2, 3
ROLES: dict[str, int] = {
    "Kernel": GPU,
    "Memcpy": GPU,
    "Memset": GPU,
    "Runtime": RUNTIME,
    "Operator": CPU,
    "kernel": GPU,
    "gpu_memcpy": GPU,
    "gpu_memset": GPU,
    "cuda_runtime": RUNTIME,
    "cuda_driver": RUNTIME,
    "cpu_op": CPU,
    "user_annotation": CPU,
}
GPU_BASE_KIND = {
    "Kernel": m.KERNEL,
    "kernel": m.KERNEL,
    "Memcpy": m.MEMCPY,
    "gpu_memcpy": m.MEMCPY,
    "Memset": m.MEMSET,
    "gpu_memset": m.MEMSET,
}
MEMORY_EVENTS = frozenset(("[memory]", "[OutOfMemory]"))
_PHASES = {"X": 1, "i": 2}  # complete events, instant events (the allocator's); others are not read
_STREAM_TID = re.compile(r"(\d+)")
_NO_SPACE = re.compile(rb"\s+")
_SCALAR_DIMS = re.compile(r"(?<=\[),?\[\](?=[,\]])|,\[\]")
_INT64 = 1 << 63

Args = msgspec.defstruct(
    "KinetoArgs",
    [
        ("stream", int | None, None),
        ("correlation", int | None, None),
        ("device", int | None, None),
        # Raw: shapes are kept as the trace wrote them (compacted), never decoded into lists.
        ("dims", msgspec.Raw, msgspec.Raw()),
        ("grid", msgspec.Raw, msgspec.Raw()),
        ("block", msgspec.Raw, msgspec.Raw()),
        ("device_type", int | None, None),
        ("allocated", float | None, None),
        ("reserved", float | None, None),
        ("nbytes", float | None, None),
    ],
    rename={
        "dims": "Input Dims",
        "device_type": "Device Type",
        "allocated": "Total Allocated",
        "reserved": "Total Reserved",
        "nbytes": "Bytes",
    },
    frozen=True,  # one shared instance stands for "no args"
    gc=False,
)
NO_ARGS = Args()
_NAN = math.nan
Event = msgspec.defstruct(
    "KinetoEvent",
    [
        ("ph", str, ""),
        ("cat", str, ""),
        ("name", str, ""),
        ("ts", float, _NAN),  # NaN: absent (JSON has no NaN)
        ("dur", float, _NAN),
        ("pid", int | str | None, None),
        ("tid", int | str | None, None),
        ("args", Args, NO_ARGS),
    ],
    gc=False,
)
_TYPED = msgspec.json.Decoder(list[Event])
_UNTYPED = msgspec.json.Decoder(list[Any])

_PH, _CAT, _NAME, _TS, _DUR = (attrgetter(f) for f in ("ph", "cat", "name", "ts", "dur"))
_PID, _TID, _ARGS = attrgetter("pid"), attrgetter("tid"), attrgetter("args")
_STREAM, _CORR, _DEVICE = (attrgetter(f"args.{f}") for f in ("stream", "correlation", "device"))
_DIMS, _GRID, _BLOCK = (attrgetter(f"args.{f}") for f in ("dims", "grid", "block"))
_DEVICE_TYPE, _ALLOCATED, _RESERVED, _NBYTES = (
    attrgetter(f) for f in ("device_type", "allocated", "reserved", "nbytes")
)


def decode(data: bytes, path: Path, first: int) -> list[Any]:
    """A run's events as ``Event`` Structs: typed by msgspec, or (for fields the Structs
    refuse) untyped and checked one by one as the format allows (``_checked``)."""
    try:
        return _TYPED.decode(data)
    except msgspec.ValidationError:
        return [_checked(ev, path, first + i) for i, ev in enumerate(_UNTYPED.decode(data))]


class EventColumns:
    """One rank's events, sorted into compact columns a run at a time (microseconds until ``finish``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.names = m.Names()
        self._name_kinds: list[tuple[bool, int, int]] = []  # per name id: communication, CPU class, step (-1)
        self._kinds = np.zeros((0, 3), dtype=np.int64)
        self.shapes = m.Names()
        self._shape_ids: dict[Any, int] = {}  # raw shape key -> shape id (-1: none)
        self.parts: dict[str, dict[str, list[np.ndarray]]] = {
            table: {c: [] for c in cols} for table, cols in _TABLES.items()
        }
        self.saw_aten = False

    def add(self, events: list[Any], first: int) -> None:
        """A run of events; ``first`` is the index of its first event in the trace."""
        n = len(events)
        phase = np.fromiter(map(_PHASES.get, map(_PH, events), repeat(0)), dtype=np.int8, count=n)
        complete = np.flatnonzero(phase == 1)
        if len(complete):
            complete_events = _take(events, complete)
            roles = np.fromiter(
                map(ROLES.get, map(_CAT, complete_events), repeat(0)), dtype=np.int8, count=len(complete)
            )
            kept = np.flatnonzero(roles)
            self._complete(_take(complete_events, kept), roles[kept], first + complete[kept])
        instant = np.flatnonzero(phase == 2)
        if len(instant):
            self._memory(_take(events, instant))

    def table(self, name: str) -> dict[str, np.ndarray]:
        return {
            col: np.concatenate(chunks) if chunks else np.zeros(0, dtype=_TABLES[name][col])
            for col, chunks in self.parts[name].items()
        }

    # -- complete events -----------------------------------------------------------------

    def _complete(self, events: list[Any], roles: np.ndarray, index: np.ndarray) -> None:
        """Complete ("X") events of the kept categories: GPU activities, runtime calls, CPU operators."""
        ts = np.fromiter(map(_TS, events), dtype=np.float64, count=len(events))
        dur = np.fromiter(map(_DUR, events), dtype=np.float64, count=len(events))
        faults = _time_faults(ts, dur, index)
        gpu, runtime, cpu = (np.flatnonzero(roles == role) for role in (GPU, RUNTIME, CPU))
        gpu_events, runtime_events = _take(events, gpu), _take(events, runtime)
        streams, devices, correlations = _gpu_ids(gpu_events)
        runtime_correlations = [-1 if c is None else c for c in map(_CORR, runtime_events)]
        ints = {}
        for key, values, at, what in (
            ("stream", streams, gpu, "gpu"),
            ("device", devices, gpu, "gpu"),
            ("correlation", correlations, gpu, "gpu"),
            ("runtime", runtime_correlations, runtime, "runtime"),
        ):
            ints[key], bad = _int64(values)
            if bad is not None:
                faults.append((int(index[at[bad]]), 1, what, bad))
        if faults:
            raise self._fault(min(faults), ts, dur, index, streams, correlations, runtime_correlations, gpu, runtime)
        codes = self._intern(list(map(_NAME, events)))
        kinds = self._kinds[codes]
        shapes = self._shapes(events, roles, kinds[:, 2] >= 0)
        # GPU activities: a kernel whose name says NCCL/RCCL is a collective.
        base = np.fromiter(map(GPU_BASE_KIND.__getitem__, map(_CAT, gpu_events)), dtype=np.int8, count=len(gpu))
        kind = np.where((base == m.KERNEL) & (kinds[gpu, 0] == 1), m.COLLECTIVE, base).astype(np.int8)
        self._put(
            "gpu",
            ts=ts[gpu],
            dur=dur[gpu],
            kind=kind,
            stream=ints["stream"],
            correlation=ints["correlation"],
            name=codes[gpu],
            device=ints["device"],
            shape=shapes[gpu],
        )
        self._put("runtime", ts=ts[runtime], dur=dur[runtime], correlation=ints["runtime"], name=codes[runtime])
        # CPU operators: a ProfilerStep#N range is a step, not an operator.
        step = kinds[cpu, 2]
        steps, ops = cpu[step >= 0], cpu[step < 0]
        self._put("steps", number=step[step >= 0], ts=ts[steps], dur=dur[steps])
        self._put("ops", ts=ts[ops], dur=dur[ops], name=codes[ops], shape=shapes[ops])
        cls = kinds[ops, 1]
        for table, value in (("loader", 1), ("checkpoint", 2)):
            picked = ops[cls == value]
            self._put(table, ts=ts[picked], dur=dur[picked])

    def _intern(self, names: list[str]) -> np.ndarray:
        """Name ids (first seen, first numbered), and what each new name means."""
        ids = self.names.ids
        new = [name for name in dict.fromkeys(names) if name not in ids]
        if new:
            for name in new:
                self.names.id(name)
                self._name_kinds.append(_name_kind(name))
                self.saw_aten = self.saw_aten or name.startswith("aten::")
            self._kinds = np.array(self._name_kinds, dtype=np.int64).reshape(-1, 3)
        return np.fromiter(map(ids.__getitem__, names), dtype=np.int64, count=len(names))

    def _shapes(self, events: list[Any], roles: np.ndarray, is_step: np.ndarray) -> np.ndarray:
        """Shape ids (-1: none recorded) of GPU activities (grid, block) and CPU operators
        (input dims), numbered in the order they first appear; a step's shape is not kept."""
        out = np.full(len(events), -1, dtype=np.int64)
        gpu = np.flatnonzero(roles == GPU)
        ops = np.flatnonzero((roles == CPU) & ~is_step)
        gpu_events, op_events = _take(events, gpu), _take(events, ops)
        # A kernel's key is (grid, block), an operator's its dims: raw bytes, no Python loop per event.
        gpu_keys = list(zip(map(bytes, map(_GRID, gpu_events)), map(bytes, map(_BLOCK, gpu_events))))
        op_keys = list(map(bytes, map(_DIMS, op_events)))
        shape_ids = self._shape_ids
        new: list[tuple[int, Any]] = []  # (event position, key) of keys first met in this run
        for keys, at in ((gpu_keys, gpu), (op_keys, ops)):
            firsts = dict(zip(reversed(keys), range(len(keys) - 1, -1, -1)))  # key -> its first index
            new.extend((int(at[i]), key) for key, i in firsts.items() if key not in shape_ids)
        for _position, key in sorted(new, key=itemgetter(0)):  # numbered in the order they first appear
            shape = _shape_key(key)
            shape_ids[key] = -1 if shape is None else self.shapes.id(shape)
        get = shape_ids.__getitem__
        out[gpu] = np.fromiter(map(get, gpu_keys), dtype=np.int64, count=len(gpu_keys))
        out[ops] = np.fromiter(map(get, op_keys), dtype=np.int64, count=len(op_keys))
        return out

    def _put(self, table: str, **columns: np.ndarray) -> None:
        parts = self.parts[table]
        for col, values in columns.items():
            parts[col].append(np.asarray(values, dtype=_TABLES[table][col]))

    def _fault(
        self,
        fault: tuple[int, int, str, int],
        ts: np.ndarray,
        dur: np.ndarray,
        index: np.ndarray,
        streams: list[Any],
        correlations: list[Any],
        runtime_correlations: list[Any],
        gpu: np.ndarray,
        runtime: np.ndarray,
    ) -> BadInput:
        """The first fault of a run, as the one line naming its event."""
        at, _order, what, i = fault
        where = f"traceEvents[{at}]"
        if what == "time":
            t, d = (None if math.isnan(x) else x for x in (ts[i], dur[i]))
            if t is None or d is None:
                return BadInput(self.path, f"ts and dur must be numbers (ts {_brief(t)}, dur {_brief(d)})", where=where)
            return BadInput(self.path, f"implausible time (ts {_brief(t)}, dur {_brief(d)})", where=where)
        if what == "gpu":
            ids = f"stream {_brief(streams[i])}, correlation {_brief(correlations[i])}"
            return BadInput(self.path, f"stream and correlation must be integers ({ids})", where=where)
        return BadInput(
            self.path, f"correlation must be an integer, got {_brief(runtime_correlations[i])}", where=where
        )

    # -- memory ------------------------------------------------------------------------

    def _memory(self, events: list[Any]) -> None:
        """Caching-allocator instant events on a device (host allocations are not kept)."""
        names = list(map(_NAME, events))
        memory = np.flatnonzero(np.fromiter(map(MEMORY_EVENTS.__contains__, names), dtype=bool, count=len(names)))
        if not len(memory):
            return
        events = _take(events, memory)
        args = list(map(_ARGS, events))
        ts = np.fromiter(map(_TS, events), dtype=np.float64, count=len(events))
        keep = (
            np.fromiter(map(is_not, args, repeat(NO_ARGS)), dtype=bool, count=len(args))
            & ~np.fromiter(map(eq, map(_DEVICE_TYPE, args), repeat(0)), dtype=bool, count=len(args))
            & (ts > -MAX_TS_US)
            & (ts < MAX_TS_US)
        )
        picked = np.flatnonzero(keep)
        if not len(picked):
            return
        args = _take(args, picked)
        self._put(
            "memory",
            ts=ts[picked],
            allocated=_floats(map(_ALLOCATED, args)),
            reserved=_floats(map(_RESERVED, args)),
            nbytes=_floats(map(_NBYTES, args)),
            oom=np.fromiter(map(eq, _take(names, memory[picked]), repeat("[OutOfMemory]")), dtype=np.int8),
        )


_TABLES: dict[str, dict[str, Any]] = {
    "gpu": {
        "ts": np.float64,
        "dur": np.float64,
        "kind": np.int8,
        "stream": np.int64,
        "correlation": np.int64,
        "name": np.int64,
        "device": np.int64,
        "shape": np.int64,
    },
    "runtime": {"ts": np.float64, "dur": np.float64, "correlation": np.int64, "name": np.int64},
    "ops": {"ts": np.float64, "dur": np.float64, "name": np.int64, "shape": np.int64},
    "memory": {"ts": np.float64, "allocated": np.float64, "reserved": np.float64, "nbytes": np.float64, "oom": np.int8},
    "steps": {"number": np.int64, "ts": np.float64, "dur": np.float64},
    "loader": {"ts": np.float64, "dur": np.float64},
    "checkpoint": {"ts": np.float64, "dur": np.float64},
}


def _take(items: Sequence[Any], index: np.ndarray) -> list[Any]:
    """``items`` at ``index`` (a C-level gather, not a Python loop)."""
    if len(index) == len(items):
        return list(items)
    if len(index) == 0:
        return []
    if len(index) == 1:
        return [items[int(index[0])]]
    return list(itemgetter(*index.tolist())(items))


def _time_faults(ts: np.ndarray, dur: np.ndarray, index: np.ndarray) -> list[tuple[int, int, str, int]]:
    """The first event whose time is absent or implausible (NaN: absent; JSON has none)."""
    ok = (dur >= 0) & (dur <= MAX_DURATION_US) & (ts > -MAX_TS_US) & (ts < MAX_TS_US)
    if ok.all():
        return []
    i = int(np.argmin(ok))
    return [(int(index[i]), 0, "time", i)]  # an event's time is checked before its ids


def _gpu_ids(events: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """GPU activities' stream (from ``tid`` when args say none: "stream 7" in 2021 traces),
    device (the ``pid`` when args say none; -1 when that is no integer) and correlation (-1 when absent)."""
    streams = list(map(_STREAM, events))
    if None in streams:
        streams = [s if s is not None else _stream_of(t) for s, t in zip(streams, map(_TID, events))]
    devices = list(map(_DEVICE, events))
    if None in devices:
        devices = [d if d is not None else p for d, p in zip(devices, map(_PID, events))]
    devices = [d if type(d) is int else -1 for d in devices]
    correlations = [-1 if c is None else c for c in map(_CORR, events)]
    return streams, devices, correlations


def _int64(values: list[Any]) -> tuple[np.ndarray, int | None]:
    """Integers as int64, and the index of the first that does not fit (None: all fit)."""
    try:
        return np.fromiter(values, dtype=np.int64, count=len(values)), None
    except OverflowError:
        bad = next(i for i, v in enumerate(values) if not -_INT64 <= v < _INT64)
        return np.zeros(len(values), dtype=np.int64), bad


def _not_int64(value: Any) -> bool:
    """An id that is no integer, or too large (numpy would take 7.0 or "7" for 7)."""
    return type(value) not in (int, bool) or not -_INT64 <= value < _INT64


def _floats(values: Any) -> np.ndarray:
    """Numbers or None (absent, null: NaN) as float64."""
    return np.array(list(values), dtype=np.float64)


@cache
def _name_kind(name: str) -> tuple[bool, int, int]:
    """What a name means: a communication kernel; a data-loader wait (1) or checkpoint (2); a step number (-1: none)."""
    cls = 1 if m.is_loader_wait(name) else 2 if m.is_checkpoint(name) else 0
    step = m.step_number(name)
    return m.is_communication_kernel(name), cls, -1 if step is None else step


def _shape_key(raw: bytes | tuple[bytes, bytes]) -> str | None:
    """A shape's key from its raw JSON (whitespace removed, so that writers' spacing does not
    count): a kernel's ``(grid, block)``, an operator's input dims without the scalars' entries."""
    if isinstance(raw, tuple):
        grid, block = raw
        if not grid:
            return None
        shown = _NO_SPACE.sub(b"", block).decode("utf-8", "replace") if block else "?"
        return f"grid {_NO_SPACE.sub(b'', grid).decode('utf-8', 'replace')} block {shown}"
    if not raw:
        return None
    return _tensor_dims(_NO_SPACE.sub(b"", raw).decode("utf-8", "replace"))


def _tensor_dims(dims: str) -> str | None:
    """Input dims without the scalar arguments' empty entries: ``[[8,4],[],[]]`` is ``[[8,4]]``."""
    kept = _SCALAR_DIMS.sub("", dims)
    kept = kept.replace("[,", "[")
    if kept in ("[]", ""):
        return None
    if len(kept) > MAX_SHAPE_KEY:  # a foreach/cat over many tensors: a short prefix and a fingerprint stand for it
        fingerprint = hashlib.blake2b(kept.encode(), digest_size=5).hexdigest()
        kept = f"{kept[: MAX_SHAPE_KEY - 24]}... #{fingerprint}"
    return kept


def _stream_of(tid: Any) -> int:
    if type(tid) is int:
        return tid
    if isinstance(tid, str):  # 2021 traces: "stream 7"
        found = _STREAM_TID.search(tid)
        if found:
            return int(found.group(1))
    return -1


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- events the Structs refuse ---------------------------------------------------------------


def _checked(ev: Any, path: Path, index: int) -> Any:
    """One untyped event as an ``Event`` of well-typed values, checked as the format allows:
    a kept complete event (a category wb reads) must have numeric times, a string name and
    integer ids; anything else about other events is left alone (they are not read)."""
    where = f"traceEvents[{index}]"
    if type(ev) is not dict:
        raise BadInput(path, f"expected an event object, got {type(ev).__name__}", where=where)
    ph, cat = ev.get("ph"), ev.get("cat")
    if ph == "X":
        if cat is not None and type(cat) is not str:  # {} or [] cannot name a category
            raise BadInput(path, f"cat must be a string, got {type(cat).__name__}", where=f"{where}.cat")
        role = ROLES.get(cat) if cat is not None else None
        if role is not None:
            return _checked_complete(ev, role, cat, path, where)
    elif ph == "i" and ev.get("name") in MEMORY_EVENTS and type(ev.get("args")) is dict:
        a = ev["args"]
        ts = ev.get("ts")
        device_type = a.get("Device Type")
        return Event(
            ph="i",
            name=ev["name"],
            ts=float(ts) if type(ts) in (int, float) else _NAN,
            args=Args(
                device_type=0 if type(device_type) in (int, float, bool) and device_type == 0 else None,
                allocated=_number(a.get("Total Allocated")),
                reserved=_number(a.get("Total Reserved")),
                nbytes=_number(a.get("Bytes")),
            ),
        )
    return Event()


def _checked_complete(ev: dict[str, Any], role: int, cat: str, path: Path, where: str) -> Any:
    args = ev.get("args") or {}
    if type(args) is not dict:
        raise BadInput(path, f"args must be an object, got {type(args).__name__}", where=f"{where}.args")
    name, ts, dur = ev.get("name", ""), ev.get("ts"), ev.get("dur")
    try:
        if not (0 <= dur <= MAX_DURATION_US and -MAX_TS_US < ts < MAX_TS_US):  # type: ignore[operator]
            raise BadInput(path, f"implausible time (ts {_brief(ts)}, dur {_brief(dur)})", where=where)
    except TypeError:
        raise BadInput(path, f"ts and dur must be numbers (ts {_brief(ts)}, dur {_brief(dur)})", where=where) from None
    if type(name) is not str:
        raise BadInput(path, f"name must be a string, got {type(name).__name__}", where=where)
    pid, tid = ev.get("pid"), ev.get("tid")
    kept = Args(
        stream=args.get("stream"),
        correlation=args.get("correlation"),
        device=args.get("device"),
        dims=_raw(args.get("Input Dims")),
        grid=_raw(args.get("grid")),
        block=_raw(args.get("block")),
    )
    event = Event(
        ph="X",
        cat=cat,
        name=name,
        ts=float(ts),
        dur=float(dur),
        pid=pid if type(pid) is int else None,
        tid=tid if type(tid) in (int, str) else None,
        args=kept,
    )
    if role == GPU:
        stream, device, correlation = _gpu_ids([event])
        if _not_int64(stream[0]) or _not_int64(device[0]) or _not_int64(correlation[0]):
            raise BadInput(
                path,
                f"stream and correlation must be integers (stream {_brief(stream[0])}, correlation "
                f"{_brief(correlation[0])})",
                where=where,
            )
    elif role == RUNTIME:
        correlation = kept.correlation if kept.correlation is not None else -1
        if _not_int64(correlation):
            raise BadInput(path, f"correlation must be an integer, got {_brief(correlation)}", where=where)
    return event


def _raw(value: Any) -> msgspec.Raw:
    return msgspec.Raw() if value is None else msgspec.Raw(msgspec.json.encode(value))


def _number(value: Any) -> float | None:
    return float(value) if type(value) in (int, float) else None
