"""Generate the synthetic vLLM scrape fixtures (labelled synthetic; shapes from real v0.10 scrapes).

Run from the repository root: ``python tests/data/inference/make_scrapes.py``.
The TTFT window counts are the worked example of vllm docs/design/metrics.md
(cumulative 13/97/123/138/140 at le 0.02..0.1), so p95 = 0.0733 s in [0.06, 0.08].
"""

from pathlib import Path

HERE = Path(__file__).parent
TTFT_EDGES = [
    "0.001",
    "0.005",
    "0.01",
    "0.02",
    "0.04",
    "0.06",
    "0.08",
    "0.1",
    "0.25",
    "0.5",
    "0.75",
    "1.0",
    "2.5",
    "5.0",
    "7.5",
    "10.0",
    "+Inf",
]
LAT_EDGES = [
    "0.3",
    "0.5",
    "0.8",
    "1.0",
    "1.5",
    "2.0",
    "2.5",
    "5.0",
    "10.0",
    "15.0",
    "20.0",
    "30.0",
    "40.0",
    "50.0",
    "60.0",
    "+Inf",
]
ITL_EDGES = ["0.01", "0.025", "0.05", "0.075", "0.1", "0.15", "0.2", "0.3", "0.4", "0.5", "0.75", "1.0", "2.5", "+Inf"]
LABELS = 'engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"'


def hist(name, edges, cum, total_sum, help_text):
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} histogram"]
    for e, c in zip(edges, cum):
        lines.append(f'{name}_bucket{{{LABELS},le="{e}"}} {float(c)}')
    lines.append(f"{name}_count{{{LABELS}}} {float(cum[-1])}")
    lines.append(f"{name}_sum{{{LABELS}}} {total_sum!r}")
    lines.append(f"# HELP {name}_created created")
    lines.append(f"# TYPE {name}_created gauge")
    lines.append(f"{name}_created{{{LABELS}}} 1.7537953269358883e+09")
    return lines


def counter(name, value):
    return [f"# TYPE {name} counter", f"{name}_total{{{LABELS}}} {float(value)}"]


def scrape(base, add, itl_name="vllm:inter_token_latency_seconds", kv_name="vllm:kv_cache_usage_perc"):
    """base: cumulative state before; add: 1 when this is the 'after' scrape."""
    ttft = [0, 0, 0, 13, 97, 123, 138, 140, 140, 140, 140, 140, 140, 140, 140, 140, 140]
    lat = [140] * len(LAT_EDGES)
    itl = [0, 1000, 17000, 17700, 17780] + [17780] * 9
    scale = add
    out = ["# vLLM metrics (synthetic fixture)"]
    out += hist(
        "vllm:time_to_first_token_seconds", TTFT_EDGES, [base + scale * c for c in ttft], 5.0 + scale * 6.72, "TTFT"
    )
    for name, mean in (
        ("vllm:request_queue_time_seconds", 0.0212),
        ("vllm:request_prefill_time_seconds", 0.0190),
        ("vllm:request_decode_time_seconds", 0.0901),
        ("vllm:e2e_request_latency_seconds", 0.1400),
    ):
        out += hist(name, LAT_EDGES, [base + scale * c for c in lat], 3.0 + scale * mean * 140, name)
    out += hist(itl_name, ITL_EDGES, [10 * base + scale * c for c in itl], 20.0 + scale * 17780 * 0.03, "ITL")
    out += counter("vllm:prompt_tokens", 51200 * (1 + base) + scale * 71680)
    out += counter("vllm:generation_tokens", 12800 * (1 + base) + scale * 17920)
    out += counter("vllm:num_preemptions", 0)
    out += [
        "# TYPE vllm:request_success counter",
        f'vllm:request_success_total{{{LABELS},finished_reason="length"}} {float(base + scale * 140)}',
        f'vllm:request_success_total{{{LABELS},finished_reason="stop"}} 0.0',
    ]
    out += [f"# TYPE {kv_name} gauge", f"{kv_name}{{{LABELS}}} 0.031"]
    out += [
        "# TYPE vllm:cache_config_info gauge",
        'vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="False",gpu_memory_utilization="0.9",num_gpu_blocks="27169"} 1.0',
    ]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    (HERE / "vllm_before.prom").write_text(scrape(20, 0))
    (HERE / "vllm_after.prom").write_text(scrape(20, 1))
    # An older engine's scrape: TPOT/gpu_cache names (pre-0.11 / pre-0.9).
    (HERE / "vllm_old_before.prom").write_text(
        scrape(20, 0, "vllm:time_per_output_token_seconds", "vllm:gpu_cache_usage_perc")
    )
    (HERE / "vllm_old_after.prom").write_text(
        scrape(20, 1, "vllm:time_per_output_token_seconds", "vllm:gpu_cache_usage_perc")
    )
