"""PyTorch profiler (Kineto) Chrome-trace JSON, ``.json`` or ``.json.gz``, one file per rank.

All three format generations are read: the 2021 profiler's category names
(``Operator``, ``Kernel``, ``Runtime``; ``tid`` like ``"stream 7"``), absolute
integer microseconds (2022 to early 2024), and float microseconds relative to the
top-level ``baseTimeNanoseconds`` (mid 2024 on).

One reader (``workbench.formats.json_object``): the top-level members one at a time
(``distributedInfo``, ``deviceProperties``, ``baseTimeNanoseconds``, before or after
the events), and the ``traceEvents`` array in runs of whole events a few MiB each,
decoded by msgspec into Structs of the fields wb keeps and taken a column at a time
(``_kineto_events``). Files are grouped into jobs by directory (one job = the rank
files of one directory); the ranks and world size come from ``distributedInfo``, and
two files claiming one rank are an error, never an overwrite.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from store.records import RunRecord
from workbench.errors import BadInput
from workbench.formats.json_object import Items, JsonObject
from workbench.importers import _kineto_events as events
from workbench.importers.base import READ_ERRORS, Importer, ImportOptions, Probe, open_binary
from workbench.training import model as m
from workbench.training.job import WARMUP_STEPS, build_job
from workbench.training.parallel import JOBS, read_each

RUN_BYTES = 4 << 20  # bytes of events per msgspec run


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


def read_rank(path: Path, options: ImportOptions | None = None) -> m.RankTrace:
    """Parse one rank's trace file; raises BadInput naming the file and place."""
    options = options or ImportOptions()
    progress = options.progress
    size = path.stat().st_size if path.exists() else 0
    on_progress = (lambda n: progress(path, n, size)) if progress else None
    columns = events.EventColumns(path)
    top: dict[str, object] = {}
    seen_events = False
    try:
        with open_binary(path, on_progress) as binary:
            doc = JsonObject(binary, str(path), streamed="traceEvents", run_bytes=RUN_BYTES)
            for key, value in doc.members():
                if key != "traceEvents":
                    top[key] = value
                    continue
                if not isinstance(value, Items):
                    raise BadInput(
                        path, f"traceEvents must be an array of events, got {_json_type(value)}", where="traceEvents"
                    )
                seen_events = True
                for decoded, run in value.runs(lambda run: events.decode(run.data, path, run.first)):
                    columns.add(decoded, run.first)
    except BadInput:
        raise
    except READ_ERRORS as exc:
        raise BadInput(path, f"corrupt or truncated file ({_short(exc) or type(exc).__name__})") from None
    if not seen_events:
        raise BadInput(path, "not a trace: no traceEvents array")
    return _finish(path, columns, top)


def _json_type(value: Any) -> str:
    return {str: "a string", bool: "a boolean", type(None): "null", dict: "an object"}.get(type(value), "a number")


def _short(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", " ")
    return text[:200]


def _finish(path: Path, columns: events.EventColumns, top: Mapping[str, object]) -> m.RankTrace:
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
    gpu, runtime, ops, steps = (columns.table(t) for t in ("gpu", "runtime", "ops", "steps"))
    trace = m.RankTrace(source=path, rank=rank, world_size=world, names=columns.names.values)
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
    trace.shapes = columns.shapes.values
    memory = columns.table("memory")
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
    loader, checkpoint = columns.table("loader"), columns.table("checkpoint")
    trace.loader = _interval(loader, base_ns)
    trace.checkpoint = _interval(checkpoint, base_ns)
    trace.has_loader_annotations = len(loader["ts"]) > 0
    trace.has_checkpoint_annotations = len(checkpoint["ts"]) > 0
    trace.has_host_api = len(runtime["ts"]) > 0
    trace.devices = _devices(path, top.get("deviceProperties"), gpu["device"])
    trace.framework = "PyTorch" if columns.saw_aten else None
    trace.clock = "epoch"
    trace.meta = _meta(top, base is not None)
    return trace


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
