"""Hostile inputs from issue 16, each written at a chosen scale.

The tests write the smallest size that shows the fault; ``bench/hostile.py`` writes the
issue's own reproductions (``BENCH`` sizes). Every writer streams, so even the large
variants cost little memory or time to make.
"""

from __future__ import annotations

import gzip
import json
import pickle
import sqlite3
from pathlib import Path

NATIVE_HEAD = '{"format":"workbench.capture/1","lens":"inference",'


def _gzip_repeated(path: Path, head: bytes, unit: bytes, count: int, tail: bytes) -> Path:
    """A gzip of ``head + unit * count + tail``, compressed a block at a time."""
    block = unit * max(1, (1 << 20) // len(unit))
    with gzip.open(path, "wb", compresslevel=6) as f:
        f.write(head)
        left = count
        while left > 0:
            n = min(left, len(block) // len(unit))
            f.write(block[: n * len(unit)])
            left -= n
        f.write(tail)
    return path


def distinct_keys(path: Path, keys: int) -> Path:
    """Item 1: each sample has a new key (memory grew with keys x samples)."""
    samples = ",".join(f'{{"k{i}":1}}' for i in range(keys))
    path.write_text(NATIVE_HEAD + f'"samples":[{samples}]}}')
    return path


def kineto_deep(path: Path, depth: int) -> Path:
    """Item 2: a Kineto trace whose event nests arrays ``depth`` deep."""
    path.write_text(
        '{"schemaVersion":1,"deviceProperties":[],"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"x":'
        + "[" * depth
        + "]" * depth
        + "}}]}"
    )
    return path


def kineto_events_object(path: Path) -> Path:
    """Item 9: ``"traceEvents": {"a": 1}``."""
    path.write_text('{"schemaVersion":1,"deviceProperties":[],"traceEvents":{"a":1}}')
    return path


def nsys_recursive_strings(path: Path) -> Path:
    """Item 3: an Nsight export whose StringIds is an endless recursive view."""
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
        INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.11.0'), ('EXPORT_SCHEMA_VERSION_MAJOR', '3');
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, "end" INT, deviceId INT, streamId INT, correlationId INT,
                                                 globalPid INT, demangledName INT, shortName INT);
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, 7, 1, 16777216, 5, 5);
        CREATE VIEW StringIds AS WITH RECURSIVE r(id, value) AS (SELECT 0, 'x' UNION ALL SELECT id + 1, value || 'x' FROM r)
            SELECT id, value FROM r;
    """)
    con.commit()
    con.close()
    return path


def vllm_zeros(path: Path, zeros: int) -> Path:
    """Item 4: a gzipped vLLM result whose ``ttfts`` is ``zeros`` zeros."""
    return _gzip_repeated(
        path, b'{"backend":"vllm","model_id":"m","request_throughput":1.0,"ttfts":[', b"0,", zeros, b"0]}"
    )


def label_bomb(path: Path, chars: int) -> Path:
    """Item 4: a native capture whose label is ``chars`` characters, gzipped."""
    return _gzip_repeated(path, (NATIVE_HEAD + '"label":"').encode(), b"a", chars, b'","samples":[{"ttft_ms":1}]}')


def sparse_nuls(path: Path, size: int) -> Path:
    """Item 4: a native header, then NULs to ``size`` bytes (a sparse file: no disk used)."""
    head = (NATIVE_HEAD + '"samples":[').encode()
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


def pickle_backrefs(path: Path, refs: int) -> Path:
    """Item 5: a gzipped flight-recorder pickle whose entries are ``refs`` references to one dict."""
    entry = {
        "process_group": ["0", "default"],
        "collective_seq_id": 1,
        "profiling_name": "nccl:all_reduce",
        "state": "scheduled",
        "time_created_ns": 1,
        "input_sizes": [[4]],
        "output_sizes": [[4]],
    }
    doc = {"version": "2.4", "rank": 0, "pg_config": {}, "pg_status": {}, "entries": [entry] * refs}
    path.write_bytes(gzip.compress(pickle.dumps(doc, protocol=2), compresslevel=9))
    return path


def bundle_tiny_arrays(path: Path, arrays: int) -> Path:
    """Item 5: a bundle-shaped JSON document holding ``arrays`` empty arrays."""
    with open(path, "w") as f:
        f.write('{"format_version":"1","evidence":[')
        block = "[]," * 100_000
        left = arrays - 1
        while left > 0:
            n = min(left, 100_000)
            f.write(block[: 3 * n])
            left -= n
        f.write("[]]}")
    return path


def deep_sample(path: Path, depth: int) -> Path:
    """Item 9: arrays nested ``depth`` deep inside a sample."""
    path.write_text(NATIVE_HEAD + '"samples":[{"x":' + "[" * depth + "]" * depth + "}]}")
    return path


def long_integer(path: Path, digits: int) -> Path:
    """Item 9: an integer of ``digits`` digits in a sample."""
    path.write_text(NATIVE_HEAD + '"samples":[{"ttft_ms":1' + "0" * (digits - 1) + "}]}")
    return path


def bundle_long_integer(path: Path, digits: int) -> Path:
    path.write_text('{"format_version":"1","n":1' + "0" * (digits - 1) + "}")
    return path


def dump_long_integer(path: Path, digits: int) -> Path:
    """A flight-recorder JSON dump with a ``digits``-digit rank."""
    path.write_text('{"version":"2.4","pg_config":{},"pg_status":{},"rank":1' + "0" * (digits - 1) + ',"entries":[]}')
    return path


def dump_deep_json(path: Path, depth: int) -> Path:
    path.write_text(
        '{"version":"2.4","pg_config":{},"pg_status":{},"entries":[],"x":' + "[" * depth + "]" * depth + "}"
    )
    return path


def lone_surrogate_label(path: Path) -> Path:
    path.write_text(NATIVE_HEAD + '"label":"a\\ud800b","samples":[{"ttft_ms":1}]}')
    return path


def infinity_sample(path: Path) -> Path:
    """Item 8: ``1e400`` in a known sample field."""
    path.write_text(NATIVE_HEAD + '"samples":[{"ttft_ms":1e400}]}')
    return path


def otlp_span(path: Path, value: str) -> Path:
    """Item 11: one request span whose e2e latency AnyValue is ``value`` (JSON text)."""
    path.write_text(
        '{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{"spanId":"a","attributes":'
        f'[{{"key":"gen_ai.latency.e2e","value":{value}}}]}}]}}]}}]}}'
    )
    return path


def native_capture(path: Path, label: str = "ok", ttft: float = 1.0, n: int = 3) -> Path:
    doc = {
        "format": "workbench.capture/1",
        "lens": "inference",
        "label": label,
        "samples": [{"id": f"r{i}", "ttft_ms": ttft + i} for i in range(n)],
    }
    path.write_text(json.dumps(doc))
    return path


# -- issue 28 ------------------------------------------------------------------------------

_DUMP_HEAD = {"version": "2.4", "rank": 0, "pg_config": {}}
HASH_MODULUS = (1 << 61) - 1  # ints that differ by a multiple of it hash alike


def _pickle_str(text: str) -> bytes:
    data = text.encode()
    return b"X" + len(data).to_bytes(4, "little") + data  # BINUNICODE


def _pickle_int(n: int) -> bytes:
    data = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(data)]) + data  # LONG1


def _dump_pickle(path: Path, tail: bytes, *, gz: bool = True) -> Path:
    """A dump pickle (gzipped unless ``gz`` is false): the usual header keys, then ``tail``
    (opcodes that leave one more key and value on the stack above the dict), SETITEM, STOP."""
    head = b"\x80\x02}"  # PROTO 2, EMPTY_DICT
    for key, value in _DUMP_HEAD.items():
        head += (
            _pickle_str(key)
            + (_pickle_str(value) if isinstance(value, str) else b"K\x00" if value == 0 else b"}")
            + b"s"
        )
    data = head + tail + b"s."
    path.write_bytes(gzip.compress(data, compresslevel=9) if gz else data)
    return path


def pickle_deep_tuple_key(path: Path, depth: int) -> Path:
    """Item 5: a dump whose pg_status has one key, a tuple nested ``depth`` deep (hashing it segfaulted)."""
    return _dump_pickle(path, _pickle_str("pg_status") + b"}" + b")" + b"\x85" * depth + b"Ns")


def pickle_alike_keys(path: Path, keys: int) -> Path:
    """Item 5: a dump whose pg_status holds ``keys`` integer keys that all hash alike (quadratic)."""
    body = bytearray(_pickle_str("pg_status") + b"}")
    for start in range(0, keys, 1000):
        body += b"("
        for i in range(start + 1, min(keys, start + 1000) + 1):
            body += _pickle_int(i * HASH_MODULUS) + b"N"
        body += b"u"  # SETITEMS
    return _dump_pickle(path, bytes(body))


def pickle_string_backrefs(path: Path, refs: int, chars: int = 1 << 20) -> Path:
    """Item 5: a dump whose entries are ``refs`` back-references to one string of ``chars`` characters."""
    body = _pickle_str("entries") + b"]" + _pickle_str("x" * chars) + b"q\x01a(" + b"h\x01" * (refs - 1) + b"e"
    return _dump_pickle(path, body)


# -- issue 45 ------------------------------------------------------------------------------


def pickle_rehashed_tuple_key(path: Path, elements: int, uses: int) -> Path:
    """Item 2: a plain dump pickle whose pg_status uses one key, a tuple holding a tuple of
    ``elements`` values, ``uses`` times (by back-reference): a tuple keeps no hash, so each
    insert hashes every element again (1M x 60,000: a 1.2 MB file, 6e10 steps)."""
    body = _pickle_str("pg_status") + b"}" + b"(" + b"N" * elements + b"t\x85q\x01Ns" + b"h\x01Ns" * (uses - 1)
    return _dump_pickle(path, body, gz=False)


def pickle_plain(path: Path, size: int) -> Path:
    """The anchor for the pickle cases: a dump of about ``size`` bytes of ordinary entries."""
    entry = {
        "process_group": ("0", "default"),
        "collective_seq_id": 1,
        "profiling_name": "nccl:all_reduce",
        "input_sizes": [[4096, 1, 5120]],
        "output_sizes": [[4096, 1, 5120]],
        "input_dtypes": ["BFloat16"],
        "output_dtypes": ["BFloat16"],
        "state": "completed",
        "time_created_ns": 1,
    }
    one = len(pickle.dumps(entry, protocol=2))
    entries = [{**entry, "collective_seq_id": i} for i in range(max(1, size // one))]
    doc = {**_DUMP_HEAD, "pg_config": {"0": {"desc": "default", "ranks": "[0, 1]"}}, "entries": entries}
    path.write_bytes(pickle.dumps(doc, protocol=2))
    return path


def stats_csv(path: Path, rounds: int, *, arms: tuple[str, ...] = ("A", "B"), size: int = 0) -> Path:
    """Item 2: a `wb stats` CSV of ``rounds`` rounds of ``arms``; with ``size``, a note column pads
    it to about that many bytes (the anchor: a valid file as large as the hostile one)."""
    lines = [f"{r},{arm},{1 + (r % 97) / 100:.4f}" for r in range(rounds) for arm in arms]
    pad = max(0, (size - 20 - sum(len(line) + 2 for line in lines)) // max(len(lines), 1)) if size else 0
    with open(path, "w") as f:
        f.write("round,arm,value" + (",note\n" if size else "\n"))
        for line in lines:
            f.write(line + ("," + "n" * pad if size else "") + "\n")
    return path


REAL_INFERENCE_PERF = (
    Path(__file__).resolve().parents[1] / "data" / "inference" / "real" / "inference-perf-kubecon-na-2025"
)


def manifest_long_argument(folder: Path, argument: str) -> Path:
    """Item 2: inference-perf results beside a manifests.yaml whose engine has one more
    positional argument, ``argument`` (``-a-a-a...``: the secret-hiding pattern was quadratic)."""
    import shutil

    shutil.copytree(REAL_INFERENCE_PERF / "vllm" / "results", folder / "results")
    text = (REAL_INFERENCE_PERF / "vllm" / "manifests.yaml").read_text()
    anchor = '        - "--no-enable-chunked-prefill"\n'
    (folder / "manifests.yaml").write_text(text.replace(anchor, anchor + f'        - "{argument}"\n', 1))
    return folder / "results"


def native_label_bytes(path: Path, label: bytes) -> Path:
    """Item 7: a native capture whose label is these bytes (invalid UTF-8, or the anchor's valid ones)."""
    path.write_bytes(NATIVE_HEAD.encode() + b'"label":"' + label + b'","samples":[{"id":"r1","ttft_ms":1.0}]}')
    return path


def dump_pair(folder: Path, **entry: object) -> Path:
    """Item 7: two ranks' flight-recorder dumps; rank 0's entry has ``entry``'s fields."""
    folder.mkdir(parents=True, exist_ok=True)
    for rank in (0, 1):
        e = {
            "process_group": ["0", "default"],
            "collective_seq_id": 1,
            "profiling_name": "nccl:all_reduce",
            "input_sizes": [[4]],
            "output_sizes": [[4]],
            "input_dtypes": ["Float"],
            "output_dtypes": ["Float"],
            "state": "scheduled",
            "time_created_ns": 1,
            **(entry if rank == 0 else {}),
        }
        doc = {**_DUMP_HEAD, "rank": rank, "pg_config": {"0": {"desc": "default", "ranks": "[0, 1]"}}, "entries": [e]}
        (folder / f"_dump_{rank}").write_bytes(pickle.dumps(doc, protocol=2))
    return folder


def torchrun_error_file(folder: Path, timestamp: str) -> Path:
    """Item 7: a torchelastic error.json whose extraInfo.timestamp is ``timestamp``."""
    (folder / "attempt_0" / "3").mkdir(parents=True, exist_ok=True)
    doc = {"message": {"message": "RuntimeError: boom", "extraInfo": {"py_callstack": "x", "timestamp": timestamp}}}
    (folder / "attempt_0" / "3" / "error.json").write_text(json.dumps(doc))
    return folder


def yaml_alike_keys(path: Path, keys: int) -> Path:
    """Item 5: a ConfigMap-like YAML whose data mapping has ``keys`` integer keys that hash alike."""
    with open(path, "w") as f:
        f.write("apiVersion: v1\nkind: ConfigMap\ndata:\n")
        for i in range(1, keys + 1):
            f.write(f"  {i * HASH_MODULUS}: x\n")
    return path


def nsys_export(
    path: Path,
    *,
    kernels: list[tuple] = ((1, 2),),
    strings: list[tuple] = ((5, "k"),),
    nvtx: list[tuple] = (),
    string_value: str | None = None,
) -> Path:
    """An Nsight export with the given kernel (start, end) rows, StringIds rows and NVTX
    ranges (start, end, text); ``string_value`` makes StringIds.value a generated column."""
    con = sqlite3.connect(path)
    value_col = "n INT" if string_value else "n INT, value TEXT"
    con.executescript(f"""
        CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
        INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.11.0'), ('EXPORT_SCHEMA_VERSION_MAJOR', '3');
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, "end" INT, deviceId INT, streamId INT, correlationId INT,
                                                 globalPid INT, demangledName INT, shortName INT);
        CREATE TABLE StringIds (id INTEGER, {value_col});
        CREATE TABLE NVTX_EVENTS (start INT, "end" INT, eventType INT, text TEXT);
    """)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 7, 1, 16777216, 5, 5)", kernels)
    if string_value:
        con.executemany("INSERT INTO StringIds (id, n) VALUES (?, ?)", strings)
    else:
        con.executemany("INSERT INTO StringIds (id, value) VALUES (?, ?)", strings)
    con.executemany("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, ?)", nvtx)
    con.commit()
    if string_value:  # SQLite would compute the column on insert: added to the schema afterwards (not stored)
        con.execute("PRAGMA writable_schema = ON")
        con.execute(
            "UPDATE sqlite_master SET sql = ? WHERE name = 'StringIds'",
            (f"CREATE TABLE StringIds (id INTEGER, n INT, value TEXT GENERATED ALWAYS AS ({string_value}) VIRTUAL)",),
        )
        con.commit()
    con.close()
    return path
