"""Serving-engine command lines as settings: one key per setting, nothing guessed.

An engine is started by an argv (a container's ``command`` + ``args``, a compose
``command``), by a shell line (``sh -c "..."``, a YAML block scalar), or through a launcher
(``vllm serve MODEL``, ``python -m vllm.entrypoints.openai.api_server``,
``python -m sglang.launch_server``). ``engine_command`` finds the engine's own arguments
in any of these; ``parse_flags`` reads them against the engine's flag table:

- ``--flag value`` and ``--flag=value``; ``--flag_name`` = ``--flag-name``;
- booleans ``--flag`` / ``--no-flag`` (and ``--flag=false``), a negating flag mapped onto
  its setting (``--enforce-eager`` -> ``cuda_graphs: false``);
- JSON-valued flags (``--speculative-config '{...}'``, ``--compilation-config``, ``-O3``,
  ``-O.level=3``) as objects; list flags (``--cuda-graph-sizes 1 2 4``) as lists; a scalar
  flag given twice keeps the last value, as argparse does;
- ``$(VAR)`` / ``$VAR`` / ``${VAR}`` from the environment the file states.

What cannot be read is returned in ``unparsed``, named as written: a flag and its value
in one element (``"--max-num-seqs 256"``), an unknown flag followed by a value (its
arity is unknown), a value of the wrong type, an unset variable, a JSON flag that is not
JSON, an unbalanced quote. A flag that is absent stays absent: its default depends on the
engine version and the GPU, so it is unknown, never assumed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Flag:
    key: str  # the setting's key in engine_config
    kind: str  # int, float, str, bool, json, list, secret
    negate: bool = False  # a true flag means key = False (--enforce-eager -> cuda_graphs)


def _table(groups: dict[str, str], renames: dict[str, str], negated: dict[str, str]) -> dict[str, Flag]:
    out: dict[str, Flag] = {}
    for kind, names in groups.items():
        for name in names.split():
            assert name not in out, f"flag {name} listed twice"
            out[name] = Flag(renames.get(name, name), kind)
    for name, key in negated.items():
        out[name] = Flag(key, "bool", negate=True)
    return out


# vLLM (``vllm serve`` / the OpenAI api_server; KServe's huggingface runtime passes these on).
VLLM = _table(
    {
        "int": """max_num_seqs max_num_batched_tokens tensor_parallel_size tp pipeline_parallel_size pp
            data_parallel_size dp data_parallel_size_local dpl data_parallel_rank data_parallel_start_rank
            decode_context_parallel_size dcp max_model_len block_size seed max_seq_len_to_capture max_logprobs
            num_gpu_blocks_override max_num_partial_prefills max_long_partial_prefills long_prefill_token_threshold
            max_lora_rank max_loras max_cpu_loras num_lookahead_slots num_scheduler_steps kv_cache_memory
            max_parallel_loading_workers speculative_draft_tensor_parallel_size num_speculative_tokens
            api_server_count port data_parallel_rpc_port max_num_on_the_fly max_cudagraph_capture_size
            num_redundant_experts stream_interval lora_extra_vocab_size kv_cache_memory_bytes dbo_decode_token_threshold
            dbo_prefill_token_threshold max_log_len ssl_cert_reqs tokenizer_pool_size""",
        "float": "gpu_memory_utilization swap_space cpu_offload_gb scheduler_delay_factor rope_theta "
        "mm_processor_cache_gb kv_offloading_size",
        "str": """model dtype quantization q kv_cache_dtype load_format tokenizer tokenizer_mode revision
            tokenizer_revision code_revision download_dir attention_backend distributed_executor_backend
            scheduling_policy guided_decoding_backend preemption_mode prefix_caching_hash_algo tool_call_parser
            reasoning_parser chat_template generation_config task runner convert host uvicorn_log_level root_path
            ssl_certfile ssl_ca_certs worker_cls worker_extension_cls config_format speculative_model device
            lora_dtype response_role override_attention_dtype model_impl data_parallel_address data_parallel_backend
            model_id model_name backend model_dir expert_placement_strategy cudagraph_mode config kv_offloading_backend
            all2all_backend tool_parser_plugin scheduler_cls safetensors_load_strategy hf_config_path
            allowed_local_media_path mm_encoder_tp_mode otlp_traces_endpoint collect_detailed_traces
            pt_load_map_location
            logits_processor_pattern""",
        "bool": """enable_prefix_caching enable_chunked_prefill async_scheduling trust_remote_code disable_log_stats
            disable_log_requests enable_log_requests enable_lora enable_expert_parallel enable_eplb
            disable_custom_all_reduce disable_sliding_window skip_tokenizer_init enable_prompt_tokens_details
            enable_auto_tool_choice enable_sleep_mode disable_frontend_multiprocessing disable_uvicorn_access_log
            use_v2_block_manager disable_cascade_attn enable_dbo calculate_kv_scales enable_prompt_embeds
            disable_async_output_proc multi_step_stream_outputs enable_lora_bias fully_sharded_loras
            enable_request_id_headers enable_server_load_tracking disable_fastapi_docs enable_force_include_usage
            disable_chunked_mm_input kv_sharing_fast_prefill headless data_parallel_hybrid_lb
            data_parallel_external_lb enable_multimodal_encoder_data_parallel ray_workers_use_nsight
            enable_return_routed_experts disable_mm_preprocessor_cache enable_log_outputs log_error_stack
            return_tokens_as_token_ids enable_tokenizer_info_endpoint disable_hybrid_kv_cache_manager
            exclude_tools_when_tool_choice_none""",
        "json": """speculative_config compilation_config kv_transfer_config kv_events_config override_generation_config
            hf_overrides limit_mm_per_prompt mm_processor_kwargs rope_scaling override_neuron_config
            override_pooler_config additional_config structured_outputs_config allowed_origins allowed_methods
            allowed_headers model_loader_extra_config eplb_config media_io_kwargs""",
        "list": "served_model_name cuda_graph_sizes lora_modules prompt_adapters middleware long_lora_scaling_factors "
        "logits_processors",
        "secret": "api_key hf_token ssl_keyfile",
    },
    renames={
        "tensor_parallel_size": "tp",
        "pipeline_parallel_size": "pp",
        "data_parallel_size": "dp",
        "data_parallel_size_local": "dp_local",
        "dpl": "dp_local",
        "decode_context_parallel_size": "dcp",
        "q": "quantization",
        "enable_prefix_caching": "prefix_caching",
        "enable_chunked_prefill": "chunked_prefill",
        "model_id": "model",
        "model_dir": "model",
        "model_name": "served_model_name",
    },
    negated={"enforce_eager": "cuda_graphs"},
)
VLLM["o"] = Flag("compilation_config", "json")  # -O3, -O '{"level": 3}', -O.level=3

# SGLang (``python -m sglang.launch_server``), onto the same keys where the setting is the same.
SGLANG = _table(
    {
        "int": """tp_size tp dp_size dp pp_size ep_size max_running_requests max_total_tokens chunked_prefill_size
            max_prefill_tokens context_length page_size cuda_graph_max_bs torch_compile_max_bs random_seed
            speculative_num_steps speculative_eagle_topk speculative_num_draft_tokens nnodes node_rank
            stream_interval port num_continuous_decode_steps triton_attention_num_kv_splits num_reserved_decode_tokens
            base_gpu_id gpu_id_step ep_num_redundant_experts nccl_port watchdog_timeout decode_log_interval""",
        "float": "mem_fraction_static schedule_conservativeness cpu_offload_gb hicache_ratio",
        "str": """model_path tokenizer_path dtype kv_cache_dtype quantization schedule_policy attention_backend
            sampling_backend grammar_backend speculative_algorithm speculative_draft_model_path host log_level
            dist_init_addr chat_template revision load_format tool_call_parser reasoning_parser moe_a2a_backend
            device moe_runner_backend disaggregation_mode disaggregation_transfer_backend mm_attention_backend
            prefill_attention_backend decode_attention_backend speculative_draft_model_revision load_balance_method
            tokenizer_mode file_storage_path warmups""",
        "bool": """disable_radix_cache disable_cuda_graph enable_torch_compile enable_dp_attention enable_mixed_chunk
            disable_overlap_schedule enable_metrics trust_remote_code enable_ep_moe enable_deepep_moe
            disable_custom_all_reduce enable_two_batch_overlap skip_tokenizer_init enable_lora
            disable_chunked_prefix_cache
            enable_hierarchical_cache enable_p2p_check enable_nan_detection enable_memory_saver enable_cache_report
            show_time_cost skip_server_warmup enable_multimodal""",
        "json": "json_model_override_args",
        "list": "served_model_name cuda_graph_bs lora_paths",
        "secret": "api_key",
    },
    renames={
        "tp_size": "tp",
        "dp_size": "dp",
        "pp_size": "pp",
        "max_running_requests": "max_num_seqs",
        "chunked_prefill_size": "max_num_batched_tokens",
        "context_length": "max_model_len",
        "mem_fraction_static": "gpu_memory_utilization",
        "page_size": "block_size",
        "model_path": "model",
    },
    negated={"disable_radix_cache": "prefix_caching", "disable_cuda_graph": "cuda_graphs"},
)
TABLES = {"vllm": VLLM, "sglang": SGLANG}

# Settings that name the workload or the endpoint, or are secrets: not engine behaviour.
NOT_ENGINE = frozenset(
    {
        "model",
        "revision",
        "served_model_name",
        "tokenizer",
        "tokenizer_revision",
        "download_dir",
        "host",
        "port",
        "uvicorn_log_level",
        "root_path",
        "ssl_certfile",
        "ssl_ca_certs",
        "disable_uvicorn_access_log",
        "disable_fastapi_docs",
        "allowed_origins",
        "allowed_methods",
        "allowed_headers",
        "middleware",
        "response_role",
        "disable_log_requests",
        "enable_log_requests",
        "enable_request_id_headers",
        "log_level",
        "dist_init_addr",
        "data_parallel_address",
        "data_parallel_rpc_port",
        "engine_generation",
        "tokenizer_path",
        "chat_template",
        "backend",  # KServe's runtime backend: it names the engine
        "max_log_len",
        "ssl_cert_reqs",
        "enable_log_outputs",
        "log_error_stack",
        "enable_tokenizer_info_endpoint",
        "tool_parser_plugin",
        "allowed_local_media_path",
        "return_tokens_as_token_ids",
        "nccl_port",
        "watchdog_timeout",
        "decode_log_interval",
        "file_storage_path",
        "enable_metrics",
        "show_time_cost",
        "enable_cache_report",
    }
)

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}
_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_K8S_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([kmgKMG])$")
_SHELLS = {"sh", "bash", "ash", "dash", "zsh"}
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
ENGINE_MODULES = {
    "vllm.entrypoints.openai.api_server": "vllm",
    "vllm.entrypoints.api_server": "vllm",
    "vllm.entrypoints.cli.main": "vllm",
    "sglang.launch_server": "sglang",
}


_SECRET_PARTS = {"token", "key", "secret", "password", "passwd", "credential", "credentials", "apikey"}
_WORDS_AND_BLANKS = re.compile(r"\S+|\s+")  # each character is read once: linear on any text
_FLAG_NAME = re.compile(r"--?[\w.-]+")


def is_secret(name: str) -> bool:
    """A flag or variable that holds a secret (``--api-key``, ``HF_TOKEN``; not ``max_num_batched_tokens``)."""
    return bool(_SECRET_PARTS & set(re.split(r"[_\-.]", name.lower().lstrip("-"))))


def redact(text: str) -> str:
    """``--api-key sk-123`` -> ``--api-key <hidden>``, ``--hf-token=x`` -> ``--hf-token=<hidden>``:
    unread text is shown and stored. Word by word, so its work is linear in the text (a
    backtracking pattern took minutes over one long argument)."""
    out: list[str] = []
    hide_next = False
    for part in _WORDS_AND_BLANKS.findall(text):
        if part.isspace():
            out.append(part)
            continue
        if hide_next:  # the value after a secret flag and a blank
            out.append("<hidden>")
            hide_next = False
            continue
        name, eq, _value = part.partition("=")
        if _FLAG_NAME.fullmatch(name) and is_secret(name):
            out.append(f"{name}=<hidden>" if eq else part)
            hide_next = not eq
            continue
        out.append(part)
    return "".join(out)


@dataclass
class Parsed:
    settings: dict[str, object] = field(default_factory=dict)
    unparsed: list[str] = field(default_factory=list)


def expand(value: str, env: dict[str, str]) -> str:
    """Kubernetes ``$(VAR)`` and shell ``$VAR`` / ``${VAR}`` from the stated env (others kept)."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2) or m.group(3)
        return env.get(name, m.group(0))

    return _VAR.sub(sub, value)


def _unset(value: str) -> bool:
    return bool(_VAR.search(value))


def flag_name(arg: str) -> str:
    return arg.lstrip("-").replace("-", "_").lower()


def _size(text: str) -> int:
    """vLLM's human-readable sizes: ``32k`` = 32000, ``32K`` = 32768."""
    m = _SIZE.match(text)
    if not m:
        return int(text)
    power = "kmg".index(m.group(2).lower()) + 1
    base = 1024 if m.group(2).isupper() else 1000
    return int(float(m.group(1)) * base**power)


def scalar(text: str) -> Any:
    """An untyped value as written: a number when it is one, else the text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _typed(kind: str, text: str) -> Any:
    """``text`` as ``kind``; ``ValueError`` when it is not one."""
    if kind == "int":
        return _size(text)
    if kind == "float":
        return float(text)
    if kind == "bool":
        low = text.strip().lower()
        if low in _TRUE | _FALSE:
            return low in _TRUE
        raise ValueError(text)
    if kind == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            if re.fullmatch(r"\d+", text):
                return {"level": int(text)}  # -O3, --compilation-config 3
            raise ValueError(text) from None
    return text


def _set_dotted(settings: dict[str, object], key: str, path: list[str], value: Any) -> None:
    """``--compilation-config.level=3``: one field of a JSON-valued setting."""
    node = settings.setdefault(key, {})
    if not isinstance(node, dict):
        raise ValueError(key)
    for part in path[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ValueError(key)
    node[path[-1]] = scalar(value) if isinstance(value, str) else value


def parse_flags(
    argv: list[str], engine: str, env: dict[str, str] | None = None, *, positional_model: bool = False
) -> Parsed:
    """The settings an engine's own argument list states (after the launcher)."""
    env = env or {}
    reader = _FlagReader(
        TABLES.get(engine, VLLM), [str(a) for a in argv], [expand(str(a), env) for a in argv], positional_model
    )
    out = reader.read()
    if engine == "sglang" and isinstance(tokens := out.settings.get("max_num_batched_tokens"), int):
        out.settings["chunked_prefill"] = tokens > 0
    out.unparsed = [redact(u) for u in out.unparsed]
    return out


def _is_number(arg: str) -> bool:
    return re.fullmatch(r"-\d+(\.\d+)?", arg) is not None


class _FlagReader:
    """One pass over an argument list: each element is decided once (a positional, one element holding a flag
    and its value, ``-O3``, a flag the table does not know, or one of a kind: dotted JSON, bool, list, valued),
    and the decision takes the next element when it is the flag's value."""

    def __init__(self, table: dict[str, Flag], raw: list[str], args: list[str], positional_model: bool) -> None:
        self.table, self.raw, self.args, self.positional_model = table, raw, args, positional_model
        self.i = 0
        self.out = Parsed()

    def read(self) -> Parsed:
        while self.i < len(self.args):
            raw, arg = self.raw[self.i], self.args[self.i]
            self.i += 1
            self._element(arg, raw)
        return self.out

    def _next(self) -> str | None:
        return self.args[self.i] if self.i < len(self.args) else None

    def _element(self, arg: str, raw: str) -> None:
        if not arg.startswith("-") or _is_number(arg):
            self._positional(arg, raw)
            return
        if re.match(r"^-[^-=\s]*\s", arg) or re.match(r"^--[^=\s]+\s", arg):
            self.out.unparsed.append(raw)  # "--max-num-seqs 256": a flag and its value in one element
            return
        name, eq, value = arg.partition("=")
        short_o = re.fullmatch(r"-O(\d+)", name)
        if short_o:
            self.out.settings["compilation_config"] = {"level": int(short_o.group(1))}
            return
        norm = flag_name(name)
        base, _, dotted = norm.partition(".")
        flag, negated = self.table.get(base), False
        if flag is None and base.startswith("no_") and self.table.get(base[3:], Flag("", "")).kind == "bool":
            flag, negated = self.table[base[3:]], True
        if flag is None:
            self._unknown(norm, base, eq, value, raw)
        elif dotted and flag.kind == "json":
            self._dotted(flag, dotted, eq, value, raw)
        elif flag.kind == "bool":
            self._bool(flag, negated, eq, value, raw)
        elif flag.kind == "list":
            self._list(flag, base, eq, value, raw)
        else:
            self._valued(flag, eq, value, raw)

    def _positional(self, arg: str, raw: str) -> None:
        settings = self.out.settings
        if self.positional_model and "model" not in settings and not _unset(arg) and not arg.startswith(("'", '"')):
            settings["model"] = arg
        else:
            self.out.unparsed.append(raw)

    def _unknown(self, norm: str, base: str, eq: str, value: str, raw: str) -> None:
        """A flag the table does not know: readable only when it cannot take the next token."""
        following = self._next()
        if is_secret(base):
            self.i += 0 if eq or following is None or following.startswith("-") else 1  # never recorded
        elif eq and _unset(value):
            self.out.unparsed.append(raw)
        elif eq:
            self.out.settings[norm] = scalar(value)
        elif following is None or (following.startswith("-") and not _is_number(following)):
            self.out.settings[norm] = True
        else:
            self.out.unparsed.append(f"{raw} {self.raw[self.i]}")
            self.i += 1

    def _dotted(self, flag: Flag, dotted: str, eq: str, value: str, raw: str) -> None:
        following = self._next()
        if not eq and following is not None:
            value = following
            self.i += 1
        try:
            _set_dotted(self.out.settings, flag.key, dotted.split("."), value)
        except ValueError:
            self.out.unparsed.append(raw)

    def _bool(self, flag: Flag, negated: bool, eq: str, value: str, raw: str) -> None:
        state = not negated
        following = self._next()
        if eq:
            try:
                state = _typed("bool", value) != negated
            except ValueError:
                self.out.unparsed.append(raw)
                return
        elif following is not None and following.strip().lower() in _TRUE | _FALSE:
            state = (following.strip().lower() in _TRUE) != negated  # --enable-chunked-prefill false
            self.i += 1
        self.out.settings[flag.key] = state != flag.negate

    def _list(self, flag: Flag, base: str, eq: str, value: str, raw: str) -> None:
        values = [value] if eq else []
        while not eq and (following := self._next()) is not None and not following.startswith("-"):
            values.append(following)
            self.i += 1
        if not values or any(_unset(v) for v in values):
            self.out.unparsed.append(raw)
            return
        items = [scalar(v) for v in values]
        previous = self.out.settings.get(flag.key)
        self.out.settings[flag.key] = (previous if isinstance(previous, list) and base == "middleware" else []) + items

    def _valued(self, flag: Flag, eq: str, value: str, raw: str) -> None:
        if not eq:
            following = self._next()
            if following is None or following.startswith("--"):
                self.out.unparsed.append(raw)  # a flag that needs a value, without one
                return
            value, raw = following, f"{raw} {self.raw[self.i]}"
            self.i += 1
        if flag.kind == "secret":
            return  # never recorded
        if _unset(value):
            if flag.key not in NOT_ENGINE:
                self.out.unparsed.append(raw)  # a variable the file does not set
            return
        try:
            self.out.settings[flag.key] = _typed(flag.kind, value)
        except ValueError:
            self.out.unparsed.append(raw)


def settings_from_mapping(values: dict[str, object], engine: str = "vllm") -> Parsed:
    """Settings written as a mapping (Helm ``vllmConfig``: ``maxNumSeqs: 128``)."""
    table = TABLES.get(engine, VLLM)
    out = Parsed()
    for name, value in values.items():
        norm = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", str(name)).replace("-", "_").lower()
        flag = table.get(norm)
        if value is None:
            continue
        if flag is None and is_secret(norm):
            continue
        if flag is None:
            if isinstance(value, str | int | float | bool | list | dict):
                out.settings[norm] = value
            else:
                out.unparsed.append(f"{name}: {value!r}")
            continue
        if flag.kind == "secret":
            continue
        if isinstance(value, bool) and flag.kind == "bool":
            out.settings[flag.key] = value != flag.negate
            continue
        if isinstance(value, list | dict) and flag.kind in ("json", "list"):
            out.settings[flag.key] = value
            continue
        try:
            typed = _typed(
                flag.kind, json.dumps(value) if flag.kind == "json" and not isinstance(value, str) else str(value)
            )
        except ValueError:
            out.unparsed.append(f"{name}: {value!r}")
            continue
        out.settings[flag.key] = (typed != flag.negate) if flag.kind == "bool" else typed
    return out


# --- finding the engine's arguments in a command line ------------------------------------


MAX_SCRIPT = 256 << 10


def _scan(line: str, quote: str) -> tuple[str, str]:
    """``line`` without its comment, and the quote still open at its end ("" when none),
    given the quote open before it."""
    escaped = False
    for i, ch in enumerate(line):
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t;&|"):
            return line[:i], ""  # a comment runs to the end of the line
    return line, quote


def _logical_lines(script: str) -> list[str]:
    """Physical lines with continuations joined, comments dropped, and quoted newlines
    kept inside their line (one pass: the quote state is carried from line to line)."""
    text = re.sub(r"\\\r?\n", " ", script)
    lines: list[str] = []
    pending: list[str] = []
    quote = ""
    for line in text.splitlines():
        code, quote = _scan(line, quote)
        pending.append(code)
        if not quote:
            lines.append("\n".join(pending))
            pending = []
    if pending:
        lines.append("\n".join(pending))  # an unbalanced quote: shlex names it below
    return lines


def shell_commands(script: str) -> tuple[list[list[str]], list[str]]:
    """The simple commands of a shell script, each as its words (redirections dropped),
    and what could not be split (an unbalanced quote)."""
    commands: list[list[str]] = []
    problems: list[str] = []
    if len(script) > MAX_SCRIPT:
        return [], [f"a shell script of {len(script):,} characters (more than {MAX_SCRIPT >> 10} KiB; not read)"]
    for line in _logical_lines(script):
        line = re.sub(r"(?<=\s)\d*[<>]&\d+|^\d*[<>]&\d+", " ", line)  # 2>&1, >&2
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")  # not "()": $(VAR) stays one word
        lexer.whitespace_split = True
        lexer.commenters = ""
        try:
            tokens = list(lexer)
        except ValueError as exc:
            problems.append(f"{' '.join(line.split())[:120]} ({exc})")
            continue
        words: list[str] = []
        skip = False
        for token in tokens:
            if skip:
                skip = False
            elif token and set(token) <= set(";&|"):
                if words:
                    commands.append(words)
                words = []
            elif re.fullmatch(r"\d*(>>?|<|&>)", token):
                skip = True  # the redirection's target
            else:
                words.append(token)
        if words:
            commands.append(words)
    return commands, problems


@dataclass
class Command:
    engine: str
    args: list[str]  # the engine's own arguments
    positional_model: bool  # ``vllm serve MODEL``: a leading positional is the model
    launcher: str  # how it was started, for the record
    env: dict[str, str] = field(default_factory=dict)  # VAR=value before the command, export VAR=value


def find_engine(words: list[str]) -> Command | None:
    """``vllm serve ...``, ``python -m <engine module> ...`` after ``exec``/``env``/``VAR=x``."""
    env: dict[str, str] = {}
    i = 0
    while i < len(words):
        w = words[i]
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w):
            name, _, value = w.partition("=")
            env[name] = value
        elif w not in ("exec", "env", "nohup", "time", "stdbuf", "-oL", "-eL", "--"):
            break
        i += 1
    rest = words[i:]
    if not rest:
        return None
    exe = os.path.basename(rest[0])
    if exe == "vllm" and len(rest) > 1 and rest[1] == "serve":
        return Command("vllm", rest[2:], True, "vllm serve", env)
    if _PYTHON.match(exe):
        for j in range(1, len(rest) - 1):
            if rest[j] == "-m":
                engine = ENGINE_MODULES.get(rest[j + 1])
                if engine is None:
                    return None
                args = rest[j + 2 :]
                if rest[j + 1] == "vllm.entrypoints.cli.main" and args[:1] == ["serve"]:
                    return Command("vllm", args[1:], True, "vllm serve", env)
                return Command(engine, args, False, f"python -m {rest[j + 1]}", env)
            if not rest[j].startswith("-"):
                return None  # python script.py
    return None


def script_engine(script: str) -> tuple[Command | None, list[str]]:
    """The engine command in a shell script, with ``export VAR=x`` lines applied to its env."""
    commands, problems = shell_commands(script)
    exported: dict[str, str] = {}
    for words in commands:
        if words[0] == "export" or all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w) for w in words):
            for w in words[1:] if words[0] == "export" else words:
                name, eq, value = w.partition("=")
                if eq:
                    exported[name] = value
            continue
        found = find_engine(words)
        if found:
            found.env = {**exported, **found.env}
            return found, problems
    return None, problems


def engine_command(
    argv: list[str], image_engine: str | None, env: dict[str, str] | None = None
) -> tuple[Command | None, list[str], str]:
    """The engine invocation in a container's argv: ``(command, unparsed, how)``.

    ``how`` says which form was read: ``argv``, ``shell command line``, ``image entrypoint``.
    Kubernetes' ``$(VAR)`` is expanded first, as the kubelet does before any shell runs.
    """
    argv = [_K8S_VAR.sub(lambda m: (env or {}).get(m.group(1), m.group(0)), str(a)) for a in argv]
    for i, word in enumerate(argv[:-1]):
        if os.path.basename(word) in _SHELLS and re.fullmatch(r"-[a-z]*c[a-z]*", argv[i + 1]) and i + 2 < len(argv):
            found, problems = script_engine(argv[i + 2])
            return found, problems, "shell command line"
    direct = find_engine(argv)
    if direct:
        return direct, [], "argv"
    # A whole command line in one element (a block scalar, a compose string).
    for word in argv:
        if any(ch in word for ch in " \n\t"):
            found, problems = script_engine(word)
            if found:
                return found, problems, "shell command line"
    if image_engine and (not argv or argv[0].startswith("-") or "/" in argv[0] and not argv[0].startswith("/")):
        # Arguments to the image's own entrypoint (vllm/vllm-openai runs the server).
        return Command(image_engine, argv, True, "image entrypoint"), [], "image entrypoint"
    return None, [], ""
