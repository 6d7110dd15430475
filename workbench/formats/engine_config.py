"""Serving-engine configuration from what files carry, as run dimensions.

Sources: vLLM command-line arguments (in a Kubernetes manifest next to the results,
or a benchmark's metadata), SGLang's ``server_info``, and the labels of
``vllm:cache_config_info`` in a scrape. Only values the source states are recorded:
a flag that is not given stays absent (its default depends on version and GPU, so
it is unknown, never assumed). Keys of the ``engine_config`` object:

``max_num_seqs, max_num_batched_tokens, chunked_prefill, prefix_caching, tp, pp, dp,
dtype, quantization, kv_cache_dtype, cuda_graphs, max_model_len,
gpu_memory_utilization, async_scheduling, block_size, num_gpu_blocks, engine_generation``
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from store.records import Dimension
from workbench.errors import BadInput

_VLLM_FLAGS: dict[str, tuple[str, type]] = {
    "max-num-seqs": ("max_num_seqs", int),
    "max-num-batched-tokens": ("max_num_batched_tokens", int),
    "tensor-parallel-size": ("tp", int),
    "tp": ("tp", int),
    "pipeline-parallel-size": ("pp", int),
    "pp": ("pp", int),
    "data-parallel-size": ("dp", int),
    "dp": ("dp", int),
    "dtype": ("dtype", str),
    "quantization": ("quantization", str),
    "q": ("quantization", str),
    "kv-cache-dtype": ("kv_cache_dtype", str),
    "max-model-len": ("max_model_len", int),
    "gpu-memory-utilization": ("gpu_memory_utilization", float),
    "block-size": ("block_size", int),
    "model": ("model", str),
    "revision": ("revision", str),
    "served-model-name": ("served_model_name", str),
}
_VLLM_BOOLS: dict[str, tuple[str, bool]] = {
    "enable-chunked-prefill": ("chunked_prefill", True),
    "no-enable-chunked-prefill": ("chunked_prefill", False),
    "enable-prefix-caching": ("prefix_caching", True),
    "no-enable-prefix-caching": ("prefix_caching", False),
    "enforce-eager": ("cuda_graphs", False),
    "async-scheduling": ("async_scheduling", True),
    "no-async-scheduling": ("async_scheduling", False),
}
# Keys that identify the workload/hardware rather than engine behaviour.
_NOT_ENGINE = {"model", "revision", "served_model_name"}


def _expand(value: str, env: dict[str, str]) -> str:
    """Kubernetes ``$(VAR)`` substitution from the container's env."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), value)


def from_vllm_args(argv: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """The settings a vLLM server command line states (``--a=b`` and ``--a b``; ``_`` or ``-``)."""
    env = env or {}
    out: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        arg = _expand(str(argv[i]), env)
        i += 1
        if not arg.startswith("-"):
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        name = name.replace("_", "-")
        if name in _VLLM_BOOLS and not eq:
            key, flag = _VLLM_BOOLS[name]
            out[key] = flag
        elif name in _VLLM_FLAGS:
            key, kind = _VLLM_FLAGS[name]
            if not eq:
                if i >= len(argv):
                    continue
                value = _expand(str(argv[i]), env)
                i += 1
            try:
                out[key] = kind(value)
            except ValueError:
                out[key] = value
    if env.get("VLLM_USE_V1") in ("0", "1"):
        out["engine_generation"] = "V1" if env["VLLM_USE_V1"] == "1" else "V0"
    return out


def from_sglang_server_info(info: dict[str, Any]) -> dict[str, Any]:
    """Engine settings from SGLang's ``/get_server_info`` (embedded in bench results)."""
    out: dict[str, Any] = {}
    pairs = {
        "max_running_requests": "max_num_seqs",
        "chunked_prefill_size": "max_num_batched_tokens",
        "tp_size": "tp",
        "pp_size": "pp",
        "dp_size": "dp",
        "dtype": "dtype",
        "quantization": "quantization",
        "kv_cache_dtype": "kv_cache_dtype",
        "context_length": "max_model_len",
        "mem_fraction_static": "gpu_memory_utilization",
        "page_size": "block_size",
        "model_path": "model",
        "served_model_name": "served_model_name",
        "revision": "revision",
    }
    for src, dst in pairs.items():
        if info.get(src) is not None:
            out[dst] = info[src]
    if "chunked_prefill_size" in info and info["chunked_prefill_size"] is not None:
        out["chunked_prefill"] = int(info["chunked_prefill_size"]) > 0
    if "disable_radix_cache" in info:
        out["prefix_caching"] = not bool(info["disable_radix_cache"])
    if "disable_cuda_graph" in info:
        out["cuda_graphs"] = not bool(info["disable_cuda_graph"])
    return out


def from_cache_config_info(labels: dict[str, str]) -> dict[str, Any]:
    """What ``vllm:cache_config_info`` labels say (measured: the running server's values)."""
    out: dict[str, Any] = {}
    if "cache_dtype" in labels:
        out["kv_cache_dtype"] = labels["cache_dtype"]
    if "enable_prefix_caching" in labels:
        out["prefix_caching"] = labels["enable_prefix_caching"].lower() == "true"
    for key in ("block_size", "num_gpu_blocks"):
        if labels.get(key, "").isdigit():
            out[key] = int(labels[key])
    if "gpu_memory_utilization" in labels:
        try:
            out["gpu_memory_utilization"] = float(labels["gpu_memory_utilization"])
        except ValueError:
            pass
    return out


def image_revision(image: str) -> str | None:
    """``vllm/vllm-openai:v0.11.0`` -> ``v0.11.0`` (digests kept whole)."""
    if "@" in image:
        return image.split("@", 1)[1]
    name, _, tag = image.rpartition(":")
    return tag if name and "/" not in tag else None


def engine_from_image(image: str) -> str | None:
    low = image.lower()
    for engine in ("vllm", "sglang", "tensorrt-llm", "text-generation-inference", "tgi"):
        if engine in low:
            return engine
    return None


def read_k8s_manifest(path: Path) -> dict[str, Any]:
    """The serving container of a Kubernetes manifest: image, args, env, GPUs, node selector.

    Returns ``{"engine", "engine_revision", "config", "gpus", "accelerator", "model", "weights"}``
    (keys only when the manifest states them).
    """
    from workbench.formats import mini_yaml

    try:
        docs = mini_yaml.load_all(path.read_text(encoding="utf-8", errors="replace"))
    except ValueError as exc:
        raise BadInput(path, f"manifest is not readable YAML ({exc})") from None
    for doc in docs:
        if not isinstance(doc, dict) or doc.get("kind") not in ("Deployment", "StatefulSet", "Pod", "LeaderWorkerSet"):
            continue
        pod = doc.get("spec", {}) or {}
        if doc.get("kind") != "Pod":
            pod = ((pod.get("template") or {}).get("spec")) or {}
        for container in pod.get("containers") or []:
            if not isinstance(container, dict):
                continue
            image = str(container.get("image") or "")
            argv = [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]
            engine = engine_from_image(image) or ("vllm" if any("vllm" in a for a in argv) else None)
            if engine is None:
                continue
            env = {str(e.get("name")): str(e.get("value")) for e in container.get("env") or [] if isinstance(e, dict) and "value" in e}
            config = from_vllm_args(argv, env) if engine == "vllm" else {}
            out: dict[str, Any] = {"engine": engine, "config": config}
            revision = image_revision(image)
            if revision:
                out["engine_revision"] = revision
            limits = ((container.get("resources") or {}).get("limits")) or {}
            for key in ("nvidia.com/gpu", "amd.com/gpu"):
                if key in limits:
                    out["gpus"] = int(limits[key])
            selector = pod.get("nodeSelector") or {}
            for key, value in selector.items():
                if "accelerator" in key or "gpu" in key.lower():
                    out["accelerator"] = str(value)
            if "model" in config:
                out["model"] = config["model"]
            elif env.get("MODEL_ID"):
                out["model"] = env["MODEL_ID"]
            if out.get("model"):
                # Weights as deployed: the model id at a pinned revision, or said to be unpinned.
                revision = config.get("revision")
                out["weights"] = f"{out['model']}@{revision}" if revision else f"{out['model']} (hub, revision not pinned)"
            return out
    raise BadInput(path, "manifest has no serving-engine container (vllm/sglang image or command)")


def precision_of(config: dict[str, Any]) -> str | None:
    """``bf16`` / ``fp16`` / ``awq`` ... as stated (``auto`` dtype is not a precision)."""
    dtype = config.get("dtype")
    quant = config.get("quantization")
    parts = []
    if dtype and str(dtype) != "auto":
        parts.append({"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32"}.get(str(dtype), str(dtype)))
    if quant:
        parts.append(str(quant))
    return "+".join(parts) or None


def topology_of(config: dict[str, Any], gpus: int | None = None) -> str | None:
    tp, pp, dp = config.get("tp"), config.get("pp"), config.get("dp")
    if tp is None and pp is None and dp is None:
        return "single GPU" if gpus == 1 else None
    return f"TP{tp or 1} PP{pp or 1}" + (f" DP{dp}" if dp else "")


def dimensions(config: dict[str, Any], source: str, *, gpus: int | None = None) -> dict[str, Dimension]:
    """``engine_config`` (engine knobs only), ``precision`` and ``topology`` dimensions."""
    dims: dict[str, Dimension] = {}
    engine_only = {k: v for k, v in sorted(config.items()) if k not in _NOT_ENGINE}
    if engine_only:
        dims["engine_config"] = Dimension(engine_only, source)  # type: ignore[arg-type]
    precision = precision_of(config)
    if precision:
        dims["precision"] = Dimension(precision, source)  # type: ignore[arg-type]
    topology = topology_of(config, gpus)
    if topology:
        dims["topology"] = Dimension(topology, source)  # type: ignore[arg-type]
    return dims
