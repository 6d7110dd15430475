"""Generate the synthetic benchmark-result fixtures (labelled synthetic; field names and
quirks as documented for each tool; see docs/importers.md). Deterministic.

Run from the repository root: ``python tests/data/inference/make_bench.py``.
"""

import json
import random
from pathlib import Path

HERE = Path(__file__).parent


def vllm_summary_lines():
    """Three benchmark_serving.py --save-result summaries concatenated one per line:
    metadata at top level, the 'request_goodput:' key, request_rate 'inf', p99 only."""
    lines = []
    for deployment, rate, ttft in (("base", 10.0, 54.58), ("kvcache", 10.0, 41.2), ("base", "inf", 1890.3)):
        lines.append(
            {
                "date": "20250530-203806",
                "backend": "vllm",
                "model_id": "meta-llama/Llama-3.2-3B-Instruct",
                "tokenizer_id": "meta-llama/Llama-3.2-3B-Instruct",
                "num_prompts": 300,
                "deployment": deployment,
                "gpu": "4xNVIDIA_L40S",
                "input_len": "1000",
                "output_len": "500",
                "request_rate": rate,
                "burstiness": 1.0,
                "max_concurrency": None,
                "duration": 36.03,
                "completed": 300,
                "total_input_tokens": 300000,
                "total_output_tokens": 150000,
                "request_throughput": 8.33,
                "request_goodput:": None,
                "output_throughput": 4163.2,
                "total_token_throughput": 12489.6,
                "mean_ttft_ms": ttft,
                "median_ttft_ms": ttft * 0.97,
                "std_ttft_ms": 9.27,
                "p99_ttft_ms": ttft * 1.64,
                "mean_tpot_ms": 12.1,
                "median_tpot_ms": 12.0,
                "std_tpot_ms": 0.4,
                "p99_tpot_ms": 13.2,
                "mean_itl_ms": 12.1,
                "median_itl_ms": 11.9,
                "std_itl_ms": 2.0,
                "p99_itl_ms": 19.5,
            }
        )
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def vllm_detailed(seed=7, n=40, failed=(5, 17)):
    """A vllm bench serve --save-detailed result: arrays per request, failures included."""
    rng = random.Random(seed)
    ttfts, itls, outs, ins, errors, lat = [], [], [], [], [], []
    for i in range(n):
        if i in failed:
            ttfts.append(0.0)
            itls.append([])
            outs.append(0)
            ins.append(512)
            errors.append("ServerDisconnectedError")
            lat.append(0.0)
            continue
        t = 0.09 + rng.random() * 0.04
        gaps = [0.010 + rng.random() * 0.004 for _ in range(127)]
        ttfts.append(t)
        itls.append(gaps)
        outs.append(128)
        ins.append(512)
        errors.append("")
        lat.append(t + sum(gaps))
    return json.dumps(
        {
            "date": "20260110-101500",
            "endpoint_type": "vllm",
            "backend": "vllm",
            "label": None,
            "model_id": "meta-llama/Llama-3.1-8B-Instruct",
            "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct",
            "num_prompts": n,
            "request_rate": "inf",
            "burstiness": 1.0,
            "max_concurrency": 8,
            "duration": 12.5,
            "completed": n - len(failed),
            "failed": len(failed),
            "total_input_tokens": 512 * (n - len(failed)),
            "total_output_tokens": 128 * (n - len(failed)),
            "request_throughput": 3.04,
            "request_goodput": None,
            "output_throughput": 389.1,
            "total_token_throughput": 1945.6,
            "mean_ttft_ms": 110.0,
            "median_ttft_ms": 109.0,
            "std_ttft_ms": 11.0,
            "p95_ttft_ms": 128.0,
            "p99_ttft_ms": 129.5,
            "input_lens": ins,
            "output_lens": outs,
            "ttfts": ttfts,
            "itls": itls,
            "latencies": lat,
            "generated_texts": ["" for _ in range(n)],
            "errors": errors,
            "vllm_version": "v0.11.0",
            "gpu": "1xH100-SXM5-80GB",
        }
    )


def sglang_lines():
    """Two SGLang bench_serving JSONL lines; the second with --output-details arrays."""
    server_info = {
        "model_path": "meta-llama/Llama-3.1-8B-Instruct",
        "tp_size": 1,
        "dtype": "bfloat16",
        "max_running_requests": 256,
        "chunked_prefill_size": 8192,
        "disable_radix_cache": False,
        "disable_cuda_graph": False,
        "kv_cache_dtype": "auto",
        "version": "0.4.9",
    }
    base = {
        "backend": "sglang",
        "dataset_name": "random",
        "request_rate": "inf",
        "max_concurrency": 16,
        "random_input_len": 512,
        "random_output_len": 128,
        "random_range_ratio": 1.0,
        "server_info": server_info,
        "duration": 20.0,
        "completed": 10,
        "total_input_tokens": 5120,
        "total_output_tokens": 1280,
        "total_output_tokens_retokenized": 1279,
        "request_throughput": 0.5,
        "input_throughput": 256.0,
        "output_throughput": 64.0,
        "total_throughput": 320.0,
        "mean_e2e_latency_ms": 1500.0,
        "median_e2e_latency_ms": 1490.0,
        "std_e2e_latency_ms": 30.0,
        "p99_e2e_latency_ms": 1560.0,
        "mean_ttft_ms": 120.0,
        "median_ttft_ms": 118.0,
        "std_ttft_ms": 5.0,
        "p99_ttft_ms": 135.0,
        "mean_tpot_ms": 10.9,
        "median_tpot_ms": 10.8,
        "std_tpot_ms": 0.3,
        "p99_tpot_ms": 11.6,
        "mean_itl_ms": 10.9,
        "median_itl_ms": 10.7,
        "std_itl_ms": 1.0,
        "p95_itl_ms": 12.5,
        "p99_itl_ms": 14.0,
        "concurrency": 15.2,
    }
    detailed = dict(
        base,
        tag="details",
        input_lens=[512] * 10,
        output_lens=[128] * 9 + [0],
        ttfts=[0.118 + 0.001 * i for i in range(9)] + [0.0],
        itls=[[0.0109] * 127 for _ in range(9)] + [[]],
        generated_texts=[""] * 10,
        errors=[""] * 9 + ["timeout"],
    )
    return json.dumps(base) + "\n" + json.dumps(detailed) + "\n"


def otlp_export(seed=11, n=30):
    """vLLM-shaped request spans, OTLP JSON, two export requests one per line (file exporter).
    One request failed (status ERROR), and one HTTP span carries no gen_ai.latency attributes."""
    rng = random.Random(seed)

    def attr(key, value):
        if isinstance(value, float):
            return {"key": key, "value": {"doubleValue": value}}
        if isinstance(value, int):
            return {"key": key, "value": {"intValue": str(value)}}
        return {"key": key, "value": {"stringValue": value}}

    lines = []
    for part in range(2):
        spans = []
        for i in range(part * n // 2, (part + 1) * n // 2):
            queue, prefill = 0.005 + rng.random() * 0.02, 0.03 + rng.random() * 0.01
            decode = 1.2 + rng.random() * 0.1
            ttft = queue + prefill + 0.004
            spans.append(
                {
                    "traceId": f"{i:032x}",
                    "spanId": f"{i:016x}",
                    "name": "llm_request",
                    "kind": 3,
                    "startTimeUnixNano": str(1767225600_000000000 + i * 10**8),
                    "endTimeUnixNano": str(1767225600_000000000 + i * 10**8 + int((ttft + decode) * 1e9)),
                    "attributes": [
                        attr("gen_ai.request.id", f"cmpl-{i}"),
                        attr("gen_ai.response.model", "meta-llama/Llama-3.1-8B-Instruct"),
                        attr("gen_ai.usage.prompt_tokens", 512),
                        attr("gen_ai.usage.completion_tokens", 128),
                        attr("gen_ai.latency.time_in_queue", queue),
                        attr("gen_ai.latency.time_in_model_prefill", prefill),
                        attr("gen_ai.latency.time_in_model_decode", decode),
                        attr("gen_ai.latency.time_to_first_token", ttft),
                        attr("gen_ai.latency.e2e", ttft + decode),
                    ],
                    "status": {"code": 2, "message": "aborted"} if i == 7 else {},
                }
            )
        if part == 0:
            spans.append(
                {
                    "traceId": "f" * 32,
                    "spanId": "e" * 16,
                    "name": "POST /v1/completions",
                    "kind": 2,
                    "attributes": [attr("http.method", "POST")],
                    "status": {},
                }
            )
        lines.append(
            {
                "resourceSpans": [
                    {
                        "resource": {"attributes": [attr("service.name", "vllm")]},
                        "scopeSpans": [{"scope": {"name": "vllm.llm_engine"}, "spans": spans}],
                    }
                ]
            }
        )
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def aiperf_records(seed=5, n=24):
    """AIPerf profile_export.jsonl with the older key set (ttft, timestamp_ns, credit_phase):
    2 warm-up records, one error record, one cancelled request."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        phase = "warmup" if i < 2 else "profiling"
        ttft = 40.0 + rng.random() * 10
        rec = {
            "metadata": {
                "x_request_id": f"r{i}",
                "timestamp_ns": 1767225600_000000000 + i * 10**7,
                "worker_id": "w0",
                "credit_phase": phase,
                "was_cancelled": i == 9,
            },
            "metrics": {
                "ttft": {"value": ttft, "unit": "ms"},
                "request_latency": {"value": ttft + 900.0, "unit": "ms"},
                "inter_token_latency": {"value": 7.0, "unit": "ms"},
                "input_sequence_length": {"value": 512, "unit": "tokens"},
                "output_sequence_length": {"value": 128, "unit": "tokens"},
            },
            "error": None,
        }
        if i == 5:
            rec["metrics"] = {}
            rec["error"] = {"code": 500, "type": "InternalServerError", "message": "boom"}
        out.append(json.dumps(rec))
    return "\n".join(out) + "\n"


def aiperf_aggregate():
    """profile_export_aiperf.json, old 'records' wrapper layout, p99 but no p95 for TTFT."""
    return json.dumps(
        {
            "records": {
                "ttft": {
                    "tag": "ttft",
                    "header": "Time to First Token",
                    "unit": "ms",
                    "avg": 45.1,
                    "min": 40.2,
                    "max": 60.3,
                    "p50": 44.0,
                    "p90": 51.0,
                    "p99": 58.9,
                    "std": 3.2,
                },
                "request_latency": {
                    "tag": "request_latency",
                    "unit": "ms",
                    "avg": 945.0,
                    "p50": 944.0,
                    "p95": 951.0,
                    "p99": 958.0,
                },
                "request_throughput": {"tag": "request_throughput", "unit": "requests/sec", "avg": 21.5},
                "request_count": {"tag": "request_count", "unit": "requests", "avg": 21},
            },
            "input_config": {
                "model": "openai/gpt-oss-20b",
                "synthetic_input_tokens_mean": 512,
                "output_tokens_mean": 128,
                "concurrency": 100,
            },
            "error_summary": [{"error_details": {"code": 500}, "count": 1}],
        }
    )


def genai_perf_raw(seed=3, n=12):
    """GenAI-Perf raw profile_export.json: one concurrency experiment, ns timestamps;
    request 4 got no response."""
    rng = random.Random(seed)
    reqs = []
    t0 = 1767225600_000_000_000
    for i in range(n):
        sent = t0 + i * 50_000_000
        first = sent + int((0.030 + rng.random() * 0.01) * 1e9)
        responses = [] if i == 4 else [first + k * 8_000_000 for k in range(64)]
        reqs.append(
            {
                "timestamp": sent,
                "sequence_id": i,
                "request_inputs": {"payload": "{}"},
                "response_timestamps": responses,
                "response_outputs": [{"response": "data: {}"}] * len(responses),
            }
        )
    return json.dumps(
        {
            "experiments": [
                {
                    "experiment": {"mode": "concurrency", "value": 4},
                    "requests": reqs,
                    "window_boundaries": [t0, t0 + n * 50_000_000],
                }
            ],
            "version": "2.41.0",
            "service_kind": "openai",
            "endpoint": "v1/chat/completions",
        }
    )


if __name__ == "__main__":
    (HERE / "genai_perf_profile_export.json").write_text(genai_perf_raw())
    (HERE / "aiperf_profile_export.jsonl").write_text(aiperf_records())
    (HERE / "aiperf_profile_export_aiperf.json").write_text(aiperf_aggregate())
    (HERE / "vllm_bench_summaries.jsonl").write_text(vllm_summary_lines())
    (HERE / "vllm_bench_detailed.json").write_text(vllm_detailed())
    (HERE / "sglang_bench.jsonl").write_text(sglang_lines())
    (HERE / "otlp_spans.jsonl").write_text(otlp_export())
