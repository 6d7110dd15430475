"""The ``host`` section of a recorder capture (docs/capture-format.md) into tables.

The flight recorder writes what the host was doing beside the samples: sampled Python
stacks (interned frames and stacks, one row per thread per tick), process and per-thread
CPU and memory, and GC pauses. The bulk becomes columns of the run (never pickled, never
JSON blobs in the run's metadata); the small rest (sampler settings, what was dropped to
stay in budget) stays in ``meta["host"]``. Checked strictly: a bad value names its place.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from workbench.errors import BadInput
from workbench.limits import MAX_ROWS, MAX_STRING_CHARS, exceeded
from workbench.vocabulary import JSON, JSONDoc

KEY = "host"
# Tables a run gets from its host section (workbench.compare.host_activity reads them).
THREADS, FRAMES, STACKS, STACK_SAMPLES, CPU, GC = (
    "host_threads",
    "host_frames",
    "host_stacks",
    "host_stack_samples",
    "host_cpu",
    "host_gc",
)
STACK_ROW = ("t", "thread", "stack")
GC_ROW = ("start", "duration_ms", "generation", "collected", "uncollectable")
MAX_FIELDS = 64


def take_host(top: JSONDoc, path: Path) -> tuple[dict[str, dict[str, np.ndarray]], JSONDoc] | None:
    """Pop ``host`` from the capture's top level; its tables and the rest for ``meta``."""
    if KEY not in top:
        return None
    host = _object(top.pop(KEY), path, KEY)
    tables: dict[str, dict[str, np.ndarray]] = {}
    meta: JSONDoc = {}
    threads = _list(host.get("threads", []), path, "host.threads")
    ids, names, native = [], [], []
    for i, item in enumerate(threads):
        where = f"host.threads[{i}]"
        t = _object(item, path, where)
        if not isinstance(t.get("id"), int) or isinstance(t.get("id"), bool) or t["id"] != i:
            raise BadInput(path, f"expected id {i} (threads are numbered in order)", where=f"{where}.id")
        names.append(_text(t.get("name", ""), path, f"{where}.name"))
        nid = t.get("native_id")
        native.append(math.nan if nid is None else _number(nid, path, f"{where}.native_id"))
        ids.append(float(i))
    tables[THREADS] = {
        "id": np.array(ids, dtype=np.float64),
        "name": np.array(names, dtype=str),
        "native_id": np.array(native, dtype=np.float64),
    }

    stacks = host.get("stacks")
    if stacks is not None:
        stacks = _object(stacks, path, "host.stacks")
        tables.update(_stacks(stacks, path, len(threads)))
        meta["stacks"] = {k: v for k, v in stacks.items() if k not in ("frames", "stacks", "rows", "fields")}
    for name, table, expected in (("cpu", CPU, None), ("gc", GC, GC_ROW)):
        section = host.get(name)
        if section is None:
            continue
        section = _object(section, path, f"host.{name}")
        fields = section.get("fields", [])
        rows = section.get("rows", [])
        if rows or fields:
            tables[table] = _columns(fields, rows, path, f"host.{name}", expected)
        meta[name] = {k: v for k, v in section.items() if k not in ("rows", "fields")}
    return tables, meta


def _stacks(stacks: JSONDoc, path: Path, n_threads: int) -> dict[str, dict[str, np.ndarray]]:
    frames = _list(stacks.get("frames", []), path, "host.stacks.frames")
    functions, files, lines = [], [], []
    for i, f in enumerate(frames):
        where = f"host.stacks.frames[{i}]"
        if not isinstance(f, list) or len(f) != 3:
            raise BadInput(path, "expected [function, file, first line]", where=where)
        functions.append(_text(f[0], path, f"{where}[0]"))
        files.append(_text(f[1], path, f"{where}[1]"))
        lines.append(_number(f[2], path, f"{where}[2]"))
    table = _list(stacks.get("stacks", []), path, "host.stacks.stacks")
    stack_col, depth_col, frame_col = [], [], []
    for s, item in enumerate(table):
        where = f"host.stacks.stacks[{s}]"
        frame_ids = _list(item, path, where)
        for depth, fid in enumerate(frame_ids):
            if isinstance(fid, bool) or not isinstance(fid, int) or not 0 <= fid < len(frames):
                raise BadInput(path, f"expected a frame id below {len(frames)}", where=f"{where}[{depth}]")
            stack_col.append(s)
            depth_col.append(depth)
            frame_col.append(fid)
    rows = stacks.get("rows", [])
    fields = stacks.get("fields", [])
    if not rows and not fields and not frames:
        return {}  # sampling was off: nothing to keep but the status (in meta)
    samples = _columns(fields, rows, path, "host.stacks", STACK_ROW)
    for name, bound in (("thread", n_threads), ("stack", len(table))):
        col = samples[name]
        bad = np.flatnonzero(~((col >= 0) & (col < bound) & (col == np.floor(col))))
        if bad.size:
            raise BadInput(path, f"expected a {name} id below {bound}", where=f"host.stacks.rows[{int(bad[0])}]")
    return {
        FRAMES: {
            "function": np.array(functions, dtype=str),
            "file": np.array(files, dtype=str),
            "line": np.array(lines, dtype=np.float64),
        },
        STACKS: {
            "stack": np.array(stack_col, dtype=np.float64),
            "depth": np.array(depth_col, dtype=np.float64),
            "frame": np.array(frame_col, dtype=np.float64),
        },
        STACK_SAMPLES: samples,
    }


def _columns(
    fields: JSON, rows: JSON, path: Path, where: str, expected: tuple[str, ...] | None
) -> dict[str, np.ndarray]:
    """Rows of numbers (null: unknown) under ``fields`` as float64 columns."""
    names = _field_names(fields, path, f"{where}.fields", expected)
    rows = _list(rows, path, f"{where}.rows")
    if len(rows) > MAX_ROWS:
        raise exceeded(path, "more rows than", f"{MAX_ROWS:,}", where=f"{where}.rows")
    width = len(names)
    checked: list[list[JSON]] = []
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != width:
            raise BadInput(path, f"expected an array of {width} values", where=f"{where}.rows[{i}]")
        checked.append(row)
    try:
        values = np.array(rows, dtype=np.float64).reshape(len(rows), width)  # null -> NaN (unknown)
    except (TypeError, ValueError):
        raise _not_numbers(checked, path, where) from None
    if np.isinf(values).any() or (np.abs(np.nan_to_num(values)) >= 2**53).any():
        raise BadInput(path, "a number out of range", where=f"{where}.rows")
    return {name: np.ascontiguousarray(values[:, j]) for j, name in enumerate(names)}


def _field_names(fields: JSON, path: Path, where: str, expected: tuple[str, ...] | None) -> list[str]:
    """1 to MAX_FIELDS distinct identifiers, starting with ``expected`` when given."""
    fields = _list(fields, path, where)
    if (
        not fields
        or len(fields) > MAX_FIELDS
        or len(set(fields)) != len(fields)
        or not all(isinstance(f, str) and f.isidentifier() for f in fields)
    ):
        raise BadInput(path, f"expected 1 to {MAX_FIELDS} distinct field names", where=where)
    names = [f for f in fields if isinstance(f, str)]  # every one, as just checked
    if expected is not None and tuple(names[: len(expected)]) != expected:
        raise BadInput(path, f"expected the fields {list(expected)}", where=where)
    return names


def _not_numbers(rows: list[list[JSON]], path: Path, where: str) -> BadInput:
    """The first value of ``rows`` that is neither a number nor null, as bad input at its place."""
    for i, row in enumerate(rows):
        for j, v in enumerate(row):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                return BadInput(path, "expected a number or null", where=f"{where}.rows[{i}][{j}]")
    return BadInput(path, "expected numbers", where=f"{where}.rows")


def _object(value: JSON, path: Path, where: str) -> JSONDoc:
    if not isinstance(value, dict):
        raise BadInput(path, "expected an object", where=where)
    return value


def _list(value: JSON, path: Path, where: str) -> list[JSON]:
    if not isinstance(value, list):
        raise BadInput(path, "expected an array", where=where)
    return value


def _text(value: JSON, path: Path, where: str) -> str:
    if not isinstance(value, str):
        raise BadInput(path, "expected a string", where=where)
    if len(value) > MAX_STRING_CHARS:
        raise exceeded(path, "a string longer than", f"{MAX_STRING_CHARS:,}", where=where)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadInput(path, "string contains a lone surrogate", where=where) from None
    return value


def _number(value: JSON, path: Path, where: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or abs(value) >= 2**53
    ):
        raise BadInput(path, "expected a finite number", where=where)
    return float(value)
