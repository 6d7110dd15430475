"""Serving-engine configuration from what files carry, as run dimensions.

Sources: deployment files (Kubernetes, KServe, LeaderWorkerSet, Helm values of the vLLM
production stack, docker compose: see ``deployments``) whose command lines
``engine_flags`` reads, a benchmark's metadata, SGLang's ``server_info``, and the labels
of ``vllm:cache_config_info`` in a scrape. Only values the source states are recorded:
a flag that is not given stays absent (its default depends on version and GPU, so it is
unknown, never assumed). Keys of the ``engine_config`` object: one per setting, named
after the flag with dashes as underscores, the common ones shortened so that vLLM and
SGLang agree:

``max_num_seqs, max_num_batched_tokens, chunked_prefill, prefix_caching, tp, pp, dp,
dtype, quantization, kv_cache_dtype, cuda_graphs, max_model_len,
gpu_memory_utilization, async_scheduling, block_size, num_gpu_blocks``

plus ``env`` (the engine's environment variables: ``VLLM_*``, ``SGLANG_*``, ``NCCL_*``...)
and ``unparsed`` (the arguments that could not be read, as written: a config with
``unparsed`` is unknown in a comparison, never the same). Such an object is a
``dict[str, object]``: one key per setting the source states, a JSON value each (open
keys: a new engine flag is a new key, never a schema change).

What a deployment file says about one engine is an :class:`EngineSite` (a frozen record).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import msgspec
from msgspec import UNSET, UnsetType

from store.records import Dimension
from workbench.errors import BadInput
from workbench.formats import deployments, engine_flags, safe_yaml

# Environment variables that change engine behaviour: recorded under engine_config["env"].
_ENGINE_ENV = re.compile(
    r"^(VLLM_|SGLANG_|SGL_|NCCL_|LMCACHE_|TORCH_|TORCHINDUCTOR_|PYTORCH_|CUDA_DEVICE_MAX_CONNECTIONS$|OMP_NUM_THREADS$)"
)
_NOT_ENGINE_ENV = {
    "VLLM_HOST_IP",
    "VLLM_PORT",
    "VLLM_LOGGING_LEVEL",
    "VLLM_CONFIGURE_LOGGING",
    "VLLM_LOGGING_CONFIG_PATH",
    "VLLM_NO_USAGE_STATS",
    "VLLM_DO_NOT_TRACK",
    "VLLM_USAGE_SOURCE",
    "VLLM_RPC_BASE_PATH",
}


def engine_env(name: str) -> bool:
    return bool(_ENGINE_ENV.match(name)) and not engine_flags.is_secret(name) and name not in _NOT_ENGINE_ENV


def from_vllm_args(argv: list[str], env: dict[str, str] | None = None) -> dict[str, object]:
    """The settings a vLLM command line states (launcher included or not), with
    ``unparsed`` naming what could not be read and ``env`` the engine variables."""
    env = {str(k): str(v) for k, v in (env or {}).items()}
    cmd, problems, _ = engine_flags.engine_command(list(argv), "vllm")
    parsed = (
        engine_flags.parse_flags(cmd.args, "vllm", {**env, **cmd.env}, positional_model=cmd.positional_model)
        if cmd
        else engine_flags.Parsed()
    )
    return _finish(parsed.settings, [*problems, *parsed.unparsed], {**env, **(cmd.env if cmd else {})}, [])


def _finish(
    settings: dict[str, object], unparsed: list[str], env: dict[str, str], env_unread: list[str]
) -> dict[str, object]:
    out = dict(settings)
    stated = {k: v for k, v in sorted(env.items()) if engine_env(k)}
    if stated:
        out["env"] = stated
    unparsed = [
        *unparsed,
        *(n if " " in n else f"env {n} (value not in the file)" for n in env_unread if engine_env(n) or " " in n),
    ]
    if unparsed:
        out["unparsed"] = [engine_flags.redact(u) for u in unparsed]
    if env.get("VLLM_USE_V1") in ("0", "1"):
        out["engine_generation"] = "V1" if env["VLLM_USE_V1"] == "1" else "V0"
    return out


def from_sglang_server_info(info: Mapping[str, object]) -> dict[str, object]:
    """Engine settings from SGLang's ``/get_server_info`` (embedded in bench results:
    untrusted parsed JSON)."""
    out: dict[str, object] = {}
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
        out["chunked_prefill"] = int(info["chunked_prefill_size"]) > 0  # type: ignore[call-overload]
    if "disable_radix_cache" in info:
        out["prefix_caching"] = not bool(info["disable_radix_cache"])
    if "disable_cuda_graph" in info:
        out["cuda_graphs"] = not bool(info["disable_cuda_graph"])
    return out


def from_cache_config_info(labels: dict[str, str]) -> dict[str, object]:
    """What ``vllm:cache_config_info`` labels say (measured: the running server's values)."""
    out: dict[str, object] = {}
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


class ConfigSource(msgspec.Struct, frozen=True, kw_only=True):
    """Where an engine's settings were read: the file, the place in it, and how."""

    file: str
    path: str
    read: str  # "settings mapping", "image entrypoint", "environment", ...


class EngineSite(msgspec.Struct, frozen=True, kw_only=True):
    """The serving engine one deployment site runs and what the file states about it;
    a field is ``UNSET`` when the file does not state it (unknown, never a default)."""

    engine: str
    config: dict[str, object]  # the engine_config object (module docstring)
    shape: str  # "Deployment", "Helm values (vLLM production stack)", ...
    sources: list[ConfigSource]
    where: str  # the site in the file ("spec.template.spec.containers[0]")
    engine_revision: str | UnsetType = UNSET
    gpus: int | UnsetType = UNSET
    accelerator: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    weights: str | UnsetType = UNSET  # model@revision, or said to be unpinned
    also: list[str] | UnsetType = UNSET  # the file's other engines (read_k8s_manifest)


def read_site(site: deployments.Site, file: Path | str) -> EngineSite | None:
    """The engine a deployment site runs, and what its files state about it (``None``: no engine)."""
    image_engine = engine_from_image(site.image) or site.engine_hint
    cmd, problems, how = engine_flags.engine_command(site.argv, image_engine, site.env)
    engine = cmd.engine if cmd else image_engine
    if engine is None:
        return None
    env = {**site.env, **(cmd.env if cmd else {})}
    settings: dict[str, object] = {}
    unparsed = list(problems)
    sources: list[ConfigSource] = []
    if site.mapping:
        mapped = engine_flags.settings_from_mapping(site.mapping, engine)
        settings.update(mapped.settings)
        unparsed += mapped.unparsed
        sources.append(ConfigSource(file=str(file), path=site.mapping_where, read="settings mapping"))
    if cmd:
        parsed = engine_flags.parse_flags(cmd.args, engine, env, positional_model=cmd.positional_model)
        settings.update(parsed.settings)  # extraArgs come after vllmConfig on the command line
        unparsed += parsed.unparsed
        if cmd.args or site.argv:
            read = (
                how if how == cmd.launcher else f"{how} ({cmd.launcher})"
            )  # not "image entrypoint (image entrypoint)"
            sources.append(ConfigSource(file=str(file), path=site.argv_where, read=read))
    elif site.argv and not problems:
        unparsed.append(f"{' '.join(site.argv)[:200]} (no {engine} command found in it)")
        sources.append(ConfigSource(file=str(file), path=site.argv_where, read="unreadable command"))
    if site.env or site.env_unread:
        sources.append(ConfigSource(file=str(file), path=site.env_where, read="environment"))
    if engine == "kserve-huggingface" and settings.get("backend"):
        engine = "vllm" if settings["backend"] == "vllm" else f"kserve-huggingface ({settings['backend']})"
    config = _finish(settings, unparsed, env, site.env_unread)
    stated = _stated(site, config, env)
    return EngineSite(engine=engine, config=config, shape=site.shape, sources=sources, where=site.where, **stated)  # type: ignore[arg-type]


def _stated(site: deployments.Site, config: dict[str, object], env: dict[str, str]) -> dict[str, object]:
    """The optional fields the deployment states: engine revision (from the image), GPUs, accelerator,
    model and weights (the model id at a pinned revision, or said to be unpinned)."""
    stated: dict[str, object] = {}
    revision = image_revision(site.image) if site.image else None
    if revision:
        stated["engine_revision"] = revision
    if site.gpus is not None:
        stated["gpus"] = site.gpus
    if site.accelerator:
        stated["accelerator"] = site.accelerator
    model = config.get("model") or site.model or env.get("MODEL_ID") or env.get("MODEL_NAME")
    if model:
        stated["model"] = model
        pinned = config.get("revision")
        stated["weights"] = f"{model}@{pinned}" if pinned else f"{model} (hub, revision not pinned)"
    return stated


def looks_like_deployment(head: str) -> bool:
    """The start of a file that deploys vLLM or SGLang, in one of the shapes read."""
    if not re.search(r"vllm|sglang", head, re.IGNORECASE):
        return False
    return (
        ("apiVersion:" in head and "kind:" in head)
        or "servingEngineSpec:" in head
        or bool(re.search(r"(?m)^services:\s*$", head))
    )


def read_deployment(path: Path) -> list[EngineSite]:
    """Every serving engine a deployment file runs (Kubernetes, KServe, LeaderWorkerSet,
    Helm values of the vLLM production stack, docker compose), in file order."""
    try:
        docs = safe_yaml.load_file(path)
    except ValueError as exc:
        raise BadInput(path, f"deployment file is not readable YAML ({exc})") from None
    except OSError as exc:
        raise BadInput(path, f"cannot be read ({exc.strerror or exc})") from None
    return [found for site in deployments.sites(docs) if (found := read_site(site, path)) is not None]


def read_k8s_manifest(path: Path) -> EngineSite:
    """The serving engine of a deployment file (the first one; the others are named in ``also``)."""
    found = read_deployment(path)
    if not found:
        raise BadInput(path, "deployment file has no serving-engine container (vllm/sglang image or command)")
    if len(found) > 1:
        return msgspec.structs.replace(found[0], also=[f"{f.where} ({f.engine})" for f in found[1:]])
    return found[0]


def precision_of(config: Mapping[str, object]) -> str | None:
    """``bf16`` / ``fp16`` / ``awq`` ... as stated (``auto`` dtype is not a precision)."""
    dtype = config.get("dtype")
    quant = config.get("quantization")
    parts = []
    if dtype and str(dtype) != "auto":
        parts.append(
            {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32"}.get(str(dtype), str(dtype))
        )
    if quant:
        parts.append(str(quant))
    return "+".join(parts) or None


def topology_of(config: Mapping[str, object], gpus: int | None = None) -> str | None:
    tp, pp, dp = config.get("tp"), config.get("pp"), config.get("dp")
    if tp is None and pp is None and dp is None:
        return "single GPU" if gpus == 1 else None
    return f"TP{tp or 1} PP{pp or 1}" + (f" DP{dp}" if dp else "")


def dimensions(config: Mapping[str, object], source: str, *, gpus: int | None = None) -> dict[str, Dimension]:
    """``engine_config`` (engine knobs only), ``precision`` and ``topology`` dimensions."""
    dims: dict[str, Dimension] = {}
    engine_only = {k: v for k, v in sorted(config.items()) if k not in engine_flags.NOT_ENGINE}
    if engine_only:
        dims["engine_config"] = Dimension(engine_only, source)  # type: ignore[arg-type]
    precision = precision_of(config)
    if precision:
        dims["precision"] = Dimension(precision, source)  # type: ignore[arg-type]
    topology = topology_of(config, gpus)
    if topology:
        dims["topology"] = Dimension(topology, source)  # type: ignore[arg-type]
    return dims
