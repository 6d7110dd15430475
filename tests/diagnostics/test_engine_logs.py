"""Inference-server and syslog shapes (issue 44): vLLM's month-day stamps and their year, a
one-process log ordered by its lines, KV-cache refusals, a bare ``Exception:`` traceback and
link flaps as observations.

The files under tests/data/failures/{vllm-startup,bench-harness,syslog-link-flap} are written
for these tests from the writers' source (tests/data/failures/README.md says which).
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from io import StringIO
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from workbench.cli import cli
from workbench.diagnostics import classify, diagnose, logs
from workbench.diagnostics.render import render

DATA = Path(__file__).parent.parent / "data" / "failures"
GRAPH_OOM = DATA / "vllm-startup" / "graph-capture-oom.log"
KV_CACHE = DATA / "vllm-startup" / "kv-cache-too-small.log"


def _human(d) -> str:
    out = StringIO()
    render(d.report(), console=Console(file=out, width=80, highlight=False))
    return out.getvalue()


def _utc(*parts: int) -> float:
    return datetime(*parts, tzinfo=timezone.utc).timestamp()


# ---------------------------------------------------------------- one vLLM process, no year


def test_graph_capture_oom_in_one_process_is_the_first_failure_by_line():
    d = diagnose([GRAPH_OOM])
    first = d.first
    assert first.status == "named", first.reason
    assert (first.event.kind, first.event.line) == ("cuda_oom", 28)  # the logger's copy precedes the traceback's
    assert first.event.values["phase"] == "CUDA graph capture"
    assert first.event.values["requested"] == "2.00 GiB"
    assert first.event.time is None and first.event.values["stamp_without_year"] == "10-21 12:39:28"
    assert "in the order they were written" in first.reason
    assert d.failure_class.klass == classify.GPU_MEMORY
    assert d.failure_class.detail == "CUDA allocation failed (tried to allocate 2.00 GiB) during CUDA graph capture"
    assert "enforce_eager" in d.failure_class.record().retry.what_would_change_it
    # the front end's "See root cause above" follows the failure; it is not a second cause
    front = next(e for e in d.events if e.kind == "exception")
    assert (front.role, front.values["exception"]) == ("follower", "RuntimeError")
    text = _human(d)
    assert "First failure: cuda_oom" in text and "undecided" not in text
    assert "Class: gpu-memory-exhaustion" in text
    assert "10-21 12:39:28 (no year)" in text
    assert all(len(line) <= 80 for line in text.splitlines())


def test_year_option_places_the_stamps():
    d = diagnose([GRAPH_OOM], year=2025)
    assert d.first.status == "named"
    # INFO/ERROR 10-21 12:39:28 read as UTC in 2025
    assert d.first.event.time == _utc(2025, 10, 21, 12, 39, 28)
    assert d.first.event.naive and "year 2025 given with --year" in d.first.event.notes
    assert "1 stamp without a year read in 2025 (given with --year)" in d.clock_notes  # the ERROR line
    doc = json.loads(
        CliRunner().invoke(cli, ["diagnose", "--json", "--year", "2025", str(GRAPH_OOM)], catch_exceptions=False).stdout
    )
    assert doc["first_failure"]["event"]["time"] == _utc(2025, 10, 21, 12, 39, 28)


def test_year_option_is_checked():
    result = CliRunner().invoke(cli, ["diagnose", "--year", "25x", str(GRAPH_OOM)])
    assert result.exit_code != 0 and "--year" in result.output


def test_a_log_interleaving_ranks_is_not_ordered_by_line(tmp_path):
    log = tmp_path / "all-ranks.log"
    log.write_text(
        "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n"
    )
    d = diagnose([log])
    assert d.first.status == "undecided"  # two ranks' buffers: line order is not time order


# ---------------------------------------------------------------- the year from the file itself


def test_a_dated_line_of_the_same_file_gives_the_year(tmp_path):
    log = tmp_path / "serve.log"
    log.write_text(
        "2025-10-21 12:30:01,002 INFO launching vllm serve\n"
        "(EngineCore_DP0 pid=7) ERROR 10-21 12:31:05 [core.py:708] torch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 20.00 MiB.\n"
    )
    (e,) = logs.parse_file(log)
    assert e.time == _utc(2025, 10, 21, 12, 31, 5)
    assert e.notes == ["year 2025 taken from line 1 of this file"]


def test_the_year_turns_with_the_log(tmp_path):
    log = tmp_path / "serve.log"
    log.write_text(
        "[2025-12-31 23:59:58,120] INFO still serving\n"
        "ERROR 01-01 00:00:03 [engine.py:12] RuntimeError: boom\n"
        "ERROR 12-31 23:59:59 [engine.py:12] RuntimeError: late line from before midnight\n"
    )
    first, second = logs.parse_file(log)
    assert first.time == _utc(2026, 1, 1, 0, 0, 3)  # closest to its dated neighbour: the next year
    assert second.time == _utc(2025, 12, 31, 23, 59, 59)


def test_the_file_date_is_never_the_context(tmp_path):
    log = tmp_path / "serve.log"
    log.write_text("ERROR 10-21 12:31:05 [core.py:708] torch.OutOfMemoryError: CUDA out of memory.\n")
    os.utime(log, (_utc(2019, 6, 1, 0, 0, 0), _utc(2019, 6, 1, 0, 0, 0)))
    (e,) = logs.parse_file(log)
    assert e.time is None and e.partial is not None
    d = diagnose([log])
    assert any("give --year" in n for n in d.clock_notes)


def test_another_input_lends_its_year_when_the_file_has_none(tmp_path):
    (tmp_path / "serve.log").write_text(
        "ERROR 10-21 12:31:05 [core.py:708] torch.OutOfMemoryError: CUDA out of memory.\n"
    )
    (tmp_path / "kern.log").write_text("2024-10-21T12:31:09+00:00 node kernel: NVRM: Xid (PCI:0000:3b:00): 43, pid=9\n")
    d = diagnose([tmp_path / "serve.log", tmp_path / "kern.log"])
    oom = next(e for e in d.events if e.kind == "cuda_oom")
    assert oom.time == _utc(2024, 10, 21, 12, 31, 5) and "other stamps in the inputs" in oom.notes[0]


@pytest.mark.parametrize(
    "line,time,rest",
    [
        # vLLM >= 0.6 (vllm/logger.py _FORMAT) behind its worker prefix and a compose service name
        (
            "vllm-1  | (VllmWorker rank=1 pid=88) WARNING 03-09 12:56:57 [utils.py:302] RuntimeError: x",
            (3, 9, 12, 56, 57),
            "RuntimeError: x",
        ),
        # vLLM < 0.6: no opening bracket before the file name
        ("INFO 10-21 12:39:26 llm_engine.py:72] RuntimeError: x", (10, 21, 12, 39, 26), "RuntimeError: x"),
        # ANSI colour around the worker prefix (vllm _add_prefix when a terminal is attached)
        ("\x1b[1;36m(EngineCore_DP0 pid=5)\x1b[0;0m ERROR 10-21 12:39:26 [c.py:1] E: x", (10, 21, 12, 39, 26), "E: x"),
    ],
)
def test_engine_stamps_without_a_year(line, time, rest):
    stamp: logs._Stamp = {}
    body, _, _ = logs._read_prefixes(line, stamp)
    p = stamp["partial"]
    assert (p.month, p.day, p.hour, p.minute, int(p.second)) == time
    assert body == rest


def test_sglang_stamps_carry_a_year_and_ranks():
    stamp: logs._Stamp = {}
    body, _, _ = logs._read_prefixes("[2025-10-21 12:39:26 DP0 TP1] Scheduler hit an exception", stamp)
    assert stamp["time"] == _utc(2025, 10, 21, 12, 39, 26) and body == "Scheduler hit an exception"


def test_log_format_names_the_engine_stamps():
    for path in (GRAPH_OOM, KV_CACHE):
        assert logs.log_format(path) == "vLLM / Python logging LEVEL MM-DD HH:MM:SS (no year)"


# ---------------------------------------------------------------- KV-cache refusals


def test_kv_cache_refusal_is_classified_with_what_vllm_states():
    d = diagnose([KV_CACHE])
    assert d.first.status == "named"
    e = d.first.event
    assert (e.kind, e.line) == ("kv_cache_config", 15)
    assert e.values["phase"] == "KV cache allocation"
    # Llama-3.1-8B: 32 layers x (K, V) x 8 KV heads x 128 dims x 2 bytes = 128 KiB a token;
    # 131,072 tokens need 16.00 GiB; 3.73 GiB hold 3.73 * 2**30 / 2**17 = 30,556 tokens, 30,544 in blocks of 16.
    assert e.values["max_model_len"] == 131072
    assert e.values["needed_gib"] == pytest.approx(131072 * 2**17 / 2**30)
    assert e.values["available_gib"] == 3.73
    assert e.values["estimated_max_model_len"] == int(3.73 * 2**30 / 2**17) // 16 * 16
    fc = d.failure_class
    assert fc.klass == classify.GPU_MEMORY
    assert fc.detail == (
        "vLLM's KV cache cannot hold one request of max_model_len 131072: 16.00 GiB needed, 3.73 GiB available; "
        "vLLM estimates max_model_len 30544 fits"
    )
    assert "lower max_model_len" in fc.record().retry.what_would_change_it
    assert "Class: gpu-memory-exhaustion" in _human(d)


@pytest.mark.parametrize(
    "line,values",
    [
        (
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
            "initializing the engine.",
            {"engine": "vllm", "available_gib": 0.0},
        ),
        (
            "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be "
            "stored in KV cache (20512). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine.",
            {"engine": "vllm", "max_model_len": 32768, "kv_cache_tokens": 20512},
        ),
        (
            "ValueError: To serve at least one request with the model's max seq len (262144), 5.84 GiB KV cache is "
            "needed, which is larger than the available KV cache memory (4.92 GiB). Estimated maximum model length "
            "is 214240.",
            {
                "engine": "vllm",
                "max_model_len": 262144,
                "needed_gib": 5.84,
                "available_gib": 4.92,
                "estimated_max_model_len": 214240,
            },
        ),
        (
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
            {"engine": "sglang", "available_gib": 0.0},
        ),
    ],
)
def test_kv_cache_refusal_variants(tmp_path, line, values):
    log = tmp_path / "serve.log"
    log.write_text(f'Traceback (most recent call last):\n  File "x.py", line 1, in f\n{line}\n')
    (e,) = logs.parse_file(log)
    assert (e.kind, e.role) == ("kv_cache_config", "failure")
    assert e.values == values


# ---------------------------------------------------------------- bare exceptions


def test_a_bare_exception_ending_a_traceback_is_found():
    d = diagnose([DATA / "bench-harness" / "run.log"])
    assert d.first.status == "named"
    e = d.first.event
    assert (e.kind, e.line) == ("exception", 16)
    assert e.values == {"exception": "Exception", "message": "Server did not start on time"}
    assert "phase" not in e.values  # the server's phase lines are another process's
    assert d.failure_class.klass == classify.APPLICATION


def test_a_bare_error_word_outside_a_traceback_is_not_an_exception(tmp_path):
    log = tmp_path / "tool.log"
    log.write_text("Error: the cache directory is missing, creating it\nException: none recorded\n")
    assert logs.parse_file(log) == []


# ---------------------------------------------------------------- syslog host events


def test_link_flaps_are_observations_not_failures():
    d = diagnose([DATA / "syslog-link-flap" / "syslog"], year=2025)
    assert d.first.status == "none"
    assert d.failure_class.klass == classify.NONE
    assert not [e for e in d.events if e.role != "info"]
    links = [e for e in d.events if e.kind == "link_state"]
    # 6 networkd downs and 6 ups, plus mlx5's own "Link down/up" for the first flap (the same change)
    assert len(links) == 14
    texts = [o.text for o in d.observations]
    flap = next(t for t in texts if t.startswith("Link ib6"))
    assert flap.startswith(
        "Link ib6 on gpu-node-17 went down 6 times and came up 6 times between 2025-10-21 03:12:40 UTC and "
        "2025-10-21 03:25:36 UTC (a link flap; an observation, not a failure"
    )
    assert any(t.startswith("1 corrected PCIe error on gpu-node-17 (from 0000:d2:00.0)") for t in texts)
    assert any(t.startswith("The clock of gpu-node-17 was stepped by -0.812 s") for t in texts)
    assert "went down 6 times" in _human(d)


def test_one_link_down_is_not_called_a_flap(tmp_path):
    log = tmp_path / "kern.log"
    log.write_text("Oct 21 03:12:40 n1 kernel: e1000e 0000:00:1f.6 eno1: NIC Link is Down\n")
    (text,) = [o.text for o in diagnose([log]).observations]
    assert text.startswith("Link eno1 on n1 went down 1 time and came up 0 times at 10-21 03:12:40 (year unknown)")
    assert "flap" not in text


def test_every_phase_and_host_event_line_is_scanned():
    """logs.py reads only lines with a keyword: each phase text and sample line must carry one."""
    from workbench.diagnostics import engine_logs

    lines = [text for text, _ in engine_logs.STARTUP_PHASES] + [
        "ib6: Lost carrier",
        "mlx5_core 0000:d2:00.0 ib6: Link down",
        "igb 0000:01:00.0 eth0: igb: eth0 NIC Link is Up 1000 Mbps",
        "pcieport 0000:00:03.0: AER: Correctable error message received from 0000:3b:00.0",
        "chronyd[1203]: System clock was stepped by 2.5 seconds",
        "ValueError: No available memory for the cache blocks.",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
    ]
    for line in lines:
        assert any(k in line for k in logs._KEYWORDS), line
