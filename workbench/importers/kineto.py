"""PyTorch profiler (Kineto) Chrome-trace JSON, ``.json`` or ``.json.gz``, one file per rank.

All three format generations are read: the 2021 profiler's category names
(``Operator``, ``Kernel``, ``Runtime``; ``tid`` like ``"stream 7"``), absolute
integer microseconds (2022 to early 2024), and float microseconds relative to the
top-level ``baseTimeNanoseconds`` (mid 2024 on).

The event array is streamed with ijson (yajl2_c) and only what the training
breakdown needs is kept, as compact columns; the small top-level members before and
after the array (``distributedInfo``, ``deviceProperties``, ``baseTimeNanoseconds``)
are decoded from the bytes that streamed past, with a real JSON parser. Files are
grouped into jobs by directory (one job = the rank files of one directory); the
ranks and world size come from ``distributedInfo``, and two files claiming one rank
are an error, never an overwrite.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from store.records import RunRecord
from workbench.errors import BadInput
from workbench.importers.base import READ_ERRORS, Importer, ImportOptions, Probe, open_binary
from workbench.limits import MAX_DEPTH, exceeded
from workbench.training import model as m
from workbench.training.job import WARMUP_STEPS, build_job
from workbench.training.json_chunks import ArrayChunks, ScanError
from workbench.training.parallel import JOBS, read_each

TYPED = True  # decode runs of events with msgspec (False: the ijson stream only)
RUN_BYTES = 4 << 20  # bytes of events per msgspec run
HEAD_CAP = 8 << 20  # bytes kept from the start of the document (the header members)
TAIL_CAP = 1 << 20  # bytes kept from the end (the trailer members)
MAX_DURATION_US = 7 * 24 * 3600 * 1e6  # an event longer than a week is corruption
MAX_TS_US = 1e17  # microseconds; beyond year 5000
_BUF = 256 * 1024

# Category -> role. Legacy 2021 names first, then the current ActivityType names.
_GPU, _RUNTIME, _CPU = 1, 2, 3
_ROLES: dict[str, int] = {
    "Kernel": _GPU,
    "Memcpy": _GPU,
    "Memset": _GPU,
    "Runtime": _RUNTIME,
    "Operator": _CPU,
    "kernel": _GPU,
    "gpu_memcpy": _GPU,
    "gpu_memset": _GPU,
    "cuda_runtime": _RUNTIME,
    "cuda_driver": _RUNTIME,
    "cpu_op": _CPU,
    "user_annotation": _CPU,
}
_GPU_BASE_KIND = {
    "Kernel": m.KERNEL,
    "kernel": m.KERNEL,
    "Memcpy": m.MEMCPY,
    "gpu_memcpy": m.MEMCPY,
    "Memset": m.MEMSET,
    "gpu_memset": m.MEMSET,
}
_STREAM_TID = re.compile(r"(\d+)")


class KinetoImporter(Importer):
    name = "kineto"
    version = "1"
    description = "PyTorch profiler (Kineto) trace, .json or .json.gz, one file per rank"
    priority = 40
    options = (WARMUP_STEPS, JOBS)

    def sniff(self, probe: Probe) -> bool:
        text = probe.stripped
        if not text.startswith("{"):
            return False
        head = probe.text
        if '"traceEvents"' not in head:
            return False
        # A Kineto trace says so in its header or in its first events.
        markers = (
            '"schemaVersion"',
            '"deviceProperties"',
            '"distributedInfo"',
            '"cpu_op"',
            '"user_annotation"',
            '"cuda_runtime"',
            '"kernel"',
            '"Operator"',
            '"ProfilerStep#',
            '"ac2g"',
            '"python_function"',
        )
        return any(marker in head for marker in markers)

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        jobs: dict[Path, list[Path]] = {}
        for path in paths:
            jobs.setdefault(path.parent, []).append(path)
        for _directory, files in sorted(jobs.items()):
            ranks = read_each(read_rank, files, options)
            yield build_job(ranks, options, format_name="Kineto trace")


IMPORTER = KinetoImporter()


class _Tap:
    """A file-like reader that remembers the first and the last bytes that passed through."""

    def __init__(self, binary: Any) -> None:
        self._binary = binary
        self.head = bytearray()
        self._tail: list[bytes] = []
        self._tail_len = 0
        self.total = 0

    def read(self, n: int = -1) -> bytes:
        data = self._binary.read(n)
        if data:
            self.total += len(data)
            if len(self.head) < HEAD_CAP:
                self.head += data[: HEAD_CAP - len(self.head)]
            self._tail.append(data)
            self._tail_len += len(data)
            while self._tail_len - len(self._tail[0]) >= TAIL_CAP:
                self._tail_len -= len(self._tail.pop(0))
        return data

    @property
    def tail(self) -> bytes:
        return b"".join(self._tail)


def read_rank(path: Path, options: ImportOptions | None = None) -> m.RankTrace:
    """Parse one rank's trace file; raises BadInput naming the file and place.

    The event array is cut into runs of whole events a few MiB at a time
    (``workbench.training.json_chunks``) and each run is decoded by msgspec into
    structs holding only the fields wb keeps: fast, and memory bounded by one run.
    Anything that path refuses is read again with the ijson stream, which either
    accepts it or names the fault and its place.
    """
    options = options or ImportOptions()
    progress = options.progress
    size = path.stat().st_size if path.exists() else 0
    on_progress = (lambda n: progress(path, n, size)) if progress else None
    if TYPED:
        try:
            trace = _read_typed(path, on_progress)
        except RecursionError:  # msgspec on absurd nesting: the stream reader names the place and the limit
            trace = None
        if trace is not None:
            return trace
    return _read_streamed(path, None if TYPED else on_progress)


def _read_typed(path: Path, on_progress: Any) -> m.RankTrace | None:
    decoder = _events_decoder()
    binary = open_binary(path, on_progress)
    splitter = ArrayChunks(binary, b"traceEvents", chunk=RUN_BYTES, head_cap=HEAD_CAP, tail_cap=TAIL_CAP)
    sink = _EventSink(path)
    try:
        for run in splitter.chunks():
            sink.consume_structs(decoder.decode(run))
    except (ScanError, msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
        return None  # the stream reader says what and where (msgspec raises UnicodeDecodeError for bad UTF-8)
    except READ_ERRORS as exc:
        raise BadInput(
            path, f"corrupt or truncated file ({_short(exc) or type(exc).__name__})", where=f"traceEvents[{sink.index}]"
        ) from None
    finally:
        binary.close()
    found = _header(splitter.header + b'"traceEvents"')
    trailer = _trailer(b"]" + splitter.trailer)
    if found is None or trailer is None or found[0].keys() & trailer.keys():
        return None
    return sink.finish({**found[0], **trailer})


@cache
def _events_decoder() -> Any:
    """A msgspec decoder for a run of events, keeping only the fields wb uses."""
    # Built with defstruct: this module's postponed annotations cannot name local classes.
    # Raw: shapes are kept as the trace wrote them (compacted), never decoded into lists.
    args = msgspec.defstruct(
        "KinetoArgs",
        [
            ("stream", int | None, None),
            ("correlation", int | None, None),
            ("device", int | None, None),
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
        gc=False,
    )
    event = msgspec.defstruct(
        "KinetoEvent",
        [
            ("ph", str, ""),
            ("cat", str, ""),
            ("name", str, ""),
            ("ts", float | None, None),
            ("dur", float | None, None),
            ("pid", int | str | None, None),
            ("tid", int | str | None, None),
            ("args", args | None, None),
        ],
        gc=False,
    )
    return msgspec.json.Decoder(list[event])


def _read_streamed(path: Path, on_progress: Any) -> m.RankTrace:
    import ijson  # lazy: only the streaming fallback reads with it

    binary = open_binary(path, on_progress)
    tap = _Tap(binary)
    parser = _EventSink(path)
    try:
        try:
            parser.consume(_trace_events(path, tap))
        except ijson.IncompleteJSONError as exc:
            raise BadInput(
                path, f"truncated or invalid JSON ({_short(exc)})", where=f"traceEvents[{parser.index}]"
            ) from None
        except ijson.JSONError as exc:
            raise BadInput(path, f"invalid JSON ({_short(exc)})", where=f"traceEvents[{parser.index}]") from None
        except UnicodeDecodeError as exc:
            raise BadInput(path, f"is not UTF-8 text ({exc.reason})", where=f"traceEvents[{parser.index}]") from None
        except READ_ERRORS as exc:
            raise BadInput(
                path,
                f"corrupt or truncated file ({_short(exc) or type(exc).__name__})",
                where=f"traceEvents[{parser.index}]",
            ) from None
    finally:
        binary.close()
    if parser.index == 0 and b'"traceEvents"' not in tap.head:
        raise BadInput(path, "not a trace: no traceEvents array")
    top = _top_level(path, tap)
    return parser.finish(top)


def _trace_events(path: Path, stream: Any) -> Iterator[Any]:
    """The items of the top-level ``traceEvents`` array, built from ijson's flat event stream.

    Not ``ijson.items``: its prefixes grow with the nesting, so a few kilobytes of ``[[[[``
    cost gigabytes. Here nesting is counted and refused past the limit, and a
    ``traceEvents`` that is not an array is named as such.
    """
    import ijson  # lazy: only the streaming fallback reads with it

    depth = 0  # containers open, the document's own object included
    member: str | None = None  # the top-level member whose value comes next
    in_events = False
    stack: list[Any] = []  # the event being built, outermost first
    key: Any = None
    n = 0
    for event, value in ijson.basic_parse(stream, use_float=True, buf_size=_BUF):
        if event == "map_key":
            key = value
            if depth == 1:
                member = value
            continue
        if event == "start_map" or event == "start_array":
            depth += 1
            if depth > MAX_DEPTH + 2:
                raise exceeded(
                    path,
                    "nested deeper than",
                    f"{MAX_DEPTH} levels",
                    where=f"traceEvents[{n}]" if in_events else member,
                )
            if depth == 2 and member == "traceEvents" and not in_events:
                if event != "start_array":
                    raise BadInput(path, "traceEvents must be an array of events, got an object", where="traceEvents")
                in_events = True
                continue
            if in_events:
                container: Any = {} if event == "start_map" else []
                if stack:
                    parent = stack[-1]
                    if type(parent) is dict:
                        parent[key] = container
                    else:
                        parent.append(container)
                stack.append(container)
            continue
        if event == "end_map" or event == "end_array":
            depth -= 1
            if in_events:
                if depth == 1:
                    in_events = False  # the end of the array
                else:
                    item = stack.pop()
                    if not stack:
                        n += 1
                        yield item
            continue
        # a scalar
        if depth == 1 and member == "traceEvents" and not in_events:
            raise BadInput(
                path, f"traceEvents must be an array of events, got {_json_type(value)}", where="traceEvents"
            )
        if in_events:
            if stack:
                parent = stack[-1]
                if type(parent) is dict:
                    parent[key] = value
                else:
                    parent.append(value)
            else:
                n += 1
                yield value


def _json_type(value: Any) -> str:
    return {str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")


def _short(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", " ")
    return text[:200]


# -- top-level members ---------------------------------------------------------------------


def _top_level(path: Path, tap: _Tap) -> dict[str, object]:
    """The document's members other than ``traceEvents``, from the bytes that streamed past."""
    head = bytes(tap.head)
    found = _header(head)
    if found is None:
        raise BadInput(path, "cannot read the members before traceEvents (header larger than 8 MiB or not an object)")
    header, key_end = found
    tail = tap.tail
    # Only bytes after the "traceEvents" key can hold the array's end.
    trailer = _trailer(tail[max(0, key_end - (tap.total - len(tail))) :])
    if trailer is None:
        raise BadInput(path, "cannot read the members after traceEvents (trailer larger than 1 MiB)")
    for key in header.keys() & trailer.keys():
        raise BadInput(path, f"duplicate top-level key {key!r}")
    return {**header, **trailer}


def _header(head: bytes) -> tuple[dict[str, object], int] | None:
    """The members before ``"traceEvents"``, and the byte offset just after that key."""
    start = 0
    while True:
        pos = head.find(b'"traceEvents"', start)
        if pos < 0:
            return None
        text = head[:pos].rstrip()
        if text.endswith(b","):
            text = text[:-1]
        try:
            obj = json.loads(text.decode("utf-8-sig") + "}")
        except (ValueError, UnicodeDecodeError):
            start = pos + 1
            continue
        return (obj, pos + len(b'"traceEvents"')) if isinstance(obj, dict) else None


def _trailer(tail: bytes) -> dict[str, object] | None:
    """Members after the array: the first ``]`` followed by a valid run of members to the end.

    A ``]`` inside the last events leaves unbalanced closers behind it, so its members
    fail to decode within a few characters; the first candidate that decodes to the end
    of the document is the array's own end.
    """
    text = tail.decode("utf-8", errors="replace")
    for found in _ARRAY_END.finditer(text):
        members = _members(text, found.end() - 1)
        if members is not None:
            return members
    return None


_ARRAY_END = re.compile(r"\][ \t\r\n]*[,}]")
_WS_RUN = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()


def _members(text: str, pos: int) -> dict[str, object] | None:
    """Decode ``, "key": value ... }`` from ``pos`` to the end of ``text`` (None if it is not that)."""
    out: dict[str, object] = {}
    try:
        while text[pos] == ",":
            pos = _WS_RUN.match(text, pos + 1).end()  # type: ignore[union-attr]
            key, pos = _DECODER.raw_decode(text, pos)
            pos = _WS_RUN.match(text, pos).end()  # type: ignore[union-attr]
            if not isinstance(key, str) or text[pos] != ":":
                return None
            pos = _WS_RUN.match(text, pos + 1).end()  # type: ignore[union-attr]
            value, pos = _DECODER.raw_decode(text, pos)
            if key in out:
                return None
            out[key] = value
            pos = _WS_RUN.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos] != "}" or text[pos + 1 :].strip():
            return None
    except (ValueError, IndexError):
        return None
    return out


# -- events ----------------------------------------------------------------------------------


class _EventSink:
    """Sorts streamed events into compact columns (microsecond floats until ``finish``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.index = 0
        self.names = m.Names()
        self.gpu = m.Columns(ts="d", dur="d", kind="b", stream="q", correlation="q", name="l", device="q", shape="l")
        self.runtime = m.Columns(ts="d", dur="d", correlation="q", name="l")
        self.ops = m.Columns(ts="d", dur="d", name="l", shape="l")
        self.memory = m.Columns(ts="d", allocated="d", reserved="d", nbytes="d", oom="b")
        self.shapes = m.Names()
        self.raw_shapes: dict[tuple[int, bytes, bytes, bytes], str | None] = {}
        self.steps = m.Columns(number="q", ts="d", dur="d")
        self.loader = m.Columns(ts="d", dur="d")
        self.checkpoint = m.Columns(ts="d", dur="d")
        self.saw_loader = False
        self.saw_checkpoint = False
        self.saw_runtime = False
        self.saw_aten = False
        self.gpu_cache: dict[str, tuple[int, int]] = {}
        self.cpu_cache: dict[str, tuple[int, int, int | None]] = {}
        self.rt_cache: dict[str, int] = {}

    def consume(self, events: Iterator[Any]) -> None:
        i = self.index
        try:
            for i, ev in enumerate(events, 1):  # the count names the place of a fault
                if type(ev) is not dict:
                    raise BadInput(
                        self.path, f"expected an event object, got {type(ev).__name__}", where=f"traceEvents[{i - 1}]"
                    )
                ph = ev.get("ph")
                if ph == "X":
                    cat = ev.get("cat")
                    if cat is not None and type(cat) is not str:  # {} or [] cannot name a category (nor be looked up)
                        raise BadInput(
                            self.path,
                            f"cat must be a string, got {type(cat).__name__}",
                            where=f"traceEvents[{i - 1}].cat",
                        )
                    role = _ROLES.get(cat)  # type: ignore[arg-type]
                    if role is not None:
                        args = ev.get("args") or {}
                        if type(args) is not dict:
                            raise BadInput(
                                self.path,
                                f"args must be an object, got {type(args).__name__}",
                                where=f"traceEvents[{i - 1}].args",
                            )
                        self._complete(
                            i - 1,
                            role,
                            cat,
                            ev.get("name", ""),
                            ev.get("ts"),
                            ev.get("dur"),
                            ev.get("pid"),
                            ev.get("tid"),
                            args.get("stream") if role != _CPU else None,
                            args.get("correlation", -1) if role != _CPU else -1,
                            args.get("device") if role != _CPU else None,
                            _dict_shape(role, args),
                        )
                elif ph == "i" and ev.get("name") in _MEMORY_EVENTS and type(ev.get("args")) is dict:
                    a = ev["args"]
                    self._memory(
                        i - 1,
                        ev["name"],
                        ev.get("ts"),
                        a.get("Device Type"),
                        a.get("Total Allocated"),
                        a.get("Total Reserved"),
                        a.get("Bytes"),
                    )
        finally:
            self.index = i
        self._seen()

    def consume_structs(self, events: list[Any]) -> None:
        """The same, for a run of events decoded by msgspec into structs."""
        for i, ev in enumerate(events, self.index):  # i names the place of a fault
            if ev.ph == "X":
                role = _ROLES.get(ev.cat)
                if role is not None:
                    args = ev.args
                    if args is None:
                        self._complete(i, role, ev.cat, ev.name, ev.ts, ev.dur, ev.pid, ev.tid, None, -1, None)
                    else:
                        shape = None
                        if len(args.dims) or len(args.grid):
                            raw = (role, bytes(args.dims), bytes(args.grid), bytes(args.block))
                            shape = self.raw_shapes.get(raw, _MISSING)
                            if shape is _MISSING:  # the same raw shape recurs every step: its key is built once
                                shape = self.raw_shapes[raw] = _raw_shape(role, args)
                        self._complete(
                            i,
                            role,
                            ev.cat,
                            ev.name,
                            ev.ts,
                            ev.dur,
                            ev.pid,
                            ev.tid,
                            args.stream,
                            args.correlation,
                            args.device,
                            shape,
                        )
            elif ev.ph == "i" and ev.name in _MEMORY_EVENTS and ev.args is not None:
                a = ev.args
                self._memory(i, ev.name, ev.ts, a.device_type, a.allocated, a.reserved, a.nbytes)
        self.index += len(events)
        self._seen()

    def _shape_id(self, shape: str) -> int:
        return self.shapes.id(shape)

    def _memory(
        self, index: int, name: str, ts: Any, device_type: Any, allocated: Any, reserved: Any, nbytes: Any
    ) -> None:
        """A caching-allocator instant event on a device (host allocations are not kept)."""
        if device_type == 0 or type(ts) not in (int, float) or not -MAX_TS_US < ts < MAX_TS_US:
            return
        mem = self.memory
        mem.ts.append(ts)
        mem.allocated.append(_number_or_nan(allocated))
        mem.reserved.append(_number_or_nan(reserved))
        mem.nbytes.append(_number_or_nan(nbytes))
        mem.oom.append(1 if name == "[OutOfMemory]" else 0)

    def _seen(self) -> None:
        self.saw_loader = len(self.loader.ts) > 0
        self.saw_checkpoint = len(self.checkpoint.ts) > 0
        self.saw_runtime = len(self.runtime.ts) > 0

    def _complete(
        self,
        index: int,
        role: int,
        cat: str,
        name: Any,
        ts: Any,
        dur: Any,
        pid: Any,
        tid: Any,
        stream: Any,
        corr: Any,
        device: Any,
        shape: str | None = None,
    ) -> None:
        """One complete ("X") event of a kept category; ``shape``: its recorded input shape
        (CPU operators) or launch configuration (kernels), when the trace has them."""
        try:
            if not (0 <= dur <= MAX_DURATION_US and -MAX_TS_US < ts < MAX_TS_US):
                raise BadInput(
                    self.path, f"implausible time (ts {_brief(ts)}, dur {_brief(dur)})", where=f"traceEvents[{index}]"
                )
        except TypeError:
            raise BadInput(
                self.path,
                f"ts and dur must be numbers (ts {_brief(ts)}, dur {_brief(dur)})",
                where=f"traceEvents[{index}]",
            ) from None
        if type(name) is not str:
            raise BadInput(
                self.path, f"name must be a string, got {type(name).__name__}", where=f"traceEvents[{index}]"
            )
        if role == _GPU:
            cached = self.gpu_cache.get(name)
            if cached is None:
                kind = _GPU_BASE_KIND[cat]
                if kind == m.KERNEL and m.is_communication_kernel(name):
                    kind = m.COLLECTIVE
                cached = self.gpu_cache[name] = (self.names.id(name), kind)
            if stream is None:
                stream = _stream_of(tid)
            if device is None:
                device = pid
            gpu = self.gpu
            try:
                gpu.stream.append(stream)
                gpu.device.append(device if type(device) is int else -1)
                gpu.correlation.append(corr if corr is not None else -1)
            except (TypeError, OverflowError):
                raise BadInput(
                    self.path,
                    f"stream and correlation must be integers (stream {_brief(stream)}, correlation {_brief(corr)})",
                    where=f"traceEvents[{index}]",
                ) from None
            gpu.ts.append(ts)
            gpu.dur.append(dur)
            gpu.kind.append(cached[1])
            gpu.name.append(cached[0])
            gpu.shape.append(-1 if shape is None else self._shape_id(shape))
        elif role == _RUNTIME:
            rt = self.runtime
            try:
                rt.correlation.append(corr if corr is not None else -1)
            except (TypeError, OverflowError):
                raise BadInput(
                    self.path, f"correlation must be an integer, got {_brief(corr)}", where=f"traceEvents[{index}]"
                ) from None
            name_id = self.rt_cache.get(name)
            if name_id is None:
                name_id = self.rt_cache[name] = self.names.id(name)
            rt.ts.append(ts)
            rt.dur.append(dur)
            rt.name.append(name_id)
        else:
            cached_cpu = self.cpu_cache.get(name)
            if cached_cpu is None:
                cached_cpu = self.cpu_cache[name] = (self.names.id(name), _cpu_class(name), m.step_number(name))
                if name.startswith("aten::"):
                    self.saw_aten = True
            name_id, cls, step = cached_cpu
            if step is not None:
                self.steps.number.append(step)
                self.steps.ts.append(ts)
                self.steps.dur.append(dur)
                return
            ops = self.ops
            ops.ts.append(ts)
            ops.dur.append(dur)
            ops.name.append(name_id)
            ops.shape.append(-1 if shape is None else self._shape_id(shape))
            if cls == 1:
                self.loader.ts.append(ts)
                self.loader.dur.append(dur)
            elif cls == 2:
                self.checkpoint.ts.append(ts)
                self.checkpoint.dur.append(dur)

    def finish(self, top: Mapping[str, object]) -> m.RankTrace:
        path = self.path
        base_ns = 0
        base = top.get("baseTimeNanoseconds")
        if base is not None:
            if type(base) is not int or base < 0:
                raise BadInput(
                    path,
                    f"baseTimeNanoseconds must be a non-negative integer, got {_brief(base)}",
                    where="baseTimeNanoseconds",
                )
            base_ns = base
        rank, world = _distributed(path, top.get("distributedInfo"))
        gpu = self.gpu.finish()
        runtime = self.runtime.finish()
        ops = self.ops.finish()
        steps = self.steps.finish()
        trace = m.RankTrace(source=path, rank=rank, world_size=world, names=self.names.values)
        trace.gpu = {
            "start": _ns(gpu["ts"], base_ns),
            "kind": gpu["kind"].astype(np.int8),
            "stream": gpu["stream"],
            "correlation": gpu["correlation"],
            "name": gpu["name"].astype(np.int32),
            "device": gpu["device"],
        }
        trace.gpu["end"] = trace.gpu["start"] + np.rint(gpu["dur"] * 1000).astype(np.int64)
        trace.runtime = _interval(runtime, base_ns)
        trace.runtime.update(correlation=runtime["correlation"], name=runtime["name"].astype(np.int32))
        trace.ops = _interval(ops, base_ns)
        trace.ops["name"] = ops["name"].astype(np.int32)
        trace.ops["shape"] = ops["shape"].astype(np.int32)
        trace.gpu["shape"] = gpu["shape"].astype(np.int32)
        trace.shapes = self.shapes.values
        memory = self.memory.finish()
        if len(memory["ts"]):
            trace.memory = {
                "time": _ns(memory["ts"], base_ns),
                "allocated": memory["allocated"],
                "reserved": memory["reserved"],
                "bytes": memory["nbytes"],
                "oom": memory["oom"].astype(bool),
            }
        trace.steps = _interval(steps, base_ns)
        trace.steps["number"] = steps["number"]
        trace.loader = _interval(self.loader.finish(), base_ns)
        trace.checkpoint = _interval(self.checkpoint.finish(), base_ns)
        trace.has_loader_annotations = self.saw_loader
        trace.has_checkpoint_annotations = self.saw_checkpoint
        trace.has_host_api = self.saw_runtime
        trace.devices = _devices(path, top.get("deviceProperties"), gpu["device"])
        trace.framework = "PyTorch" if self.saw_aten else None
        trace.clock = "epoch"
        trace.meta = _meta(top, base is not None)
        return trace


_MISSING: Any = object()
_MEMORY_EVENTS = frozenset(("[memory]", "[OutOfMemory]"))
_NO_SPACE = re.compile(rb"\s+")


def _number_or_nan(value: Any) -> float:
    return float(value) if type(value) in (int, float) else float("nan")


def _raw_shape(role: int, args: Any) -> str | None:
    """The shape key from msgspec's raw members: input dims for an operator (not the types:
    the summary that travels must stay small),
    grid and block for a kernel; whitespace removed so that writers' spacing does not count."""
    if role == _CPU:
        return _tensor_dims(_NO_SPACE.sub(b"", bytes(args.dims)).decode("utf-8", "replace")) if len(args.dims) else None
    if role == _GPU and len(args.grid):
        block = _NO_SPACE.sub(b"", bytes(args.block)).decode("utf-8", "replace") if len(args.block) else "?"
        return f"grid {_NO_SPACE.sub(b'', bytes(args.grid)).decode('utf-8', 'replace')} block {block}"
    return None


MAX_SHAPE_KEY = 72  # characters of a shape key
_SCALAR_DIMS = re.compile(r"(?<=\[),?\[\](?=[,\]])|,\[\]")


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


def _dict_shape(role: int, args: Mapping[str, Any]) -> str | None:
    """The same key from a decoded event (the stream reader's path)."""

    def compact(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    if role == _CPU:
        dims = args.get("Input Dims")
        return None if dims is None else _tensor_dims(compact(dims))
    if role == _GPU and args.get("grid") is not None:
        block = args.get("block")
        return f"grid {compact(args['grid'])} block {compact(block) if block is not None else '?'}"
    return None


def _cpu_class(name: str) -> int:
    if m.is_loader_wait(name):
        return 1
    if m.is_checkpoint(name):
        return 2
    return 0


def _stream_of(tid: Any) -> int:
    if type(tid) is int:
        return tid
    if isinstance(tid, str):  # 2021 traces: "stream 7"
        found = _STREAM_TID.search(tid)
        if found:
            return int(found.group(1))
    return -1


def _ns(ts_us: np.ndarray, base_ns: int) -> np.ndarray:
    """Microsecond floats to int64 nanoseconds, exact for integer microseconds."""
    whole = np.floor(ts_us)
    return whole.astype(np.int64) * 1000 + np.rint((ts_us - whole) * 1000).astype(np.int64) + base_ns


def _interval(cols: dict[str, np.ndarray], base_ns: int) -> dict[str, np.ndarray]:
    start = _ns(cols["ts"], base_ns)
    return {"start": start, "end": start + np.rint(cols["dur"] * 1000).astype(np.int64)}


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _distributed(path: Path, info: Any) -> tuple[int | None, int | None]:
    if info is None:
        return None, None
    if not isinstance(info, dict):
        raise BadInput(path, f"expected an object, got {type(info).__name__}", where="distributedInfo")
    values = []
    for key in ("rank", "world_size"):
        value = info.get(key)
        if value is not None and (type(value) is not int or value < 0):
            raise BadInput(
                path, f"expected a non-negative integer, got {_brief(value)}", where=f"distributedInfo.{key}"
            )
        values.append(value)
    rank, world = values
    if rank is not None and world is not None and rank >= world:
        raise BadInput(path, f"rank {rank} is not below world_size {world}", where="distributedInfo.rank")
    return rank, world


def _devices(path: Path, props: Any, used: np.ndarray) -> list[str]:
    """Names of the GPUs this rank's events ran on (all listed GPUs when none is referenced)."""
    if props is None:
        return []
    if not isinstance(props, list):
        raise BadInput(path, f"expected an array, got {type(props).__name__}", where="deviceProperties")
    by_id: dict[int, str] = {}
    for i, entry in enumerate(props):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise BadInput(path, "expected an object with a string 'name'", where=f"deviceProperties[{i}]")
        by_id[entry.get("id", i)] = entry["name"].strip()
    ids = {int(d) for d in np.unique(used)} if len(used) else set()
    named = sorted({by_id[d] for d in ids if d in by_id})
    return named or sorted(set(by_id.values()))


_META_KEYS = (
    "schemaVersion",
    "traceName",
    "displayTimeUnit",
    "cupti_version",
    "cuda_runtime_version",
    "cuda_driver_version",
    "roctracer_version",
    "hip_runtime_version",
    "hip_driver_version",
    "trace_id",
)


def _meta(top: Mapping[str, object], relative: bool) -> dict[str, object]:
    """The trace's own metadata worth keeping (its values as the trace wrote them)."""
    meta: dict[str, object] = {
        k: top[k]
        for k in _META_KEYS
        if k in top and isinstance(top[k], (str, int, float)) and not isinstance(top[k], bool)
    }
    info = top.get("distributedInfo")
    if isinstance(info, dict):
        meta["distributed"] = {
            k: info[k] for k in ("backend", "rank", "world_size", "pg_count", "nccl_version") if k in info
        }
    meta["timestamps"] = "relative float us + baseTimeNanoseconds" if relative else "absolute us"
    errors = top.get("ERROR")
    if isinstance(errors, list) and errors:
        meta["profiler_errors"] = [str(e)[:300] for e in errors[:20]]
    return meta
