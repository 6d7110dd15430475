"""Issue 45: a fuzz harness for the importers, run in CI on a fixed seed.

Small real-format fixtures (native captures of each lens, a Kineto trace, benchmark results of
vLLM, SGLang, GuideLLM, AIPerf and GenAI-Perf, Prometheus scrapes, Slurm accounting, OTLP
spans) are mutated a bounded number of times: bytes flipped, cut, dropped or repeated, and
hostile tokens put in (``NaN``, ``1e400``, 25-digit and negative numbers, lone surrogates,
invalid UTF-8, NUL, bidi controls, deep nesting, wrong types). Each mutant goes through
``wb import`` as a user runs it: it is read (exit 0) or refused in one line (exit 2, never
"internal error"), within a time allowance. A failure names the fixture, the mutant's number
and what was done to it; ``FUZZ_SEED``/``FUZZ_MUTANTS`` in the environment rerun it wider.
"""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path


from tests.hardening.regex_work import TooSlow, allowance
from tests.hardening.test_refusals import wb

DATA = Path(__file__).resolve().parents[1] / "data"
SEED = int(os.environ.get("FUZZ_SEED", "45"))
MUTANTS = int(os.environ.get("FUZZ_MUTANTS", "300"))  # spread over the fixtures
ALLOWANCE_S = 30.0  # one mutant's import, on a loaded machine (a hang, not a speed bound)

HOSTILE = [
    b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400", b"-1", b"0", b"1e-400", b"9999999999999999999999999",
    b"-9223372036854775809", b"1" * 400, b'"\\ud800"', b"\xff\xfe", b"\xed\xa0\x80", b"\x00", b'"\xe2\x80\xae"',
    b"[" * 80, b"{" * 40, b'{"a":' * 30, b"null", b"true", b'""', b"[]", b"{}", b'"x"', b",", b":", b'"', b"\\",
    b"\n", b"\r\n", b"|", b"\t", b" " * 64, b"# x\n",
]  # fmt: skip
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_STRING = re.compile(rb'"[^"\\\n]{0,64}"')


def _native(lens: str) -> dict:
    samples = {
        "inference": [{"id": f"r{i}", "ttft_ms": 10.0 + i, "output_tokens": 8, "prompt_tokens": 32} for i in range(4)],
        "training": [{"step": i, "rank": 0, "step_ms": 100.0 + i} for i in range(4)],
        "fleet": [
            {"job": str(i), "gpus": 4, "submit": 1790000000 + i, "start": 1790000100 + i, "end": 1790000200 + i}
            for i in range(4)
        ],
    }[lens]
    doc = {"format": "workbench.capture/1", "lens": lens, "label": f"{lens} run", "samples": samples}
    if lens == "fleet":
        doc["pool"] = {"capacity_gpus": 16}
    else:
        doc["dimensions"] = {"model": "m", "hardware": "H100"}
    return doc


def _fixtures(root: Path) -> list[Path]:
    made = []
    for lens in ("inference", "training", "fleet"):
        made.append(root / f"native_{lens}.json")
        made[-1].write_text(json.dumps(_native(lens)))
    kineto = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}],
        "traceEvents": [
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
            {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 10, "dur": 50, "pid": 0, "tid": 7, "args": {}},
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "ts": 100, "dur": 100, "pid": 1, "tid": 1},
            {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 110, "dur": 60, "pid": 0, "tid": 7, "args": {}},
        ],
    }
    made.append(root / "kineto_trace.json")
    made[-1].write_text(json.dumps(kineto))
    inference = DATA / "inference"
    for name in (
        "vllm_bench_serve.json",
        "sglang_bench_2025_mid.jsonl",
        "guidellm_v03.json",
        "aiperf_profile_export_aiperf.json",
        "aiperf_profile_export_current.jsonl",
        "genai_perf_aggregate.json",
        "vllm_bench_summaries.jsonl",
        "otlp_spans.jsonl",
    ):
        if (inference / name).stat().st_size <= 32 << 10:
            made.append(inference / name)
    made.append(DATA / "fleet" / "gcm" / "sample-sacct-output-midnight-edge-case-small.txt")
    scrape = root / "vllm_before.prom"
    scrape.write_bytes(b"\n".join((inference / "vllm_before.prom").read_bytes().splitlines()[:60]) + b"\n")
    made.append(scrape)
    return [p for p in made if p.exists()]


def _mutate(data: bytes, rng: random.Random) -> tuple[bytes, list[str]]:
    """``data`` with one to three mutations, and what they were."""
    done = []
    for _ in range(rng.randint(1, 3)):
        op = rng.choice(("flip", "cut", "drop", "repeat", "insert", "number", "string"))
        n = len(data)
        at = rng.randrange(max(n, 1))
        if op == "flip" and n:
            data = data[:at] + bytes([rng.randrange(256)]) + data[at + 1 :]
        elif op == "cut":
            data = data[:at]
        elif op == "drop":
            data = data[:at] + data[at + rng.randint(1, 64) :]
        elif op == "repeat":
            span = data[at : at + rng.randint(1, 64)]
            data = data[:at] + span * rng.randint(2, 50) + data[at:]
        elif op == "insert":
            data = data[:at] + rng.choice(HOSTILE) + data[at:]
        else:
            found = list((_NUMBER if op == "number" else _STRING).finditer(data))
            if not found:
                continue
            m = rng.choice(found)
            token = rng.choice(HOSTILE) if op == "number" else b'"' + rng.choice(HOSTILE).strip(b'"') + b'"'
            data = data[: m.start()] + token + data[m.end() :]
        done.append(f"{op}@{at}")
    return data, done


def test_every_mutant_is_read_or_refused_in_one_line(capsys, tmp_path):
    rng = random.Random(SEED)
    fixtures = _fixtures(tmp_path)
    assert len(fixtures) >= 12
    store = f"sqlite:///{tmp_path / 'wb.sqlite'}"
    failures, outcomes = [], {0: 0, 2: 0}
    for i in range(MUTANTS):
        source = fixtures[i % len(fixtures)]
        data, how = _mutate(source.read_bytes(), rng)
        mutant = tmp_path / f"m{i}" / source.name  # the fixture's name: detection may read it
        mutant.parent.mkdir()
        mutant.write_bytes(data)
        try:
            with allowance(ALLOWANCE_S):
                rc, _out, err = wb(capsys, "--store", store, "import", str(mutant))
        except TooSlow:
            failures.append(f"{source.name} mutant {i} ({', '.join(how)}): still running after {ALLOWANCE_S:g} s")
            continue
        lines = [line for line in err.splitlines() if line.strip()]
        refused_well = rc == 2 and len(lines) == 1 and lines[0].startswith("wb: error: ")
        if rc not in outcomes or "internal error" in err or (rc == 2 and not refused_well):
            failures.append(f"{source.name} mutant {i} ({', '.join(how)}): exit {rc}: {err.strip()[:300]}")
        else:
            outcomes[rc] += 1
    assert not failures, f"seed {SEED}:\n" + "\n".join(failures)
    assert outcomes[0] and outcomes[2]  # some mutants still read, some are refused: the mutations bite
