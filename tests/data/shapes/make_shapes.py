"""Write the small files of issue 44 ("what a sample means"), each in the shape its writer's
source gives it (README.md beside this says which source and version). Deterministic: run
``python tests/data/shapes/make_shapes.py`` from the repository root and the files are the same.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).parent


# ---------------------------------------------------------------- vLLM benchmark_serving.py


def _vllm_metrics(ttfts: list[float], tpots: list[float], itls: list[float]) -> dict[str, float]:
    """The writer's process_one_metric for ttft, tpot and itl with the default --metric-percentiles 99
    (numpy's default linear percentile, as np.percentile in calculate_metrics)."""
    import numpy as np

    out: dict[str, float] = {}
    for name, values in (("ttft", ttfts), ("tpot", tpots), ("itl", itls)):
        arr = np.asarray(values or [0.0]) * 1000.0
        out[f"mean_{name}_ms"] = float(arr.mean())
        out[f"median_{name}_ms"] = float(np.median(arr))
        out[f"std_{name}_ms"] = float(arr.std())
        out[f"p99_{name}_ms"] = float(np.percentile(arr, 99))
    return out


def vllm_empty_responses(n: int = 200, empty_every: tuple[int, ...] = tuple(range(19))) -> dict:
    """benchmark_serving.py (vLLM at 0049e29c): 38 % of the requests came back empty. The server
    answered with an HTTP error whose reason was empty, so ``success`` is False and ``error`` is
    ``""``; the result keeps such a request with ``ttft`` 0.0, ``output_len`` 0 (``actual_output_lens``
    appends 0), no gaps and empty text. At that commit the per-request arrays are always written (the
    --save-detailed deletion runs before the benchmark result is merged in)."""
    rng = random.Random(44)
    input_lens, output_lens, ttfts, itls, texts, errors = [], [], [], [], [], []
    ok_ttfts, ok_tpots, ok_itls = [], [], []
    total_input = 0
    for i in range(n):
        prompt = 512
        input_lens.append(prompt)
        if i % 50 in empty_every:  # 19 of every 50: 38 %
            output_lens.append(0)
            ttfts.append(0.0)
            itls.append([])
            texts.append("")
            errors.append("")
            continue
        ttft = round(rng.uniform(0.08, 0.2) + (rng.uniform(8.0, 9.6) if i % 17 == 3 else 0.0), 6)
        gaps = [round(rng.uniform(0.015, 0.03), 6) for _ in range(7)]
        latency = ttft + sum(gaps)
        output_lens.append(8)
        ttfts.append(ttft)
        itls.append(gaps)
        texts.append("one two three four five six seven eight")
        errors.append("")
        total_input += prompt
        ok_ttfts.append(ttft)
        ok_tpots.append((latency - ttft) / 7)
        ok_itls.extend(gaps)
    completed = len(ok_ttfts)
    duration = 31.25
    return {
        "date": "20250412-101500",
        "backend": "vllm",
        "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct",
        "num_prompts": n,
        "request_rate": 8.0,
        "burstiness": 1.0,
        "max_concurrency": None,
        "duration": duration,
        "completed": completed,
        "total_input_tokens": total_input,
        "total_output_tokens": sum(output_lens),
        "request_throughput": completed / duration,
        "request_goodput:": None,
        "output_throughput": sum(output_lens) / duration,
        "total_token_throughput": (total_input + sum(output_lens)) / duration,
        "input_lens": input_lens,
        "output_lens": output_lens,
        "ttfts": ttfts,
        "itls": itls,
        "generated_texts": texts,
        "errors": errors,
        **_vllm_metrics(ok_ttfts, ok_tpots, ok_itls),
    }


def vllm_serve_summary(completed: int, failed: int, ttft_ms: float) -> dict:
    """``vllm bench serve --save-result`` (vLLM 0.10, vllm/benchmarks/serve.py): summary only, with
    ``failed`` beside ``completed``; the statistics are over the completed requests only."""
    duration = 60.0
    return {
        "date": "20250901-120000",
        "endpoint_type": "openai",
        "backend": "openai",
        "label": None,
        "model_id": "Qwen/Qwen2.5-7B-Instruct",
        "tokenizer_id": "Qwen/Qwen2.5-7B-Instruct",
        "num_prompts": completed + failed,
        "request_rate": 4.0,
        "burstiness": 1.0,
        "max_concurrency": None,
        "duration": duration,
        "completed": completed,
        "failed": failed,
        "total_input_tokens": 512 * completed,
        "total_output_tokens": 128 * completed,
        "request_throughput": completed / duration,
        "request_goodput": None,
        "output_throughput": 128 * completed / duration,
        "total_token_throughput": 640 * completed / duration,
        "max_output_tokens_per_s": 900.0,
        "max_concurrent_requests": 12,
        "mean_ttft_ms": ttft_ms,
        "median_ttft_ms": ttft_ms * 0.95,
        "std_ttft_ms": ttft_ms * 0.1,
        "p99_ttft_ms": ttft_ms * 1.6,
        "mean_tpot_ms": 14.0,
        "median_tpot_ms": 13.8,
        "std_tpot_ms": 0.9,
        "p99_tpot_ms": 16.5,
        "mean_itl_ms": 14.0,
        "median_itl_ms": 13.5,
        "std_itl_ms": 2.1,
        "p99_itl_ms": 21.0,
    }


def vllm_old_summary() -> dict:
    """benchmark_serving.py v0.6 ``--save-result``: no ``failed`` key (only ``completed``), no
    arrays; 500 of 500 requests completed."""
    return {
        "date": "20241015-093000",
        "backend": "vllm",
        "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct",
        "best_of": 1,
        "num_prompts": 500,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": None,
        "duration": 95.2,
        "completed": 500,
        "total_input_tokens": 256000,
        "total_output_tokens": 64000,
        "request_throughput": 5.25,
        "output_throughput": 672.3,
        "total_token_throughput": 3361.3,
        "mean_ttft_ms": 2140.0,
        "median_ttft_ms": 2010.0,
        "std_ttft_ms": 610.0,
        "p99_ttft_ms": 3900.0,
        "mean_tpot_ms": 31.0,
        "median_tpot_ms": 30.2,
        "std_tpot_ms": 3.3,
        "p99_tpot_ms": 41.0,
        "mean_itl_ms": 31.0,
        "median_itl_ms": 28.8,
        "std_itl_ms": 9.5,
        "p99_itl_ms": 66.0,
    }


def vllm_statistics_only() -> dict:
    """A ``vllm bench serve`` result kept to its latency statistics (the throughput, duration and
    counts dropped on the way, as a dashboard export does): TTFT, TPOT and ITL only."""
    summary = vllm_serve_summary(100, 0, 180.0)
    keep = ("date", "backend", "model_id", "tokenizer_id", "num_prompts", "request_rate", "burstiness")
    return {k: summary[k] for k in keep} | {
        k: v for k, v in summary.items() if k.endswith("_ms") and k.split("_")[1] in ("ttft", "tpot", "itl")
    }


# ---------------------------------------------------------------- LLMPerf token_benchmark_ray.py


def llmperf(n: int = 40) -> tuple[dict, list[dict]]:
    """ray-project/llmperf token_benchmark_ray.py (results version "2023-08-31"): the individual
    responses as the OpenAI chat client returns them (``error_code`` None and ``error_msg`` "" on
    success; a 500 leaves ``ttft_s`` 0 and ``end_to_end_latency_s`` 0), and the summary that
    ``metrics_summary`` + ``flatten_dict`` write (quantiles p25..p99 over the requests without
    ``error_code``). Four requests got HTTP 500; two came back empty (no error, no token)."""
    import numpy as np

    rng = random.Random(7)
    rows = []
    for i in range(n):
        prompt = 550
        if i in (5, 11, 23, 31):
            rows.append(
                {
                    "error_code": 500,
                    "error_msg": "Internal Server Error",
                    "inter_token_latency_s": 0,
                    "ttft_s": 0,
                    "end_to_end_latency_s": 0,
                    "request_output_throughput_token_per_s": 0,
                    "number_total_tokens": prompt,
                    "number_output_tokens": 0,
                    "number_input_tokens": prompt,
                }
            )
            continue
        if i in (8, 19):  # a 200 with no content: the client finds no token, says no error
            rows.append(
                {
                    "error_code": None,
                    "error_msg": "",
                    "inter_token_latency_s": 0,
                    "ttft_s": 0,
                    "end_to_end_latency_s": round(rng.uniform(0.05, 0.1), 6),
                    "request_output_throughput_token_per_s": 0,
                    "number_total_tokens": prompt,
                    "number_output_tokens": 0,
                    "number_input_tokens": prompt,
                }
            )
            continue
        out = rng.randint(140, 160)
        ttft = round(rng.uniform(0.4, 0.7), 6)
        e2e = round(ttft + out * rng.uniform(0.03, 0.05), 6)
        rows.append(
            {
                "error_code": None,
                "error_msg": "",
                "inter_token_latency_s": e2e / out,
                "ttft_s": ttft,
                "end_to_end_latency_s": e2e,
                "request_output_throughput_token_per_s": out / e2e,
                "number_total_tokens": prompt + out,
                "number_output_tokens": out,
                "number_input_tokens": prompt,
            }
        )
    good = [r for r in rows if r["error_code"] is None]
    summary = {
        "version": "2023-08-31",
        "name": "meta-llama-Llama-2-7b-chat-hf_550_150_summary",
        "model": "meta-llama/Llama-2-7b-chat-hf",
        "mean_input_tokens": 550,
        "stddev_input_tokens": 0,
        "mean_output_tokens": 150,
        "stddev_output_tokens": 10,
        "num_concurrent_requests": 4,
    }
    for key in (
        "inter_token_latency_s",
        "ttft_s",
        "end_to_end_latency_s",
        "request_output_throughput_token_per_s",
        "number_input_tokens",
        "number_output_tokens",
    ):
        values = np.asarray([float(r[key]) for r in good])
        for q in (0.25, 0.5, 0.75, 0.9, 0.95, 0.99):
            summary[f"results_{key}_quantiles_p{int(q * 100)}"] = float(np.quantile(values, q))
        summary[f"results_{key}_mean"] = float(values.mean())
        summary[f"results_{key}_min"] = float(values.min())
        summary[f"results_{key}_max"] = float(values.max())
        summary[f"results_{key}_stddev"] = float(values.std(ddof=1))
    errors = n - len(good)
    duration = 90.0
    summary.update(
        {
            "results_num_requests_started": n,
            "results_error_rate": errors / n,
            "results_number_errors": errors,
            "results_error_code_frequency": "{500: 4}",
            "results_mean_output_throughput_token_per_s": sum(r["number_output_tokens"] for r in good) / duration,
            "results_num_completed_requests": len(good),
            "results_num_completed_requests_per_min": len(good) / duration * 60,
            "timestamp": 1718208212,
        }
    )
    return summary, rows


# ---------------------------------------------------------------- Slurm sacct / sinfo


def _fixed(widths: list[int], values: list[str]) -> str:
    """One line as print_fields.c prints it: each field right-justified in its width, a value
    longer than the width cut with its last character replaced by '+', a space after each."""
    out = []
    for width, value in zip(widths, values):
        if len(value) > width:
            value = value[: width - 1] + "+"
        out.append(f"{value:>{width}} ")
    return "".join(out)


def sacct_fixed_width() -> str:
    """``sacct -a -X --format=JobID,JobName,Partition,State,Submit,Eligible,Start,End,AllocTRES``
    without -P: sacct's own widths (JobID 12, JobName 10, Partition 10, State 10, times 19,
    AllocTRES 10), so the TRES of every job and a long state are cut short with '+'."""
    names = ["JobID", "JobName", "Partition", "State", "Submit", "Eligible", "Start", "End", "AllocTRES"]
    widths = [12, 10, 10, 10, 19, 19, 19, 19, 10]
    jobs = [
        ("5001", "train-llama", "gpu", "COMPLETED", "10:00:00", "10:00:00", "10:00:30", "10:40:00", "cpu=8,gres/gpu=8"),
        ("5002", "eval", "gpu", "COMPLETED", "10:05:00", "10:05:00", "10:06:00", "10:20:00", "cpu=4,gres/gpu=4"),
        ("5003", "sweep", "gpu", "CANCELLED by 1001", "10:10:00", "10:10:00", "10:12:00", "10:30:00", "gres/gpu=2"),
        ("5004", "pretrain", "gpu", "RUNNING", "10:20:00", "10:20:00", "10:25:00", "Unknown", "gres/gpu=8"),
        ("5005", "big-job", "gpu", "PENDING", "10:30:00", "10:30:00", "Unknown", "Unknown", ""),
    ]
    lines = [_fixed(widths, names), " ".join("-" * w for w in widths) + " "]
    for job, name, part, state, submit, eligible, start, end, tres in jobs:

        def at(t: str) -> str:
            return t if t == "Unknown" else f"2026-11-09T{t}"

        lines.append(_fixed(widths, [job, name, part, state, at(submit), at(eligible), at(start), at(end), tres]))
    return "\n".join(lines) + "\n"


def sacct_tilde() -> str:
    """``sacct -a -X -P --delimiter='~' --format=JobID,State,Submit,Eligible,Start,End,AllocTRES``."""
    rows = [
        "JobID~State~Submit~Eligible~Start~End~AllocTRES",
        "7001~COMPLETED~2026-11-09T10:00:00~2026-11-09T10:00:00~2026-11-09T10:01:00~2026-11-09T10:30:00~gres/gpu=4",
        "7002~COMPLETED~2026-11-09T10:02:00~2026-11-09T10:02:00~2026-11-09T10:05:00~2026-11-09T10:45:00~gres/gpu=8",
        "7003~RUNNING~2026-11-09T10:10:00~2026-11-09T10:10:00~2026-11-09T10:20:00~Unknown~gres/gpu=2",
    ]
    return "\n".join(rows) + "\n"


def sacct_no_times() -> str:
    """``sacct -a -X -P --format=JobID,JobName,Partition,State,AllocTRES``: no Submit, Eligible,
    Start or End column."""
    rows = ["JobID|JobName|Partition|State|AllocTRES"]
    states = ("COMPLETED", "COMPLETED", "RUNNING", "PENDING", "FAILED", "COMPLETED")
    for i, state in enumerate(states):
        rows.append(f"{8001 + i}|job{i}|gpu|{state}|cpu=8,gres/gpu={(i % 3 + 1) * 2},node=1")
    return "\n".join(rows) + "\n"


def sinfo(stamp: str, nodes: int = 8) -> str:
    """``sinfo -N -o "%N|%P|%t|%G|%T"`` style table taken at ``stamp``: ``nodes`` nodes of 8 H100."""
    rows = ["NODELIST|PARTITION|STATE|GRES|TIMESTAMP"]
    rows += [f"gpu-node{i}|gpu|mixed|gpu:h100:8(S:0-1)|{stamp}" for i in range(nodes)]
    return "\n".join(rows) + "\n"


def sacct_over_capacity() -> str:
    """-P output of jobs holding 78 GPUs at once on the 64-GPU pool of ``sinfo()`` (the sinfo was
    taken after two nodes were drained, or the gangs are mis-stated: either way the figures disagree)."""
    rows = ["JobID|State|Submit|Eligible|Start|End|AllocTRES"]
    gangs = (16, 16, 16, 16, 8, 6)  # 78 GPUs
    for i, gpus in enumerate(gangs):
        rows.append(
            f"{9001 + i}|COMPLETED|2026-11-09T10:00:00|2026-11-09T10:00:00|2026-11-09T10:0{i}:00|"
            f"2026-11-09T10:50:00|cpu=8,gres/gpu={gpus},node=1"
        )
    return "\n".join(rows) + "\n"


def sacct_nothing_started() -> str:
    """-P output of a window in which no job started: six jobs eligible and still pending at its
    end (2026-11-09T11:30:00, given with --to), the longest waiting since 10:00:00 (5,400 s)."""
    rows = ["JobID|State|Submit|Eligible|Start|End|ReqTRES|Reason"]
    for i, minute in enumerate((0, 10, 20, 30, 45, 65)):
        hh, mm = divmod(minute, 60)
        t = f"2026-11-09T{10 + hh:02d}:{mm:02d}:00"
        rows.append(f"{9101 + i}|PENDING|{t}|{t}|Unknown|Unknown|cpu=8,gres/gpu=8,node=1|Resources")
    return "\n".join(rows) + "\n"


# ---------------------------------------------------------------- Prometheus scrapes of two servers


def prom_scrape(start_time: float, success: float, kv_dtype: str, blocks: int) -> str:
    """A vLLM 0.9 /metrics scrape (prometheus_client text): process start time, cache config, a counter, a TTFT
    histogram."""
    edges = (0.1, 0.5, 1.0, 2.5, 5.0)
    ttft_counts = [success * f for f in (0.2, 0.7, 0.9, 0.98, 1.0)]
    lines = [
        "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.",
        "# TYPE process_start_time_seconds gauge",
        f"process_start_time_seconds {start_time}",
        "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig",
        "# TYPE vllm:cache_config_info gauge",
        f'vllm:cache_config_info{{block_size="16",cache_dtype="{kv_dtype}",enable_prefix_caching="True",'
        f'gpu_memory_utilization="0.9",num_gpu_blocks="{blocks}"}} 1.0',
        "# HELP vllm:request_success_total Count of successfully processed requests.",
        "# TYPE vllm:request_success_total counter",
        f'vllm:request_success_total{{engine="0",finished_reason="length",model_name="m"}} {success}',
        "# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.",
        "# TYPE vllm:time_to_first_token_seconds histogram",
    ]
    for edge, count in zip(edges, ttft_counts):
        lines.append(f'vllm:time_to_first_token_seconds_bucket{{engine="0",le="{edge}",model_name="m"}} {count}')
    lines += [
        f'vllm:time_to_first_token_seconds_bucket{{engine="0",le="+Inf",model_name="m"}} {success}',
        f'vllm:time_to_first_token_seconds_count{{engine="0",model_name="m"}} {success}',
        f'vllm:time_to_first_token_seconds_sum{{engine="0",model_name="m"}} {success * 0.4}',
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    (HERE / "vllm_empty_responses.json").write_text(json.dumps(vllm_empty_responses()))
    (HERE / "vllm_serve_2_of_200.json").write_text(json.dumps(vllm_serve_summary(2, 198, 41.0)))
    (HERE / "vllm_serve_200_of_200.json").write_text(json.dumps(vllm_serve_summary(200, 0, 107.7)))
    (HERE / "vllm_500_of_500.json").write_text(json.dumps(vllm_old_summary()))
    (HERE / "vllm_statistics_only.json").write_text(json.dumps(vllm_statistics_only()))
    summary, rows = llmperf()
    llm = HERE / "llmperf"
    llm.mkdir(exist_ok=True)
    (llm / "meta-llama-Llama-2-7b-chat-hf_550_150_summary.json").write_text(json.dumps(summary, indent=4))
    (llm / "meta-llama-Llama-2-7b-chat-hf_550_150_individual_responses.json").write_text(json.dumps(rows, indent=4))
    for folder, files in {
        "sacct_fixed_width": {"sacct.txt": sacct_fixed_width()},
        "sacct_tilde": {"sacct.txt": sacct_tilde()},
        "sacct_no_times": {"sacct.txt": sacct_no_times()},
        "sacct_over_capacity": {"sacct.txt": sacct_over_capacity(), "sinfo.txt": sinfo("2026-11-09T10:50:00")},
        "sacct_nothing_started": {"sacct.txt": sacct_nothing_started(), "sinfo.txt": sinfo("2026-11-09T11:30:00")},
    }.items():
        (HERE / folder).mkdir(exist_ok=True)
        for name, text in files.items():
            (HERE / folder / name).write_text(text)
    prom = HERE / "prom_two_servers"
    prom.mkdir(exist_ok=True)
    (prom / "before.prom").write_text(prom_scrape(1762675200.0, 1200.0, "auto", 28000))
    (prom / "after.prom").write_text(prom_scrape(1762678800.0, 40.0, "fp8", 56000))


if __name__ == "__main__":
    main()
