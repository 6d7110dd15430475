"""The native capture format ``workbench.capture/1`` (docs/capture-format.md).

Reads the ``samples`` array into typed columns, so a capture of a million requests
imports with memory bounded by its columns, not its JSON. The fast path cuts the
array into runs of whole samples a few MiB at a time (``workbench.training.json_chunks``)
and decodes each run with msgspec into structs of the lens's known keys, checked a
column at a time with numpy, plus the extra keys the capture carries (each added to the
struct when first met, converted by the stream reader's own rules, and typed from then on
when its first run held only numbers, booleans or strings). Anything it does not
take as it is (a wrong type, a refusal, samples before the lens, more keys than the
limit) is read again by the stream reader, which holds every rule and names the fault
and its place.
"""

from __future__ import annotations

import ctypes
import io
import json
import math
from collections.abc import Iterator
from functools import cache, lru_cache
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from store.records import LENSES, SAMPLES, UNKNOWN_WINDOW, WINDOW_KINDS, Dimension, RunRecord, Work
from workbench.errors import BadInput
from workbench.formats.inference_records import LATENCY_BOUND_MS, LATENCY_COLUMNS
from workbench.formats.json_stream import ObjectStream
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
from workbench.training.json_chunks import ArrayChunks, ScanError, structure

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

_CHUNK = 16_384
_NUMERIC_TYPES = frozenset({int, float})
_NUMERIC_KINDS = frozenset({"duration", "count", "number"})

FAST = True  # decode runs of samples with msgspec (False: the stream reader only)
RUN_BYTES = 1 << 20  # bytes of samples per msgspec run (1 MiB: no slower than 4, less held)
FAST_EXTRA_KEYS = 256  # extra sample keys the fast path decodes; more go to the stream reader
HEAD_CAP = 8 << 20  # header bytes before the samples the fast path reads (more: the stream reader)
TAIL_CAP = 1 << 20  # and after them
# A key a sample lacks, told from an explicit null by identity: a NaN, which JSON cannot
# produce (msgspec refuses NaN), so a list's count() matches it by identity alone.
_ABSENT = float("nan")


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
    if FAST:
        try:
            record = _read_fast(path, options, on_bytes)
        except RecursionError:  # msgspec on absurd nesting: the stream reader names the place and the limit
            record = None
        if record is not None:
            return record
    try:
        with open_binary(path, on_bytes) as binary:
            return _parse(ObjectStream(binary, str(path)), path, options)
    except BadInput:
        raise
    except READ_ERRORS as exc:
        raise BadInput(path, f"corrupt or truncated file ({exc or type(exc).__name__})") from None


class _SampleRuns(ArrayChunks):
    """Runs of whole samples, cut without scanning their bytes: at the last ``}`` that a
    ``,`` follows. A cut is only trusted because the run is then decoded by a strict JSON
    decoder: a cut inside a string or a nested value leaves ``[`` + run + ``]`` unbalanced,
    one past the array's end leaves data after it, and either fails the fast path. Only
    the last buffer (where the array ends) is scanned for its structure."""

    def chunks(self) -> Iterator[bytes]:
        runs, self.chunk = self.chunk, 256 << 10  # the header is small: scan little of the samples for it
        carry = self._find_array()
        self.chunk = runs
        while True:
            more = self._read()
            buf = carry + more if carry else more
            if not more:
                yield from self._last(buf)
                return
            cut = _last_item_end(buf)
            if cut < 0:
                carry = buf  # no sample ends in this buffer: read on (the guard bounds it)
                continue
            yield b"[" + buf[:cut] + b"]"
            carry = buf[cut:].lstrip(b" \t\r\n")[1:]  # past the comma

    def _last(self, buf: bytes) -> Iterator[bytes]:
        st = structure(buf, 2)
        closing = np.flatnonzero(st.depth_after == 1)
        if not len(closing):
            raise ScanError("the input ends inside the array (truncated)")
        end = int(st.positions[closing[0]])
        if buf[end] != ord("]") or np.any(st.depth_after[: closing[0]] < 2):
            raise ScanError("unbalanced nesting in the array")
        body = buf[:end].strip(b" \t\r\n")
        if body:
            yield b"[" + body + b"]"
        self.trailer = buf[end + 1 :]


def _last_item_end(buf: bytes, tries: int = 8) -> int:
    """Just past the last ``}`` followed (after blanks) by ``,`` in ``buf``, or -1."""
    pos = len(buf)
    for _ in range(tries):
        pos = buf.rfind(b"}", 0, pos)
        if pos < 0:
            return -1
        after = buf[pos + 1 : pos + 65].lstrip(b" \t\r\n")
        if after[:1] == b",":
            return pos + 1
    return -1


class _Guard:
    """A stream that refuses to be read far past the runs handed out: the splitter keeps
    reading while one sample has no end, and such a value is the stream reader's to refuse."""

    def __init__(self, binary: Any) -> None:
        self._binary = binary
        self.read_bytes = 0
        self.used_bytes = 0

    def read(self, n: int) -> bytes:
        if self.read_bytes - self.used_bytes > HEAD_CAP + 2 * RUN_BYTES:
            raise ScanError("one sample larger than the limit")
        data = self._binary.read(n)
        self.read_bytes += len(data)
        return data


def _read_fast(path: Path, options: ImportOptions, on_bytes: Any) -> RunRecord | None:
    """The capture through the fast path, or None where the stream reader must read it."""
    try:
        import msgspec
    except ImportError:  # pragma: no cover - a declared dependency; the stream still works without it
        return None
    try:
        binary = open_binary(path, on_bytes)
    except BadInput:
        raise
    except READ_ERRORS:
        return None
    guard = _Guard(binary)
    splitter = _SampleRuns(guard, b"samples", chunk=RUN_BYTES, head_cap=HEAD_CAP, tail_cap=TAIL_CAP)  # type: ignore[arg-type]
    try:
        runs = splitter.chunks()
        first = next(runs, None)  # the header is known once the array opened
        lens = _lens_in(splitter.header)
        if lens is None:
            return None
        extras: dict[
            str, str
        ] = {}  # extra key -> its type in the decoder: "any", or a guess ("number", "bool", "text")
        guessed: set[str] = set()  # extras typed once (a guess is made once per key; a miss stays "any")
        columns = _ColumnBuilder(path, SAMPLE_FIELDS[lens])
        run = first
        while run is not None:
            guard.used_bytes += len(run)
            typed = tuple(extras.items())
            try:
                rows = _samples_decoder(lens, typed).decode(run)
            except msgspec.ValidationError as exc:
                if _unknown_field(exc) is not None:
                    # New extra keys: learn every key of this run in one pass, then decode it again.
                    known = {*SAMPLE_FIELDS[lens], *extras}
                    new = {
                        key: "any"
                        for sample in msgspec.json.decode(run, type=list[dict[str, msgspec.Raw]])
                        for key in sample
                        if key not in known
                    }
                    if not new or len(extras) + len(new) > FAST_EXTRA_KEYS:
                        return None  # hundreds of keys: the stream reader bounds and refuses what the limits say
                    extras.update(new)
                elif all(kind == "any" for kind in extras.values()):
                    return None  # a wrong type in a known key: the stream reader says what and where
                typed = tuple((key, "any") for key in extras)  # new keys, or a guess missed: the run again, untyped
                rows = _samples_decoder(lens, typed).decode(run)
            # What the untyped values fit: for a guess still to make, or one this run missed.
            to_fit = {key for key, kind in typed if kind == "any" and (key not in guessed or extras[key] != "any")}
            for key, fit in columns.add_structs(rows, run, typed, to_fit).items():
                if fit == "unseen":
                    continue
                if key not in guessed:  # typed from the next run on
                    guessed.add(key)
                    extras[key] = fit
                elif extras[key] != fit:  # the guess missed: untyped from now on
                    extras[key] = "any"
            run = next(runs, None)
        top = splitter.header + b'"samples": []' + splitter.trailer
        record = _parse(ObjectStream(io.BytesIO(top), str(path)), path, options)
        record.tables[SAMPLES] = columns.finish()
    except (ScanError, msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, BadInput, *READ_ERRORS):
        # msgspec raises UnicodeDecodeError (not DecodeError) for invalid UTF-8 in a string.
        return None  # the stream reader says what and where (or accepts what this path would not)
    finally:
        binary.close()
    return record


def _lens_in(header: bytes) -> str | None:
    """The lens named before the samples, if the header reads as JSON on its own."""
    import msgspec

    try:
        top = msgspec.json.decode(header + b'"samples": []}')
    except msgspec.DecodeError:
        return None
    lens = top.get("lens") if isinstance(top, dict) else None
    return lens if isinstance(lens, str) and lens in SAMPLE_FIELDS else None


@lru_cache(maxsize=32)
def _samples_decoder(lens: str, extras: tuple[tuple[str, str], ...] = ()) -> Any:
    """A msgspec decoder for a run of one lens's samples: its known keys, each typed as the
    stream reader accepts it, plus the ``extras`` seen so far, each ``(key, type)``: "any"
    (any JSON value, checked by the stream reader's own conversion) or a type guessed from
    an earlier run ("number", "bool": decoded straight to floats, "text": to strings, and
    taken a column at a time like a known key; a value of another type fails the run, which
    is then decoded untyped). _ABSENT when missing. A key not among them fails the run
    (``_unknown_field``), so the caller adds the run's new keys and decodes again. Extras
    are struct fields ``extra_0_``, ``extra_1_``... renamed to their key (any text is a key)."""
    import msgspec

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


def _unknown_field(exc: Exception) -> str | None:
    """The key msgspec's ``Object contains unknown field `KEY` - at `$[i]``` names, or None."""
    text = str(exc)
    head, sep, rest = text.partition("Object contains unknown field `")
    if not sep or head:
        return None
    key, sep, tail = rest.rpartition("` - at `")
    return key if sep and "`" not in key else None


def _parse(stream: ObjectStream, path: Path, options: ImportOptions) -> RunRecord:
    top: dict[str, Any] = {}
    columns: _ColumnBuilder | None = None
    pending_samples: list[Any] | None = None
    for key, value in stream.items(frozenset({"samples"})):
        if key == "samples":
            if not isinstance(value, Iterator):
                raise BadInput(path, f"expected an array, got {_type_name(value)}", where="samples")
            lens = top.get("lens")
            if isinstance(lens, str) and lens in SAMPLE_FIELDS:
                columns = _ColumnBuilder(path, SAMPLE_FIELDS[lens])
                stream.where = lambda: f"samples[{columns.n}]"  # type: ignore[union-attr]  # noqa: B023 - the builder now reading
                for sample in value:
                    columns.add(sample)
                stream.where = lambda: ""
            else:  # lens not seen yet (or bad): keep the samples and type them afterwards
                pending_samples = list(value)
        else:
            top[key] = value
    record = _header(top, path, options)
    if columns is None:
        if pending_samples is None:
            raise BadInput(path, "missing required key 'samples'", where="samples")
        columns = _ColumnBuilder(path, SAMPLE_FIELDS[record.lens])
        for sample in pending_samples:
            columns.add(sample)
    record.tables[SAMPLES] = columns.finish()
    return record


def _header(top: dict[str, Any], path: Path, options: ImportOptions) -> RunRecord:
    fmt = top.get("format")
    if fmt is None:
        raise BadInput(path, "missing required key 'format'", where="format")
    if not isinstance(fmt, str) or not fmt.startswith(FORMAT_PREFIX):
        raise BadInput(path, f"wrong format {fmt!r} (expected {FORMAT!r})", where="format")
    if fmt != FORMAT:
        raise BadInput(path, f"unsupported version {fmt!r} (this wb reads {FORMAT!r})", where="format")
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

    dims = top.get("dimensions", {})
    if not isinstance(dims, dict):
        raise BadInput(path, f"expected an object, got {_type_name(dims)}", where="dimensions")
    for name, value in dims.items():
        if value is None:
            continue  # null is unknown: the same as absent
        _check_json_value(value, path, f"dimensions.{name}")
        record.dimensions[name] = Dimension(value, "declared")

    window = top.get("window")
    if window is None:
        record.window = {"kind": UNKNOWN_WINDOW}
    else:
        if not isinstance(window, dict):
            raise BadInput(path, f"expected an object, got {_type_name(window)}", where="window")
        kind = window.get("kind", UNKNOWN_WINDOW)
        if kind != UNKNOWN_WINDOW and kind not in WINDOW_KINDS:
            raise BadInput(
                path, f"unknown window kind {kind!r} (known: {', '.join(WINDOW_KINDS)})", where="window.kind"
            )
        warmup = window.get("warmup_excluded")
        if warmup is not None and (
            isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0 or warmup >= MAX_SAFE_INT
        ):
            raise BadInput(path, "expected a non-negative integer", where="window.warmup_excluded")
        _check_json_value(window, path, "window")
        record.window = {**window, "kind": kind}

    work = top.get("work")
    if work is not None:
        if not isinstance(work, dict) or not isinstance(work.get("unit"), str):
            raise BadInput(path, "expected an object with a string 'unit'", where="work")
        amount = work.get("amount")
        if amount is not None:
            _check_number(amount, path, "work.amount", minimum=0.0)
        record.work = Work(work["unit"], None if amount is None else float(amount))

    quality = top.get("quality", {})
    if not isinstance(quality, dict):
        raise BadInput(path, f"expected an object, got {_type_name(quality)}", where="quality")
    for name, value in quality.items():
        if value is None:
            continue
        _check_number(value, path, f"quality.{name}")
        record.quality[name] = float(value)

    if "pool" in top:
        pool = top["pool"]
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
        meta["pool"] = pool

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


class _ColumnBuilder:
    """Samples to typed columns, checked a chunk at a time (vectorized, not per value)."""

    def __init__(self, path: Path, fields: dict[str, str]) -> None:
        self.path = path
        self.fields = fields
        # Request latencies have a physical bound (docs/capture-format.md): past it a value is refused.
        self.bounded = frozenset(k for k, kind in fields.items() if kind == "duration" and k in LATENCY_COLUMNS)
        self.n = 0
        self._pending: list[dict[str, Any]] = []  # samples of the current chunk, as decoded
        self._keys: dict[str, None] = {}  # every key seen so far, in order
        self._chunks: dict[str, list[np.ndarray]] = {}
        self._chunk_sizes: list[int] = []
        self._first_chunk: dict[str, int] = {}  # the chunk in which a key first appeared
        self._chunk_start = 0
        self._present = 0  # values present in all samples so far (the data a sparse table must be worth)

    def add(self, sample: Any) -> None:
        if type(sample) is not dict:
            raise BadInput(self.path, f"expected an object, got {_type_name(sample)}", where=f"samples[{self.n}]")
        self._pending.append(sample)
        self.n += 1
        if self.n > MAX_ROWS:
            raise exceeded(self.path, "more samples than", f"{MAX_ROWS:,}", where=f"samples[{self.n - 1}]")
        if len(self._pending) >= _CHUNK:
            self._flush()

    def add_structs(
        self,
        rows: list[Any],
        run: bytes,
        extras: tuple[tuple[str, str], ...] = (),
        fit: set[str] | frozenset[str] = frozenset(),
    ) -> dict[str, str]:
        """A run of samples decoded into structs (``_samples_decoder``), a column at a time;
        ``extras`` are the extra keys the structs carry (as ``extra_<i>_``) with their
        decoded type. Returns, for each untyped extra in ``fit``, the type its values in this
        run fit (``_fit``), so the decoder can type it from the next run on."""
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
        for key, kind in self.fields.items():
            column, present = self._fast_column(key, kind, rows, start)
            if present or key in self._keys:
                converted[key] = column
                self._present += present
                if key not in self._keys:
                    fresh.add(key)
        for i, (key, typed) in enumerate(extras):
            attr = _extra_attr(i)
            if typed != "any":  # floats or strings already: checked as a known key of that kind is
                kind = {"text": "str", "bool": "bool"}.get(typed) or (
                    "number" if _kind_by_name(key) == "extra" else "duration"
                )
                column, present = self._fast_column(key, kind, rows, start, attr)
            else:
                values = list(map(attrgetter(attr), rows))
                present = n - values.count(_ABSENT)  # _ABSENT is matched by identity (a NaN equals nothing)
                if present < n:
                    values = [None if v is _ABSENT else v for v in values]
                if key in fit:
                    seen[key] = _fit(key, values) if present else "unseen"
                if not present and key not in self._keys:
                    continue
                column = self._convert(key, values, start)
            if present or key in self._keys:
                converted[key] = column
                self._present += present
                if key not in self._keys:
                    fresh.add(key)
        if fresh:  # new columns, in the order they first appear (as the stream reader orders them)
            import msgspec

            for raw in msgspec.json.decode(run, type=list[msgspec.Raw]):
                for key in msgspec.json.decode(raw):
                    if key in fresh:
                        fresh.discard(key)
                        self._keys[key] = None
                        self._chunks[key] = []
                        self._first_chunk[key] = len(self._chunk_sizes)
                if not fresh:
                    break
        self._check_sparsity()
        for key in self._keys:
            self._chunks[key].append(converted[key])
        self._chunk_sizes.append(n)
        self._chunk_start = self.n
        return seen

    def _fast_column(
        self, key: str, kind: str, rows: list[Any], start: int, attr: str | None = None
    ) -> tuple[np.ndarray, int]:
        """One column of a decoded run (field ``attr``, by default the key) and how many
        samples hold its key. Any value the stream reader would refuse raises (so that
        reader names the first one); so does, for an extra number, one it would keep but
        this path cannot tell from a refused one (2^53 or more)."""
        n = len(rows)
        get = attrgetter(attr or key)
        if kind in _NUMERIC_KINDS or kind == "bool":
            values: list[Any] | None = None
            try:
                arr = np.fromiter(map(get, rows), dtype=np.float64, count=n)  # _ABSENT is a NaN already
            except TypeError:  # a null
                values = list(map(get, rows))
                arr = np.array(values, dtype=np.float64)  # None -> NaN (unknown)
            absent = 0
            if np.isnan(arr).any():
                absent = (values or list(map(get, rows))).count(_ABSENT)
            if kind != "bool":
                # Out of range, infinite, an integer past 2^53 (or a float as large: the stream
                # reader tells them apart), a negative duration or count.
                low = -MAX_SAFE_INT if kind == "number" else 0.0
                if ((arr >= MAX_SAFE_INT) | (arr <= low if kind == "number" else arr < low)).any():
                    raise BadInput(self.path, "a number out of range", where=f"samples.{key}")
                if key in self.bounded and (arr > LATENCY_BOUND_MS).any():
                    raise BadInput(self.path, "a latency past the bound", where=f"samples.{key}")
            return arr, n - absent
        values = list(map(get, rows))
        if kind == "str":
            types = set(map(type, values))
            if types == {str}:
                return self._text(key, values, start), n
            absent = values.count(_ABSENT) if float in types else 0
            return self._text(key, ["" if v is None or v is _ABSENT else str(v) for v in values], start), n - absent
        absent = values.count(_ABSENT)
        if absent:
            values = [None if v is _ABSENT else v for v in values]
        return self._convert(key, values, start), n - absent

    def _flush(self) -> None:
        pending = self._pending
        if not pending:
            return
        keys = self._keys
        first = pending[0].keys()
        uniform = all(map(first.__eq__, map(dict.keys, pending)))  # the same keys in every sample
        if not uniform or first != keys.keys():
            for i, d in enumerate(pending):
                for key in d:
                    if key not in keys:
                        if len(keys) >= MAX_COLUMNS:
                            raise exceeded(
                                self.path,
                                f"sample key {_short(key)} would be column {len(keys) + 1}: more distinct keys than",
                                f"{MAX_COLUMNS:,}",
                                where=f"samples[{self._chunk_start + i}]",
                            )
                        keys[key] = None
                        self._chunks[key] = []
                        self._first_chunk[key] = len(self._chunk_sizes)
        self._present += len(first) * len(pending) if uniform else sum(map(len, pending))
        self._check_sparsity()
        names = list(keys)
        if uniform and first == keys.keys():
            columns = {key: list(map(itemgetter(key), pending)) for key in names}  # C-level, no Python loop
        else:
            columns = {key: [d.get(key) for d in pending] for key in names}  # missing -> None -> unknown
        for key in names:
            self._chunks[key].append(self._convert(key, columns[key], self._chunk_start))
        self._chunk_sizes.append(len(pending))
        self._chunk_start = self.n
        self._pending = []

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
        self._flush()
        out: dict[str, np.ndarray] = {}
        for key in list(self._chunks):
            chunks = self._chunks.pop(key)  # each column's chunks freed as it is joined
            missing_before = sum(self._chunk_sizes[: self._first_chunk[key]])
            if missing_before:
                chunks = [self._convert(key, [None] * missing_before, 0), *chunks]
            if len({c.dtype.kind for c in chunks}) > 1:  # an extra key: numbers in one chunk, text in another
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
        kind = self.fields.get(key) or _kind_by_name(key)
        types = set(map(type, values))
        types.discard(type(None))
        if kind == "str":
            if not types <= {str, int}:
                raise self._fault(
                    key, values, start, lambda v: v is None or type(v) in (str, int), "expected a string, got {type}"
                )
            return self._text(key, ["" if v is None else str(v) for v in values], start)
        if kind == "bool":
            if not types <= {bool}:
                raise self._fault(
                    key, values, start, lambda v: v is None or type(v) is bool, "expected true or false, got {type}"
                )
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
        # numeric kinds
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
        infinite = np.isinf(arr)
        if infinite.any():  # 1e400 decodes to inf: a number out of range, not a value
            i = int(np.argmax(infinite))
            raise BadInput(
                self.path,
                "number out of range (it reads as infinity; a value must be finite)",
                where=f"samples[{start + i}].{key}",
            )
        if int in types:
            big = np.abs(arr) >= MAX_SAFE_INT
            if big.any():
                i = int(np.argmax(big))
                raise BadInput(
                    self.path,
                    f"integer {_short(values[i])} is too large (2^53 or more; write such integers as strings)",
                    where=f"samples[{start + i}].{key}",
                )
        if kind in ("duration", "count"):
            negative = arr < 0
            if negative.any():
                i = int(np.argmax(negative))
                what = "duration" if kind == "duration" else "count"
                raise BadInput(self.path, f"negative {what} {_short(values[i])}", where=f"samples[{start + i}].{key}")
        if key in self.bounded:
            past = arr > LATENCY_BOUND_MS
            if past.any():
                i = int(np.argmax(past))
                raise BadInput(
                    self.path,
                    f"latency {_short(values[i])} ms is beyond {LATENCY_BOUND_MS:g} ms (about 11.6 days): "
                    "not a measurement",
                    where=f"samples[{start + i}].{key}",
                )
        return arr

    def _extra_column(self, key: str, values: list[Any], types: set[type], start: int) -> np.ndarray:
        """An unknown sample key: kept as numbers (booleans among them as 1 and 0), strings, or text.
        Values of several kinds make a text column, each value written as a chunk of its kind
        alone would give it once joined to text (``finish``): a number as its float repr, a string
        as it is, an object or list as JSON. So where chunks fall (1 MiB runs on the fast path,
        16,384 samples in the stream reader) changes nothing."""
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
        if longest and len(joined) == longest * len(
            texts
        ):  # every string as long (ids, UUIDs): one copy of the joined text
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
