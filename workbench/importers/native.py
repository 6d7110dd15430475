"""The native capture format ``workbench.capture/1`` (docs/capture-format.md).

One reader (``workbench.formats.json_object``): the top-level members one at a time,
the ``samples`` array in runs of whole samples about a MiB each, each run decoded by
msgspec into structs of the lens's known keys plus the extra keys the capture carries
(each added to the struct when first met, and typed from then on when its first run
held only numbers, booleans or strings), then stored a column at a time with numpy. A
fault is one line naming the file and the place: msgspec's path in the run, or the
sample whose column check failed. Memory is bounded by the columns, not the JSON.
"""

from __future__ import annotations

import ctypes
import json
import math
from collections.abc import Iterator
from functools import cache, lru_cache
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from store.records import LENSES, SAMPLES, UNKNOWN_WINDOW, WINDOW_KINDS, Dimension, RunRecord, Work
from workbench.errors import BadInput
from workbench.formats.inference_records import LATENCY_BOUND_MS, LATENCY_COLUMNS
from workbench.formats.json_object import (
    REFUSALS,
    Items,
    JsonObject,
    Run,
    got,
    head,
    item_path,
    out_of_range,
    raw_items,
)
from workbench.formats.timestamps import parse_timestamp
from workbench.importers.base import READ_ERRORS, Importer, ImportOptions, Probe, open_binary
from workbench.importers._host_sections import take_host
from workbench.limits import (
    MAX_COLUMNS,
    MAX_DEPTH,
    MAX_ROWS,
    MAX_SPARSITY,
    MAX_STRING_CHARS,
    SPARSE_FLOOR_CELLS,
    TEXT_FLOOR_CHARS,
    exceeded,
)

FORMAT = "workbench.capture/1"
FORMAT_PREFIX = "workbench.capture/"
MAX_SAFE_INT = 2**53

# Field kinds: "duration" (non-negative, unit in the key), "count" (non-negative number),
# "number", "bool", "str", "timestamp" (epoch seconds out).
SAMPLE_FIELDS: dict[str, dict[str, str]] = {
    "inference": {
        "id": "str",
        "prompt_tokens": "count",
        "output_tokens": "count",
        "queue_ms": "duration",
        "prefill_ms": "duration",
        "decode_ms": "duration",
        "ttft_ms": "duration",
        "e2e_ms": "duration",
        "ok": "bool",
    },
    "training": {
        "step": "count",
        "rank": "count",
        "step_ms": "duration",
        "input_ms": "duration",
        "compute_ms": "duration",
        "communication_ms": "duration",
        "checkpoint_ms": "duration",
        "samples": "count",
        "tokens": "count",
        "loss": "number",
    },
    "fleet": {
        "job": "str",
        "gpus": "count",
        "submit": "timestamp",
        "eligible": "timestamp",
        "start": "timestamp",
        "end": "timestamp",
        "state": "str",
    },
}

DIMENSION_KEYS: dict[str, tuple[str, ...]] = {
    "inference": (
        "model",
        "weights",
        "hardware",
        "topology",
        "request_mix",
        "precision",
        "engine_revision",
        "power_policy",
        "engine_config",
    ),
    "training": (
        "model",
        "objective",
        "hardware",
        "topology",
        "rank_count",
        "effective_batch",
        "optimizer",
        "eval_metric",
        "framework",
    ),
    "fleet": ("pool", "device_types", "scheduler_policy", "eligibility_history", "workload_mix"),
}

_NUMERIC_TYPES = frozenset({int, float})
_NUMERIC_KINDS = frozenset({"duration", "count", "number"})

RUN_BYTES = 1 << 20  # bytes of samples per msgspec run (1 MiB: no slower than 4, less held)
# A key a sample lacks, told from an explicit null by identity: a NaN, which JSON cannot
# produce (msgspec refuses NaN), so a list's count() matches it by identity alone.
_ABSENT = float("nan")
_SAMPLE_KEYS = msgspec.json.Decoder(list[dict[str, msgspec.Raw]])  # a run's keys, its values left undecoded
_UNTYPED = msgspec.json.Decoder(list[Any])


class NativeImporter(Importer):
    name = "native"
    version = "1"
    description = "wb native capture (workbench.capture/1), .json or .json.gz"
    priority = 10

    def sniff(self, probe: Probe) -> bool:
        text = probe.stripped
        if not text.startswith("{"):
            return False
        head = probe.text
        return FORMAT_PREFIX in head or ('"format"' in head and '"lens"' in head and '"samples"' in head)

    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        for path in paths:
            yield read_capture(path, options)


IMPORTER = NativeImporter()


def read_capture(path: Path, options: ImportOptions | None = None) -> RunRecord:
    """Parse one native capture file into a run; raises BadInput naming the file and place."""
    options = options or ImportOptions()
    progress = options.progress
    total = path.stat().st_size if progress else 0
    on_bytes = (lambda n: progress(path, n, total)) if progress else None
    try:
        with open_binary(path, on_bytes) as binary:
            return _read(JsonObject(binary, str(path), streamed="samples", run_bytes=RUN_BYTES), path, options)
    except BadInput:
        raise
    except READ_ERRORS as exc:
        raise BadInput(path, f"corrupt or truncated file ({exc or type(exc).__name__})") from None


def _read(doc: JsonObject, path: Path, options: ImportOptions) -> RunRecord:
    top: dict[str, Any] = {}
    samples: _Samples | None = None
    held: tuple[Items, list[Run]] | None = None  # samples before the lens: checked as JSON, decoded once it is known
    for key, value in doc.members():
        if key != "samples":
            top[key] = value
            continue
        if not isinstance(value, Items):
            raise BadInput(path, f"expected an array, got {_type_name(value)}", where="samples")
        lens = top.get("lens")
        if isinstance(lens, str) and lens in SAMPLE_FIELDS:
            samples = _Samples(path, lens)
            for rows, run in value.runs(samples.decode, samples.invalid):
                samples.add(rows, run)
        else:
            held = value, [run for _items, run in value.runs(raw_items)]
    record = _header(top, path, options)
    if samples is None:
        if held is None:
            raise BadInput(path, "missing required key 'samples'", where="samples")
        samples = _Samples(path, record.lens)
        items, runs = held
        for run in runs:
            try:
                rows = samples.decode(run)
            except REFUSALS as exc:
                raise items.fault(exc, run, samples.invalid) from None
            samples.add(rows, run)
    record.tables[SAMPLES] = samples.finish()
    return record


@lru_cache(maxsize=32)
def _samples_decoder(lens: str, extras: tuple[tuple[str, str], ...] = ()) -> Any:
    """A msgspec decoder for a run of one lens's samples: its known keys, each typed as the
    format says, plus the ``extras`` seen so far, each ``(key, type)``: "any" (any JSON
    value, converted by the rules of extra keys) or a type guessed from an earlier run
    ("number", "bool": decoded straight to floats, "text": to strings, and taken a column
    at a time like a known key; a value of another type fails the run, which is then
    decoded with that key untyped). _ABSENT when missing. A key not among them fails the
    run, so the reader adds the run's new keys and decodes again. Extras are struct
    fields ``extra_0_``, ``extra_1_``... renamed to their key (any text is a key)."""
    types = {
        "duration": float | None,
        "count": float | None,
        "number": float | None,
        "bool": bool | None,
        "str": str | int | None,
        "timestamp": Any,
        "any": Any,
        "text": str | None,
    }
    fields = [(key, types[kind], _ABSENT) for key, kind in SAMPLE_FIELDS[lens].items()]
    fields += [(_extra_attr(i), types[kind], _ABSENT) for i, (_, kind) in enumerate(extras)]
    rename = {_extra_attr(i): key for i, (key, _) in enumerate(extras)}
    sample = msgspec.defstruct(
        f"{lens.title()}Sample", fields, gc=False, forbid_unknown_fields=True, rename=rename or None
    )
    return msgspec.json.Decoder(list[sample])


def _extra_attr(i: int) -> str:
    return f"extra_{i}_"  # never a known key (SAMPLE_FIELDS names end in a letter)


class _Samples:
    """A lens's samples to typed columns: each run decoded into structs (``decode``), then
    converted and checked a column at a time with numpy (``add``)."""

    def __init__(self, path: Path, lens: str) -> None:
        self.path = path
        self.lens = lens
        self.fields = SAMPLE_FIELDS[lens]
        # Request latencies have a physical bound (docs/capture-format.md): past it a value is refused.
        self.bounded = frozenset(k for k, kind in self.fields.items() if kind == "duration" and k in LATENCY_COLUMNS)
        self.extras: dict[str, str] = {}  # extra key -> its type in the decoder: "any", or a guess
        self.guessed: set[str] = set()  # extras typed once (a guess is made once per key; a miss stays "any")
        self.n = 0
        self._typed: tuple[tuple[str, str], ...] = ()  # the extras' types of the last decode
        self._keys: dict[str, None] = {}  # every key seen so far, in order
        self._chunks: dict[str, list[np.ndarray]] = {}
        self._chunk_sizes: list[int] = []
        self._first_chunk: dict[str, int] = {}  # the run in which a key first appeared
        self._present = 0  # values present in all samples so far (the data a sparse table must be worth)

    # -- decoding ----------------------------------------------------------------------

    def decode(self, run: Run) -> list[Any]:
        """The run's samples as structs: new keys are learned and a missed guess untyped,
        each then decoded again; any other refusal is the run's fault."""
        while True:
            typed = tuple(self.extras.items())
            try:
                rows = _samples_decoder(self.lens, typed).decode(run.data)
            except msgspec.ValidationError as exc:
                message = str(exc)
                if head(message).startswith("Object contains unknown field"):
                    self._learn(run)
                    continue
                _item, rest = item_path(message)
                key = rest[1:] if rest.startswith(".") else None
                if key is not None and self.extras.get(key, "any") != "any":
                    self.extras[key] = "any"  # this run breaks the guess: the key is untyped from now on
                    continue
                raise
            self._typed = typed
            return rows

    def _learn(self, run: Run) -> None:
        """Every key of the run the decoder does not know yet, in one pass."""
        samples = _SAMPLE_KEYS.decode(run.data)
        known = self.fields.keys() | self.extras.keys()
        new = {key: "any" for sample in samples for key in sample if key not in known}
        if not new:  # pragma: no cover - msgspec named an unknown field
            raise BadInput(self.path, "a sample key the reader cannot name", where=f"samples[{run.first}]")
        if len(self._keys.keys() | self.fields.keys() | self.extras.keys() | new.keys()) > MAX_COLUMNS:
            counted = set(self._keys)
            for i, sample in enumerate(samples):
                for key in sample:
                    if key not in counted:
                        if len(counted) >= MAX_COLUMNS:
                            raise exceeded(
                                self.path,
                                f"sample key {_short(key)} would be column {len(counted) + 1}: more distinct keys than",
                                f"{MAX_COLUMNS:,}",
                                where=f"samples[{run.first + i}]",
                            )
                        counted.add(key)
        self.extras.update(new)

    def invalid(self, exc: msgspec.ValidationError, run: Run) -> BadInput | None:
        """msgspec's refusal of a sample, in the words of the format: the sample and key."""
        message = str(exc)
        item, rest = item_path(message)
        if item is None:
            return None
        where = f"samples[{run.first + item}]{rest}"
        if not rest:
            return BadInput(self.path, f"expected an object, got {got(message)}", where=where)
        if head(message).startswith("Number out of range"):  # an integer of too many digits, or 1e400
            try:
                value = _UNTYPED.decode(run.data)[item].get(rest[1:])
            except msgspec.ValidationError as untyped:
                message = str(untyped)  # "Integer value out of range": more digits than Python reads
            except msgspec.DecodeError:
                pass  # the run breaks after this sample: the number is the first fault
            else:
                if type(value) is int:
                    return BadInput(self.path, f"number {_short(value)} is out of range", where=where)
        found = out_of_range(str(self.path), message, where)
        if found is not None:
            return found
        kind = self.fields.get(rest[1:])
        if kind is None or not head(message).startswith("Expected"):
            return None
        expected = {"bool": "true or false", "str": "a string"}.get(kind, "a number")
        return BadInput(self.path, f"expected {expected}, got {got(message)}", where=where)

    # -- columns -------------------------------------------------------------------------

    def add(self, rows: list[Any], run: Run) -> None:
        """A decoded run, a column at a time; an untyped extra whose values in this run all
        fit one type ("number", "bool", "text") is decoded as that type from the next run on."""
        typed = self._typed
        fit = {key for key, kind in typed if kind == "any" and key not in self.guessed}
        for key, kind in self._add_structs(rows, run, typed, fit).items():
            if kind != "unseen":
                self.guessed.add(key)
                self.extras[key] = kind

    def _add_structs(
        self, rows: list[Any], run: Run, extras: tuple[tuple[str, str], ...], fit: set[str]
    ) -> dict[str, str]:
        """Returns, for each untyped extra in ``fit``, the type its values in this run fit."""
        n = len(rows)
        if not n:
            return {}
        start = self.n
        self.n += n
        if self.n > MAX_ROWS:
            raise exceeded(self.path, "more samples than", f"{MAX_ROWS:,}", where=f"samples[{MAX_ROWS}]")
        converted: dict[str, np.ndarray] = {}
        fresh: set[str] = set()
        seen: dict[str, str] = {}
        for key, kind, attr in self._columns(extras):
            if kind == "any":
                column, present = _untyped(rows, attr)
                if key in fit:
                    seen[key] = _fit(key, column) if present else "unseen"
                if not present and key not in self._keys:
                    continue
                column = self._convert(key, column, start)
            else:
                column, present = self._typed_column(key, kind, rows, start, run, attr)
            if present or key in self._keys:
                converted[key] = column
                self._present += present
                if key not in self._keys:
                    fresh.add(key)
        if fresh:
            self._new_columns(fresh, run)
        self._check_sparsity()
        for key in self._keys:
            self._chunks[key].append(converted[key])
        self._chunk_sizes.append(n)
        return seen

    def _columns(self, extras: tuple[tuple[str, str], ...]) -> list[tuple[str, str, str]]:
        """Each column of a decoded run: (key, kind, struct attribute); a typed extra by its guess."""
        columns = [(key, kind, key) for key, kind in self.fields.items()]
        for i, (key, typed) in enumerate(extras):
            kind = {"text": "str", "bool": "bool", "number": _kind_by_name(key), "any": "any"}[typed]
            columns.append((key, kind, _extra_attr(i)))
        return columns

    def _new_columns(self, fresh: set[str], run: Run) -> None:
        """Keys first met in this run become columns, in the order they first appear in the samples."""
        for raw in msgspec.json.decode(run.data, type=list[msgspec.Raw]):
            for key in msgspec.json.decode(raw):
                if key in fresh:
                    fresh.discard(key)
                    self._keys[key] = None
                    self._chunks[key] = []
                    self._first_chunk[key] = len(self._chunk_sizes)
            if not fresh:
                break

    def _typed_column(
        self, key: str, kind: str, rows: list[Any], start: int, run: Run, attr: str
    ) -> tuple[np.ndarray, int]:
        """One column of a decoded run as its kind says, and how many samples hold its key."""
        n = len(rows)
        get = attrgetter(attr)
        if kind in _NUMERIC_KINDS or kind in ("bool", "extra"):
            values: list[Any] | None = None
            try:
                arr = np.fromiter(map(get, rows), dtype=np.float64, count=n)  # _ABSENT is a NaN already
            except TypeError:  # a null
                values = list(map(get, rows))
                arr = np.array(values, dtype=np.float64)  # None -> NaN (unknown)
            absent = (values or list(map(get, rows))).count(_ABSENT) if np.isnan(arr).any() else 0
            if kind in _NUMERIC_KINDS:
                self._check_numbers(key, kind, arr, start, run)
            return arr, n - absent
        values = list(map(get, rows))
        if kind == "str":
            types = set(map(type, values))
            if types == {str}:
                return self._text(key, values, start), n
            absent = values.count(_ABSENT) if float in types else 0
            return self._text(key, ["" if v is None or v is _ABSENT else str(v) for v in values], start), n - absent
        absent = values.count(_ABSENT)  # timestamps: any JSON value, parsed one by one
        if absent:
            values = [None if v is _ABSENT else v for v in values]
        return self._convert(key, values, start), n - absent

    def _check_numbers(self, key: str, kind: str, arr: np.ndarray, start: int, run: Run) -> None:
        """A column's numbers as its kind allows: an integer of 2^53 or more (a float as large
        is fine: the run's JSON says which), a negative duration or count, a latency past its
        bound; the first fault names its sample."""
        big = np.flatnonzero(np.abs(arr) >= MAX_SAFE_INT)
        if len(big):
            samples = _UNTYPED.decode(run.data)  # rare: the numbers as written, to tell an integer from a float
            for i in big.tolist():
                value = samples[i].get(key)
                if type(value) is int:
                    raise BadInput(
                        self.path,
                        f"integer {_short(value)} is too large (2^53 or more; write such integers as strings)",
                        where=f"samples[{start + i}].{key}",
                    )
        if kind in ("duration", "count"):
            negative = np.flatnonzero(arr < 0)
            if len(negative):
                i = int(negative[0])
                what = f"negative {kind} {_short(float(arr[i]))}"
                raise BadInput(self.path, what, where=f"samples[{start + i}].{key}")
        if key in self.bounded:
            past = np.flatnonzero(arr > LATENCY_BOUND_MS)
            if len(past):
                i = int(past[0])
                raise BadInput(
                    self.path,
                    f"latency {_short(float(arr[i]))} ms is beyond {LATENCY_BOUND_MS:g} ms (about 11.6 days): "
                    "not a measurement",
                    where=f"samples[{start + i}].{key}",
                )

    def _check_sparsity(self) -> None:
        """Every key is a column as long as the table: refuse a table mostly made of holes
        (memory would grow with keys x samples, the square of the input)."""
        cells = self.n * len(self._keys)
        if cells > max(SPARSE_FLOOR_CELLS, MAX_SPARSITY * self._present):
            raise exceeded(
                self.path,
                f"{len(self._keys):,} sample keys over {self.n:,} samples hold only {self._present:,} values: "
                "a table more sparse than",
                f"1 value in {MAX_SPARSITY} cells",
                where=f"samples[{self.n - 1}]",
            )

    def finish(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for key in list(self._chunks):
            chunks = self._chunks.pop(key)  # each column's chunks freed as it is joined
            missing_before = sum(self._chunk_sizes[: self._first_chunk[key]])
            if missing_before:
                chunks = [self._convert(key, [None] * missing_before, 0), *chunks]
            if len({c.dtype.kind for c in chunks}) > 1:  # an extra key: numbers in one run, text in another
                chunks = [
                    c if c.dtype.kind == "U" else np.array([_number_text(x) for x in c.tolist()], dtype=str)
                    for c in chunks
                ]
            if chunks[0].dtype.kind == "U" and len(chunks) > 1:
                self._check_width(
                    key,
                    sum(map(len, chunks)),
                    max(c.dtype.itemsize // 4 for c in chunks),
                    sum(int(np.char.str_len(c).sum()) for c in chunks),
                )
            out[key] = np.concatenate(chunks) if len(chunks) > 1 else chunks[0]
            del chunks
            _release_freed_heap()
        return out

    # -- the rules of untyped values ----------------------------------------------------------

    def _fault(self, key: str, values: list[Any], start: int, ok: Any, message: str) -> BadInput:
        for i, value in enumerate(values):
            if not ok(value):
                return BadInput(
                    self.path,
                    message.format(value=_short(value), type=_type_name(value)),
                    where=f"samples[{start + i}].{key}",
                )
        return BadInput(self.path, message.format(value="?", type="?"), where=f"samples.{key}")

    def _convert(self, key: str, values: list[Any], start: int) -> np.ndarray:
        """Untyped values (None: unknown) of a key: a timestamp, a key named as a duration,
        or an extra key (``_extra_column``)."""
        kind = self.fields.get(key) or _kind_by_name(key)
        types = set(map(type, values))
        types.discard(type(None))
        if kind == "str":
            return self._text(key, ["" if v is None else str(v) for v in values], start)
        if kind == "bool":
            return np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)
        if kind == "timestamp":
            out = np.empty(len(values), dtype=np.float64)
            for i, value in enumerate(values):
                if value is None:
                    out[i] = math.nan
                    continue
                try:
                    out[i] = parse_timestamp(value)
                except ValueError as exc:
                    raise BadInput(self.path, str(exc), where=f"samples[{start + i}].{key}") from None
            return out
        if kind == "extra":
            return self._extra_column(key, values, types, start)
        # an extra key named as a duration (``_ms``, ``_s``): numbers only, checked as one
        if not types <= _NUMERIC_TYPES:
            raise self._fault(
                key, values, start, lambda v: v is None or type(v) in _NUMERIC_TYPES, "expected a number, got {type}"
            )
        try:
            arr = np.array(values, dtype=np.float64)  # None -> NaN (unknown)
        except OverflowError:
            raise self._fault(
                key, values, start, lambda v: v is None or abs(v) < 1e308, "number {value} is out of range"
            ) from None
        if int in types:
            big = np.abs(arr) >= MAX_SAFE_INT
            if big.any():
                i = int(np.argmax(big & np.array([type(v) is int for v in values])))
                if type(values[i]) is int:
                    raise BadInput(
                        self.path,
                        f"integer {_short(values[i])} is too large (2^53 or more; write such integers as strings)",
                        where=f"samples[{start + i}].{key}",
                    )
        negative = arr < 0
        if negative.any():
            i = int(np.argmax(negative))
            raise BadInput(self.path, f"negative duration {_short(values[i])}", where=f"samples[{start + i}].{key}")
        return arr

    def _extra_column(self, key: str, values: list[Any], types: set[type], start: int) -> np.ndarray:
        """An unknown sample key: kept as numbers (booleans among them as 1 and 0), strings, or text.
        Values of several kinds make a text column, each value written as a run of its kind
        alone would give it once joined to text (``finish``): a number as its float repr, a
        string as it is, an object or list as JSON. So where the runs are cut changes nothing."""
        if types <= _NUMERIC_TYPES | {bool}:  # (nulls only: a column of unknown numbers)
            try:
                arr = np.array(values, dtype=np.float64)  # None -> NaN (unknown), a boolean -> 1 or 0
                finite = bool(np.isfinite(arr[~np.isnan(arr)]).all())
            except OverflowError:  # an integer past a double's range
                finite = False
            if not finite:
                raise self._fault(key, values, start, _finite_or_null, "number {value} is out of range")
            return arr
        if types <= {str}:
            # A list of strings only (the common case: request ids) is taken as it is: no copy.
            return self._text(key, ["" if v is None else v for v in values] if None in values else values, start)
        texts = []
        for i, v in enumerate(values):
            if v is None:
                texts.append("")
            elif type(v) is str:
                texts.append(v)
            elif isinstance(v, (dict, list)):
                _check_json_value(v, self.path, f"samples[{start + i}].{key}")
                texts.append(json.dumps(v, sort_keys=True))
            elif not _finite_or_null(v):
                raise BadInput(self.path, f"number {_short(v)} is out of range", where=f"samples[{start + i}].{key}")
            else:
                texts.append(_number_text(v))
        return self._text(key, texts, start)

    def _text(self, key: str, texts: list[str], start: int) -> np.ndarray:
        """A text column: each string within the limit, valid Unicode, and a fixed width
        (numpy keeps the longest string's width for every row) worth its data."""
        lengths = list(map(len, texts))
        longest = max(lengths, default=0)
        if longest > MAX_STRING_CHARS:
            i = lengths.index(longest)
            raise exceeded(
                self.path,
                f"a string of {longest:,} characters is longer than",
                f"{MAX_STRING_CHARS:,}",
                where=f"samples[{start + i}].{key}",
            )
        joined = "".join(texts)
        if not joined.isascii():
            try:
                joined.encode("utf-8")
            except UnicodeEncodeError:
                i = next(i for i, t in enumerate(texts) if not _encodes(t))
                _check_text(texts[i], self.path, f"samples[{start + i}].{key}")
        self._check_width(key, len(texts), longest, len(joined))
        if longest and len(joined) == longest * len(texts):  # every string as long (ids, UUIDs): one copy
            return np.frombuffer(bytearray(joined.encode("utf-32-le")), dtype=f"<U{longest}")
        return np.array(texts, dtype=str)

    def _check_width(self, key: str, rows: int, width: int, chars: int) -> None:
        if rows * width > max(TEXT_FLOOR_CHARS, MAX_SPARSITY * chars):
            raise exceeded(
                self.path,
                f"column {_short(key)} has a string of {width:,} characters among {rows:,} rows holding {chars:,} "
                "in all: fixed-width storage would be more sparse than",
                f"1 character in {MAX_SPARSITY}",
                where=f"samples.{key}",
            )


def _untyped(rows: list[Any], attr: str) -> tuple[list[Any], int]:
    """An untyped extra's values (None where a sample lacks it) and how many samples hold it."""
    values = list(map(attrgetter(attr), rows))
    present = len(values) - values.count(_ABSENT)  # _ABSENT is matched by identity (a NaN equals nothing)
    if present < len(values):
        values = [None if v is _ABSENT else v for v in values]
    return values, present


def _header(top: dict[str, Any], path: Path, options: ImportOptions) -> RunRecord:
    """The run a capture's header describes, each section checked in the order the format lists them."""
    fmt = _format(top, path)
    lens = top.get("lens")
    if lens is None:
        raise BadInput(path, "missing required key 'lens'", where="lens")
    if lens not in LENSES:
        raise BadInput(path, f"unknown lens {lens!r} (known: {', '.join(LENSES)})", where="lens")
    label = top.get("label", path.name.split(".")[0])
    if not isinstance(label, str):
        raise BadInput(path, f"expected a string, got {_type_name(label)}", where="label")
    _check_json_value(label, path, "label")
    record = RunRecord(lens=lens, label=options.label or label, sources=[path])
    meta: dict[str, Any] = {"format": fmt}
    if "recorded_at" in top:
        try:
            parse_timestamp(top["recorded_at"])
        except ValueError as exc:
            raise BadInput(path, str(exc), where="recorded_at") from None
        meta["recorded_at"] = top["recorded_at"]
    record.dimensions.update(_dimensions(top.get("dimensions", {}), path))
    record.window = _window(top.get("window"), path)
    if top.get("work") is not None:
        record.work = _work(top["work"], path)
    record.quality.update(_quality(top.get("quality", {}), path))
    if "pool" in top:
        meta["pool"] = _pool(top["pool"], path)
    host = take_host(top, path)  # a recorder's host section: its bulk into tables, the rest into meta
    if host is not None:
        record.tables.update(host[0])
        _check_json_value(host[1], path, "host")
        meta["host"] = host[1]
    known = {"format", "lens", "label", "recorded_at", "dimensions", "window", "work", "quality", "samples", "pool"}
    extra = {k: v for k, v in top.items() if k not in known}
    if extra:
        _check_json_value(extra, path, "")
        meta["extra"] = extra
    record.meta = meta
    return record


def _format(top: dict[str, Any], path: Path) -> str:
    fmt = top.get("format")
    if fmt is None:
        raise BadInput(path, "missing required key 'format'", where="format")
    if not isinstance(fmt, str) or not fmt.startswith(FORMAT_PREFIX):
        raise BadInput(path, f"wrong format {fmt!r} (expected {FORMAT!r})", where="format")
    if fmt != FORMAT:
        raise BadInput(path, f"unsupported version {fmt!r} (this wb reads {FORMAT!r})", where="format")
    return fmt


def _dimensions(dims: Any, path: Path) -> dict[str, Dimension]:
    if not isinstance(dims, dict):
        raise BadInput(path, f"expected an object, got {_type_name(dims)}", where="dimensions")
    out: dict[str, Dimension] = {}
    for name, value in dims.items():
        if value is None:
            continue  # null is unknown: the same as absent
        _check_json_value(value, path, f"dimensions.{name}")
        out[name] = Dimension(value, "declared")
    return out


def _window(window: Any, path: Path) -> dict[str, Any]:
    if window is None:
        return {"kind": UNKNOWN_WINDOW}
    if not isinstance(window, dict):
        raise BadInput(path, f"expected an object, got {_type_name(window)}", where="window")
    kind = window.get("kind", UNKNOWN_WINDOW)
    if kind != UNKNOWN_WINDOW and kind not in WINDOW_KINDS:
        raise BadInput(path, f"unknown window kind {kind!r} (known: {', '.join(WINDOW_KINDS)})", where="window.kind")
    warmup = window.get("warmup_excluded")
    if warmup is not None and (
        isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0 or warmup >= MAX_SAFE_INT
    ):
        raise BadInput(path, "expected a non-negative integer", where="window.warmup_excluded")
    _check_json_value(window, path, "window")
    return {**window, "kind": kind}


def _work(work: Any, path: Path) -> Work:
    if not isinstance(work, dict) or not isinstance(work.get("unit"), str):
        raise BadInput(path, "expected an object with a string 'unit'", where="work")
    amount = work.get("amount")
    if amount is not None:
        _check_number(amount, path, "work.amount", minimum=0.0)
    return Work(work["unit"], None if amount is None else float(amount))


def _quality(quality: Any, path: Path) -> dict[str, float]:
    if not isinstance(quality, dict):
        raise BadInput(path, f"expected an object, got {_type_name(quality)}", where="quality")
    out: dict[str, float] = {}
    for name, value in quality.items():
        if value is None:
            continue
        _check_number(value, path, f"quality.{name}")
        out[name] = float(value)
    return out


def _pool(pool: Any, path: Path) -> dict[str, Any]:
    """A fleet capture's pool: capacity, the window's bounds as epoch seconds, the wait target."""
    if not isinstance(pool, dict):
        raise BadInput(path, f"expected an object, got {_type_name(pool)}", where="pool")
    if "capacity_gpus" in pool:
        _check_number(pool["capacity_gpus"], path, "pool.capacity_gpus", minimum=0.0)
    for key in ("window_start", "window_end"):
        if key in pool:
            try:
                pool = {**pool, key: parse_timestamp(pool[key])}
            except ValueError as exc:
                raise BadInput(path, str(exc), where=f"pool.{key}") from None
    if "wait_target_s" in pool:
        _check_number(pool["wait_target_s"], path, "pool.wait_target_s")
        if pool["wait_target_s"] <= 0:
            # As --wait-target: a target of 0 makes every job miss it, a figure that says nothing.
            raise BadInput(
                path,
                f"a queue-wait target is a positive number of seconds, got {pool['wait_target_s']}",
                where="pool.wait_target_s",
            )
    _check_json_value(pool, path, "pool")
    return pool


@cache
def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL(None).malloc_trim  # glibc; absent elsewhere (macOS, musl)
    except (OSError, AttributeError):
        return None


def _release_freed_heap() -> None:
    """Give freed heap pages back to the OS. A column's chunks are small arrays on the C
    heap; once joined and freed, glibc keeps their pages, and without this the process
    would hold every column twice (its chunks and the joined array) at its peak: about
    0.55x the file in RSS for a native capture of 1 M requests. Elsewhere a no-op."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _finite_or_null(value: Any) -> bool:
    try:
        return value is None or math.isfinite(value)
    except OverflowError:  # an integer past a double's range
        return False


def _number_text(value: float | int | bool) -> str:
    """A number in a text column of mixed kinds: its float repr ("" for NaN, unknown), the
    text a column of numbers gives once joined to text, whichever chunk it came in."""
    x = float(value)
    return "" if math.isnan(x) else repr(x)


def _fit(key: str, values: list[Any]) -> str:
    """The decoder type an extra key's values (some present) fit: "number" (numbers and
    nulls), and where the key is not a duration "bool" (booleans and nulls) or "text"
    (strings and nulls); else "any"."""
    types = set(map(type, values))
    types.discard(type(None))
    if types <= _NUMERIC_TYPES:
        return "number"
    if _kind_by_name(key) != "extra":
        return "any"
    return {bool: "bool", str: "text"}.get(types.pop(), "any") if len(types) == 1 else "any"


def _kind_by_name(key: str) -> str:
    if key.endswith("_ms") or key.endswith("_s"):
        return "duration"
    return "extra"


def _check_number(value: Any, path: Path, where: str, *, minimum: float | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadInput(path, f"expected a number, got {_type_name(value)}", where=where)
    if isinstance(value, int) and abs(value) >= MAX_SAFE_INT:
        raise BadInput(
            path, f"integer {_short(value)} is too large (2^53 or more; write such integers as strings)", where=where
        )
    if not math.isfinite(value):
        raise BadInput(path, "number is not finite", where=where)
    if minimum is not None and value < minimum:
        raise BadInput(path, f"expected a value of at least {minimum:g}, got {value}", where=where)


def _check_json_value(value: Any, path: Path, where: str) -> None:
    """Refuse what the store cannot keep faithfully anywhere in a metadata value: unsafe
    integers (they must be strings), non-finite numbers, invalid or oversized text, and
    nesting deeper than the limit."""
    stack = [(value, where, 0)]
    while stack:
        v, w, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise exceeded(path, "nested deeper than", f"{MAX_DEPTH} levels", where=_short_where(w))
        if isinstance(v, dict):
            for k, item in v.items():
                _check_text(k, path, w)
                stack.append((item, f"{w}.{k}" if w else str(k), depth + 1))
        elif isinstance(v, list):
            stack.extend((item, f"{w}[{i}]", depth + 1) for i, item in enumerate(v))
        elif isinstance(v, str):
            _check_text(v, path, w)
        elif isinstance(v, int) and not isinstance(v, bool) and abs(v) >= MAX_SAFE_INT:
            raise BadInput(
                path, f"integer {_short(v)} is too large (2^53 or more; write such integers as strings)", where=w
            )
        elif isinstance(v, float) and not math.isfinite(v):
            raise BadInput(path, "number is not finite", where=w)


def _check_text(text: str, path: Path, where: str) -> None:
    if len(text) > MAX_STRING_CHARS:
        raise exceeded(
            path,
            f"a string of {len(text):,} characters is longer than",
            f"{MAX_STRING_CHARS:,}",
            where=_short_where(where),
        )
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise BadInput(
                path,
                "string contains a lone surrogate (\\ud800-\\udfff escape without its pair; not valid Unicode)",
                where=_short_where(where),
            ) from None


def _short_where(where: str) -> str:
    return where if len(where) <= 120 else where[:117] + "..."


def _type_name(value: Any) -> str:
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
        int: "a number",
        float: "a number",
    }.get(type(value), type(value).__name__)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
