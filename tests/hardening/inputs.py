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
    path.write_text('{"schemaVersion":1,"deviceProperties":[],"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"x":'
                    + "[" * depth + "]" * depth + "}}]}")
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
    return _gzip_repeated(path, b'{"backend":"vllm","model_id":"m","request_throughput":1.0,"ttfts":[', b"0,", zeros, b'0]}')


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
    entry = {"process_group": ["0", "default"], "collective_seq_id": 1, "profiling_name": "nccl:all_reduce",
             "state": "scheduled", "time_created_ns": 1, "input_sizes": [[4]], "output_sizes": [[4]]}
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
    path.write_text('{"version":"2.4","pg_config":{},"pg_status":{},"entries":[],"x":' + "[" * depth + "]" * depth + "}")
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
    path.write_text('{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{"spanId":"a","attributes":'
                    f'[{{"key":"gen_ai.latency.e2e","value":{value}}}]}}]}}]}}]}}')
    return path


def native_capture(path: Path, label: str = "ok", ttft: float = 1.0, n: int = 3) -> Path:
    doc = {"format": "workbench.capture/1", "lens": "inference", "label": label,
           "samples": [{"id": f"r{i}", "ttft_ms": ttft + i} for i in range(n)]}
    path.write_text(json.dumps(doc))
    return path
