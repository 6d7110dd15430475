"""A way in for a file no importer knows: a declarative map of its records onto a lens.

``wb import FILE --map MAP.toml`` (or a ``[map]`` table in the folder's ``wb.toml``, for the
files there that no importer takes) says where the records are, which field is which sample
column and in which unit, and which fields are dimensions. It is data only: no expression,
nothing executed. Every key is checked with the file and the place named::

    [map]
    lens = "inference"              # inference, training or fleet (or a plug-in lens)
    records = "results.requests"    # JSON: the dotted path of the list of records ("" : the top level)
    label = "nightly bench"         # optional
    window = "steady"               # optional: the window kind the file covers (else unknown)

    [map.columns]                   # sample column = field of a record (dotted for nested objects)
    ttft_ms = { field = "ttft", unit = "s" }
    e2e_ms = { field = "latency.total", unit = "ms" }
    output_tokens = "tokens_out"    # a bare name: the field, in the column's own unit
    ok = { field = "status", success = ["ok", 200] }

    [map.dimensions]                # dimension = a field of the file's top level, or a value
    model = { field = "config.model" }
    hardware = { value = "8xH100" }

JSON (one document, the records at ``records``), JSON Lines (one record per line) and CSV (a
header line, then one record per line; fields by column name) are read. A column's unit is its
suffix's (``_ms``, ``_s``); a field stated in another unit (``s``, ``ms``, ``us``, ``ns``,
``min``, ``h``) is converted; a fleet job time may also be ``iso8601`` text with a zone. A field
a record lacks is unknown (never zero); a value that is not a number where a number is mapped is
bad input naming the record. The lens check then applies as to any importer.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from workbench.errors import BadInput
from workbench.inputs import read_bounded
from workbench.limits import MAX_ROWS, exceeded

MAX_BYTES = 1 << 30
TABLE = "map"
KEYS = ("lens", "records", "label", "window", "columns", "dimensions", "pool")
WINDOW_KINDS = ("steady", "startup", "checkpointing", "mixed", "incident", "unknown")
# A unit's factor to the column's unit: to milliseconds for ``_ms`` columns, to seconds for ``_s``.
TO_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "min": 60.0, "h": 3600.0}
FLEET_TIMES = ("submit", "eligible", "start", "end")
POOL_KEYS = ("capacity_gpus", "wait_target_s", "window_start", "window_end")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Column:
    """One sample column: the record field it comes from, the factor to its unit, the values that
    mean success (``ok``), or ``iso8601`` text times."""

    name: str
    field: tuple[str, ...]
    scale: float = 1.0
    iso: bool = False
    success: tuple[object, ...] | None = None
    text: bool = False  # a text column (ids, job names, states): kept as text


@dataclass(frozen=True)
class RecordMap:
    source: str  # the TOML file that states it (for messages)
    lens: str
    records: tuple[str, ...]
    columns: tuple[Column, ...]
    dimensions: tuple[tuple[str, tuple[str, ...] | None, str | None], ...]  # name, field path or None, constant
    label: str | None = None
    window: str = "unknown"
    pool: tuple[tuple[str, float], ...] = field(default=())


def _bad(source: str | Path, message: str, where: str) -> BadInput:
    return BadInput(source, message, where=where)


def _path(text: object, source: str | Path, where: str) -> tuple[str, ...]:
    if not isinstance(text, str) or not text.strip():
        raise _bad(source, f"expected a field name (dotted for nested fields), found {text!r:.60}", where)
    parts = tuple(p.strip() for p in text.split("."))
    if any(not p for p in parts):
        raise _bad(source, f"{text!r:.60} is not a field name (an empty part between dots)", where)
    return parts


def _unit_scale(column: str, unit: object, source: str | Path, where: str) -> tuple[float, bool]:
    """The factor from ``unit`` to the column's own unit, and whether the field is ISO 8601 text."""
    if unit is None:
        return 1.0, False
    if column in FLEET_TIMES and unit == "iso8601":
        return 1.0, True
    if not isinstance(unit, str) or unit not in TO_SECONDS:
        raise _bad(source, f"unit {unit!r:.40} is not one of {', '.join(TO_SECONDS)} (or iso8601 for job times)", where)
    if column.endswith("_ms"):
        return TO_SECONDS[unit] * 1000.0, False
    if column.endswith("_s") or column in FLEET_TIMES:
        return TO_SECONDS[unit], False
    raise _bad(source, f"column {column!r} is not a duration (_ms, _s) or a job time: it takes no unit", where)


def _column(name: str, spec: object, lens: str, source: str | Path, where: str) -> Column:
    if not _NAME.match(name):
        raise _bad(source, f"column {name!r:.60} is not a column name (lowercase letters, digits, _)", where)
    if isinstance(spec, str):
        spec = {"field": spec}
    if not isinstance(spec, dict):
        raise _bad(source, "expected a field name or { field = ..., unit = ... }", where)
    extra = sorted(set(spec) - {"field", "unit", "success"})
    if extra:
        raise _bad(source, f"unknown key {extra[0]!r} (one of field, unit, success)", where)
    path = _path(spec.get("field"), source, f"{where}.field")
    scale, iso = _unit_scale(name, spec.get("unit"), source, f"{where}.unit")
    success = spec.get("success")
    if success is not None:
        if name != "ok" or not isinstance(success, list):
            raise _bad(source, "success = [values] applies to the ok column: the values that mean success", where)
        success = tuple(success)
    text = name in ("id", "job", "state") or (lens == "fleet" and name == "name")
    return Column(name, path, scale, iso, success, text)


def parse_map(doc: object, source: str | Path, where: str = "[map]") -> RecordMap:
    """A ``[map]`` table checked key by key (``source``: the TOML file it is in)."""
    if not isinstance(doc, dict):
        raise _bad(source, "[map] must be a table", where)
    extra = sorted(set(doc) - set(KEYS))
    if extra:
        raise _bad(source, f"unknown key {extra[0]!r} (one of {', '.join(KEYS)})", where)
    lens = doc.get("lens")
    if not isinstance(lens, str) or not lens.strip():
        raise _bad(source, "lens = NAME is required (inference, training or fleet)", f"{where}.lens")
    records = doc.get("records", "")
    if not isinstance(records, str):
        raise _bad(source, 'records is the dotted path of the list of records ("" for the top level)', where)
    columns = doc.get("columns")
    if not isinstance(columns, dict) or not columns:
        raise _bad(source, "[map.columns] must map at least one sample column to a field", f"{where}.columns")
    cols = tuple(_column(n, s, lens, source, f"{where}.columns.{n}") for n, s in columns.items())
    dims = [
        _dimension(name, spec, source, f"{where}.dimensions.{name}")
        for name, spec in (doc.get("dimensions") or {}).items()
    ]
    window = doc.get("window", "unknown")
    if window not in WINDOW_KINDS:
        raise _bad(source, f"window {window!r:.40} is not one of {', '.join(WINDOW_KINDS)}", f"{where}.window")
    pool = _pool(doc.get("pool") or {}, source, f"{where}.pool")
    label = doc.get("label")
    return RecordMap(
        source=str(source),
        lens=lens.strip(),
        records=tuple(p for p in records.split(".") if p),
        columns=cols,
        dimensions=tuple(dims),
        label=str(label) if label is not None else None,
        window=str(window),
        pool=tuple((k, float(v)) for k, v in pool.items()),
    )


def _dimension(
    name: object, spec: object, source: str | Path, at: str
) -> tuple[str, tuple[str, ...] | None, str | None]:
    """One ``[map.dimensions]`` entry: (name, the field it is read from, or the value it states)."""
    spec = {"field": spec} if isinstance(spec, str) else spec
    if not isinstance(spec, dict) or len(spec) != 1 or not ({"field", "value"} & set(spec)):
        raise _bad(source, "expected a field name, { field = ... } or { value = ... }", at)
    if "value" in spec:
        value = spec["value"]
        if isinstance(value, (dict, list)) or not str(value).strip():
            raise _bad(source, "a dimension's value is one non-empty text or number", at)
        return (str(name), None, str(value))
    return (str(name), _path(spec["field"], source, at), None)


def _pool(pool: object, source: str | Path, at: str) -> dict[str, float]:
    """``[map.pool]``: finite numbers for the pool's keys."""
    if not isinstance(pool, dict) or sorted(set(pool) - set(POOL_KEYS)):
        raise _bad(source, f"[map.pool] holds numbers for {', '.join(POOL_KEYS)}", at)
    for key, value in pool.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise _bad(source, f"{key} must be a number", f"{at}.{key}")
    return pool


def load_map(path: Path) -> RecordMap:
    """The ``[map]`` table of a TOML file (a map file, or a ``wb.toml``)."""
    data = read_bounded(path, 1 << 20, "larger than 1 MiB; not a map")
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadInput(path, "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(path, f"is not valid TOML ({exc})") from None
    if TABLE not in doc:
        raise BadInput(path, "has no [map] table (lens, records, [map.columns] ...: see docs/importers.md)")
    return parse_map(doc[TABLE], path)


# ---------------------------------------------------------------- reading records


def _get(record: object, path: tuple[str, ...]) -> object:
    for part in path:
        if not isinstance(record, dict) or part not in record:
            return None
        record = record[part]
    return record


def records(path: Path, spec: RecordMap) -> tuple[Iterator[tuple[str, Mapping[str, object]]], Mapping[str, object]]:
    """The file's records, each with its place (``records[3]``, ``line 4``), and its top-level
    object (the fields dimensions may come from; empty for JSON Lines and CSV)."""
    data = read_bounded(path, MAX_BYTES, "larger than 1 GiB; not read through a map")
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    head = text.lstrip()[:1]
    if head in ("{", "["):
        try:
            doc = json.loads(text, parse_constant=lambda _c: None)
        except json.JSONDecodeError as exc:
            if head == "{" and "\n" in text.strip():
                return _json_lines(path, text), {}
            raise BadInput(path, f"invalid JSON ({exc.msg})", where=f"line {exc.lineno}") from None
        except RecursionError:
            raise BadInput(path, "JSON nested too deep") from None
        rows = _get(doc, spec.records) if spec.records else doc
        if isinstance(rows, dict) and not spec.records:
            rows = [rows]  # one object and no records path: one record (a JSON Lines file of one line)
        where = ".".join(spec.records) or "the top level"
        if not isinstance(rows, list):
            raise BadInput(path, f"[map] records = {where!r}: not a list of records in this file")
        top = doc if isinstance(doc, dict) else {}
        return ((f"{where}[{i}]", r) for i, r in enumerate(rows)), top
    return _csv(path, text), {}


def _json_lines(path: Path, text: str) -> Iterator[tuple[str, Mapping[str, object]]]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield f"line {number}", json.loads(line, parse_constant=lambda _c: None)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise BadInput(path, f"invalid JSON Lines ({getattr(exc, 'msg', exc)})", where=f"line {number}") from None


def _csv(path: Path, text: str) -> Iterator[tuple[str, Mapping[str, object]]]:
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames:
        raise BadInput(path, "no CSV header line (the map names CSV fields by column name)", where="line 1")
    for number, row in enumerate(reader, 2):
        yield f"line {number}", {k: (None if v in ("", None) else v) for k, v in row.items() if k is not None}


def _number(value: object, column: Column, path: Path, where: str) -> float:
    if value is None:
        return math.nan
    if column.iso:
        try:
            stamp = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            raise BadInput(path, f"{column.name}: {value!r:.40} is not an ISO 8601 time", where=where) from None
        if stamp.tzinfo is None:
            raise BadInput(path, f"{column.name}: {value!r:.40} has no time zone (not guessed)", where=where)
        return stamp.timestamp()
    if column.success is not None:  # CSV holds text: "200" is the success 200
        return 1.0 if value in column.success or str(value) in {str(s) for s in column.success} else 0.0
    if isinstance(value, bool):
        if column.name == "ok":
            return 1.0 if value else 0.0
        raise BadInput(path, f"{column.name}: expected a number, found a boolean", where=where)
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise BadInput(path, f"{column.name}: expected a number, found {value!r:.40}", where=where) from None
    if not math.isfinite(number):
        return math.nan
    return number * column.scale


def columns(path: Path, spec: RecordMap) -> tuple[dict[str, np.ndarray], Mapping[str, object]]:
    """The mapped sample columns (float64, NaN unknown; text columns as text) and the top level."""
    rows, top = records(path, spec)
    out: dict[str, list[object]] = {c.name: [] for c in spec.columns}
    count = 0
    for where, record in rows:
        count += 1
        if count > MAX_ROWS:
            raise exceeded(path, "holds more records than", f"{MAX_ROWS:,}")
        if not isinstance(record, dict):
            raise BadInput(path, "a record is not an object (fields are looked up by name)", where=where)
        for column in spec.columns:
            value = _get(record, column.field)
            if column.text:
                out[column.name].append("" if value is None else str(value))
            else:
                out[column.name].append(_number(value, column, path, f"{where}.{'.'.join(column.field)}"))
    if not count:
        raise BadInput(path, "no records where the map says they are")
    return {
        name: np.array(values, dtype=str)
        if next(c for c in spec.columns if c.name == name).text
        else np.array(values, dtype=np.float64)
        for name, values in out.items()
    }, top
