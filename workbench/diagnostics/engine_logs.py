"""Inference-engine start-up in a server log: the KV-cache refusals of vLLM and SGLang, the
start-up phase a failure happened in, and the front end's "see root cause above" line.

The line shapes are the engines' own messages:

* vLLM v1 ``vllm/v1/core/kv_cache_utils.py`` ``_check_enough_kv_cache_memory``: "No available
  memory for the cache blocks." and "To serve at least one request with the models's max seq
  len (N), (X GiB KV cache is needed, which is larger than the available KV cache memory (Y GiB).
  Based on the available memory, the estimated maximum model length is M." (later releases
  spell "model's" and drop the parenthesis before X);
* vLLM v0 ``raise_if_cache_size_invalid``: "The model's max seq len (N) is larger than the
  maximum number of tokens that can be stored in KV cache (M).";
* SGLang ``model_runner``/``pool_configurator``: "Not enough memory. Please try to increase
  --mem-fraction-static.";
* vLLM ``v1/engine/utils.py`` ``wait_for_engine_startup``: "RuntimeError: Engine core
  initialization failed. See root cause above." and ``EngineDeadError``'s "See stack trace
  (above) for the root cause.": the cause is on another line.
"""

from __future__ import annotations

import re

from workbench.diagnostics.events import EventValues

KV_CACHE_KIND = "kv_cache_config"

_KV_V1 = re.compile(
    r"To serve at least one request with the models?'s max seq len \((\d{1,12})\),? \(?([\d.]{1,16}) GiB KV cache is "
    r"needed, which is larger than the available KV cache memory \((-?[\d.]{1,16}) GiB\)\.?"
    r"(?: Based on the available memory,)?(?: the)?(?: [Ee]stimated maximum model length is (\d{1,12}))?"
)
_KV_V0 = re.compile(
    r"The model's max seq len \((\d{1,12})\) is larger than the maximum number of tokens that can be stored in KV "
    r"cache \((\d{1,12})\)"
)
_KV_NONE = "No available memory for the cache blocks"
_SGLANG_NONE = "Not enough memory. Please try to increase --mem-fraction-static"

# A failure line that says its cause was logged elsewhere (it follows the root cause).
_POINTS_ELSEWHERE = re.compile(r"See root cause above|for the root cause|See stack trace \(above\)")

# (text of an engine log line, the start-up phase that begins there), first match wins.
# vLLM v1: gpu_model_runner "Starting to load model", gpu_worker "Available KV cache memory",
# the capture bar "Capturing CUDA graphs (...)" and "Graph capturing finished"; vLLM v0:
# "Capturing cudagraphs for decoding" / "Capturing the model for CUDA graphs"; SGLang
# cuda_graph_runner "Capture cuda graph begin/end"; uvicorn "Application startup complete";
# SGLang "The server is fired up and ready to roll".
STARTUP_PHASES: tuple[tuple[str, str], ...] = (
    ("Starting to load model", "model loading"),
    ("Load weight begin", "model loading"),
    ("Available KV cache memory", "KV cache allocation"),
    ("Memory pool end", "KV cache allocation"),
    ("Capturing CUDA graph", "CUDA graph capture"),
    ("Capturing cudagraphs", "CUDA graph capture"),
    ("Capturing the model for CUDA graphs", "CUDA graph capture"),
    ("Capture cuda graph begin", "CUDA graph capture"),
    ("Graph capturing finished", "engine start-up after CUDA graph capture"),
    ("Capture cuda graph end", "engine start-up after CUDA graph capture"),
    ("Application startup complete", "serving"),
    ("fired up and ready to roll", "serving"),
)

# Every line this module reads contains one of these (logs.py scans only such lines; each
# keyword is one pass over a block, so they are few and short: "aptur" is Capturing/Capture).
KEYWORDS = (
    "KV cache",
    "cache blocks",
    "mem-fraction-static",
    "aptur",
    "load model",
    "Load weight",
    "Memory pool end",
    "startup complete",
    "ready to roll",
)

# What would have to change for a retry to pass, by the signature that named the class.
KV_CACHE_RETRY = (
    "a KV cache that holds one request of max_model_len: a lower max_model_len (vLLM states the longest that "
    "fits), a higher gpu_memory_utilization (SGLang: mem_fraction_static), or more GPUs for the model (tensor "
    "parallelism); an unchanged retry fails the same way"
)
GRAPH_CAPTURE_RETRY = (
    "memory left for CUDA graph capture: a lower gpu_memory_utilization (the KV cache takes what it leaves), fewer "
    "or smaller capture sizes (max_num_seqs, cudagraph_capture_sizes), or no graphs (enforce_eager)"
)


def phase_of(line: str) -> str | None:
    """The start-up phase an engine log line opens, or None."""
    for text, phase in STARTUP_PHASES:
        if text in line:
            return phase
    return None


def kv_cache_refusal(msg: str) -> EventValues | None:
    """What a KV-cache refusal line states (engine, lengths and GiB), or None."""
    m = _KV_V1.search(msg)
    if m:
        values: EventValues = {
            "engine": "vllm",
            "max_model_len": int(m.group(1)),
            "needed_gib": float(m.group(2)),
            "available_gib": float(m.group(3)),
        }
        if m.group(4):
            values["estimated_max_model_len"] = int(m.group(4))
        return values
    m = _KV_V0.search(msg)
    if m:
        return {"engine": "vllm", "max_model_len": int(m.group(1)), "kv_cache_tokens": int(m.group(2))}
    if _KV_NONE in msg:
        return {"engine": "vllm", "available_gib": 0.0}
    if _SGLANG_NONE in msg:
        return {"engine": "sglang", "available_gib": 0.0}
    return None


def points_elsewhere(text: str) -> bool:
    """Whether an error message says its root cause was logged on another line."""
    return _POINTS_ELSEWHERE.search(text) is not None


def kv_cache_detail(values: EventValues) -> str:
    """One line of what a KV-cache refusal states."""
    engine = "SGLang" if values.get("engine") == "sglang" else "vLLM"
    if "needed_gib" in values:
        text = (
            f"{engine}'s KV cache cannot hold one request of max_model_len {values.get('max_model_len')}: "
            f"{values['needed_gib']:.2f} GiB needed, {values.get('available_gib', 0.0):.2f} GiB available"
        )
        if "estimated_max_model_len" in values:
            text += f"; {engine} estimates max_model_len {values['estimated_max_model_len']} fits"
        return text
    if "kv_cache_tokens" in values:
        return (
            f"{engine}'s KV cache holds {values['kv_cache_tokens']} tokens, fewer than max_model_len "
            f"{values.get('max_model_len')}"
        )
    return f"{engine} found no GPU memory left for the KV cache after loading the model"
