"""Prometheus text scrapes: parser, window deltas, histogram quantiles with bounds, problems."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pytest

from workbench.errors import BadInput
from workbench.formats import prom_text
from workbench.importers.base import ImportOptions, probe_file
from workbench.importers.prometheus import IMPORTER

DATA = Path(__file__).resolve().parents[1] / "data" / "inference"
PAIR = ImportOptions(params={"scrape_pair": True})


def parse(text: str) -> prom_text.Scrape:
    return prom_text.parse(io.BytesIO(text.encode()), Path("x.prom"))


def pair_run(before: Path, after: Path):
    (run,) = list(IMPORTER.read([before, after], PAIR))
    return run


def test_worked_example_p95_carries_bucket_bounds() -> None:
    """vLLM docs/design/metrics.md: 13/97/123/138/140 -> p95 0.0733 s in [0.06, 0.08]."""
    run = pair_run(DATA / "vllm_before.prom", DATA / "vllm_after.prom")
    ttft = run.meta["summary"]["ttft_ms"]
    assert ttft["count"] == 140
    assert ttft["p95"] == pytest.approx(73.3333, rel=1e-4)
    assert ttft["p95_bounds"] == pytest.approx([60.0, 80.0])
    assert ttft["mean"] == pytest.approx(48.0)  # exact from _sum/_count deltas
    assert run.sample_count == 0 and run.meta["summary_only"]
    assert run.meta["scrape"]["problems"] == []


def test_phase_means_are_exact_and_first_bucket_quantiles_flagged() -> None:
    run = pair_run(DATA / "vllm_before.prom", DATA / "vllm_after.prom")
    s = run.meta["summary"]
    assert s["queue_ms"]["mean"] == pytest.approx(21.2)
    assert s["prefill_ms"]["mean"] == pytest.approx(19.0)
    assert s["decode_ms"]["mean"] == pytest.approx(90.1)
    # Everything fell in (0, 0.3 s]: the p95 is interpolation, and says so.
    assert s["queue_ms"]["p95_bounds"] == pytest.approx([0.0, 300.0])
    assert s["queue_ms"]["p95_first_bucket"] is True
    assert s["frontend_residual_mean_ms"] == pytest.approx(48.0 - 21.2 - 19.0)
    assert s["requests_completed"] == 140  # summed over finished_reason
    assert run.work.amount == 17920
    assert run.dimensions["model"].value == "meta-llama/Llama-3.1-8B-Instruct"
    cfg = run.dimensions["engine_config"]
    assert cfg.source == "measured" and cfg.value["prefix_caching"] is False and cfg.value["num_gpu_blocks"] == 27169


def test_renamed_metric_is_unknown_on_the_side_that_lacks_it() -> None:
    new = pair_run(DATA / "vllm_before.prom", DATA / "vllm_after.prom").meta["summary"]
    old = pair_run(DATA / "vllm_old_before.prom", DATA / "vllm_old_after.prom").meta["summary"]
    assert "inter_token_latency_ms" in new and "time_per_output_token_ms" not in new
    assert "time_per_output_token_ms" in old and "inter_token_latency_ms" not in old


def test_rename_inside_the_window_is_reported() -> None:
    run = pair_run(DATA / "vllm_old_before.prom", DATA / "vllm_after.prom")
    problems = " ".join(run.meta["scrape"]["problems"])
    assert "renamed vllm:inter_token_latency_seconds" in problems
    assert "inter_token_latency_ms" not in run.meta["summary"]
    assert "time_per_output_token_ms" not in run.meta["summary"]


def _ttft(counts: list[int], edges=("0.1", "0.5", "+Inf"), total_sum=1.0) -> str:
    lines = ["# TYPE vllm:time_to_first_token_seconds histogram"]
    lines += [f'vllm:time_to_first_token_seconds_bucket{{le="{e}"}} {c}' for e, c in zip(edges, counts)]
    lines += [
        f"vllm:time_to_first_token_seconds_sum {total_sum}",
        f"vllm:time_to_first_token_seconds_count {counts[-1]}",
    ]
    return "\n".join(lines) + "\n"


def test_bucket_edge_mismatch_keeps_mean_drops_quantiles(tmp_path: Path) -> None:
    (tmp_path / "a.prom").write_text(_ttft([1, 2, 2], ("0.1", "0.5", "+Inf"), 0.5))
    (tmp_path / "b.prom").write_text(_ttft([3, 5, 6, 6], ("0.1", "0.5", "1.0", "+Inf"), 2.5))
    run = pair_run(tmp_path / "a.prom", tmp_path / "b.prom")
    ttft = run.meta["summary"]["ttft_ms"]
    assert "p95" not in ttft and ttft["mean"] == pytest.approx(500.0)
    assert any("bucket edges differ" in p for p in run.meta["scrape"]["problems"])


def test_a_counter_going_backwards_refuses_the_pair(tmp_path: Path) -> None:
    (tmp_path / "a.prom").write_text("# TYPE vllm:generation_tokens counter\nvllm:generation_tokens_total 500\n")
    (tmp_path / "b.prom").write_text("# TYPE vllm:generation_tokens counter\nvllm:generation_tokens_total 20\n")
    with pytest.raises(
        BadInput,
        match=r"not the same server as a\.prom: 1 counter\(s\) went backwards "
        r"\(vllm:generation_tokens 500 -> 20\)",
    ):
        pair_run(tmp_path / "a.prom", tmp_path / "b.prom")


def test_a_histogram_going_backwards_refuses_the_pair(tmp_path: Path) -> None:
    (tmp_path / "a.prom").write_text(_ttft([5, 9, 9], total_sum=3.0))
    (tmp_path / "b.prom").write_text(_ttft([1, 2, 2], total_sum=0.5))
    with pytest.raises(BadInput, match=r"vllm:time_to_first_token_seconds count 9 -> 2"):
        pair_run(tmp_path / "a.prom", tmp_path / "b.prom")


def test_scrapes_of_two_server_launches_are_refused_naming_what_differs(tmp_path: Path) -> None:
    """tests/data/shapes/prom_two_servers: another process start time and another cache configuration."""
    two = DATA.parent / "shapes" / "prom_two_servers"
    with pytest.raises(BadInput, match="process_start_time_seconds is 1762675200 before and 1762678800 after"):
        pair_run(two / "before.prom", two / "after.prom")
    after = tmp_path / "after.prom"  # the same start time: the cache configuration still tells them apart
    after.write_text((two / "after.prom").read_text().replace("1762678800.0", "1762675200.0"))
    with pytest.raises(BadInput, match=r"vllm:cache_config_info differs \(cache_dtype auto -> fp8, num_gpu_blocks"):
        pair_run(two / "before.prom", after)
    # each alone is a run of its totals since start, and says so
    (run,) = list(IMPORTER.read([after], ImportOptions()))
    assert any("since the server started" in w for w in run.typed_meta.notes)


def test_missing_metric_is_unknown_not_zero(tmp_path: Path) -> None:
    (tmp_path / "a.prom").write_text(_ttft([1, 2, 2]))
    (tmp_path / "b.prom").write_text(
        _ttft([3, 5, 5]) + "# TYPE vllm:num_preemptions counter\nvllm:num_preemptions_total 3\n"
    )
    run = pair_run(tmp_path / "a.prom", tmp_path / "b.prom")
    assert "preemptions" not in run.meta["scrape"]["counters"]
    assert any("missing from the before scrape" in p for p in run.meta["scrape"]["problems"])
    assert "queue_ms" not in run.meta["summary"]


def test_engines_summed_per_le_and_label_order_ignored() -> None:
    s = parse(
        "# TYPE x histogram\n"
        'x_bucket{engine="0",le="1.0"} 2\nx_bucket{le="+Inf",engine="0"} 3\n'
        'x_bucket{le="1.0",engine="1"} 4\nx_bucket{engine="1",le="+Inf"} 4\n'
        'x_sum{engine="0"} 1\nx_sum{engine="1"} 2\nx_count{engine="0"} 3\nx_count{engine="1"} 4\n'
        'x_created{engine="0"} 1.7e9\n'
    )
    h = s.histogram("x")
    assert h.edges == (1.0, math.inf) and h.cumulative == (6.0, 7.0) and h.count == 7


def test_label_escapes() -> None:
    s = parse('m{a="x\\"y",b="p\\\\q"} 1\nm{a="z"} 2\nm{a="w"} 3\n')
    assert (("a", 'x"y'), ("b", "p\\q")) in [labels for _, labels in s.series]


@pytest.mark.parametrize(
    "text, message",
    [
        ("# TYPE x counter\nx_total 12", "truncated"),
        ('# TYPE x histogram\nx_bucket{le="0.1"} 1\nx_sum 1\nx_count 1\n', "no +Inf bucket"),
        ('x{le="0.1 1\n', "not a Prometheus sample line"),
        ("x_total abc\n", "bad sample value"),
        ("x_total 1\nx_total 2\n", "duplicate series"),
        ("# just a comment\n", "no samples"),
        ("x " + "1" * 70000 + "\n", "longer than"),
    ],
)
def test_hostile_scrapes_fail_cleanly(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.prom"
    path.write_text(text)
    with pytest.raises(BadInput) as err:
        list(IMPORTER.read([path], ImportOptions()))
    assert message in str(err.value) and str(path) in str(err.value)


def test_million_column_line_fails_with_bounded_read(tmp_path: Path) -> None:
    path = tmp_path / "wide.prom"
    path.write_bytes(b"m{" + b'a="b",' * 1_000_000 + b"} 1\n")
    with pytest.raises(BadInput, match="line 1"):
        list(IMPORTER.read([path], ImportOptions()))


def test_scrape_pair_needs_two_files() -> None:
    with pytest.raises(BadInput, match="exactly two"):
        list(IMPORTER.read([DATA / "vllm_before.prom"], PAIR))


def test_single_scrape_is_cumulative_with_warning() -> None:
    (run,) = list(IMPORTER.read([DATA / "vllm_after.prom"], ImportOptions()))
    assert run.window["kind"] == "mixed"
    assert any("since the server started" in w for w in run.meta["warnings"])
    assert run.meta["summary"]["ttft_ms"]["count"] == 160


def test_sniff_by_content_not_name(tmp_path: Path) -> None:
    odd = tmp_path / "metrics.json"
    odd.write_bytes((DATA / "vllm_after.prom").read_bytes())
    assert IMPORTER.sniff(probe_file(odd))
    assert not IMPORTER.sniff(probe_file(DATA / "vllm_bench_detailed.json"))


def test_histogram_quantile_interpolates_inside_its_bucket() -> None:
    # 140 observations; rank 0.95 * 140 = 133 falls in (0.06, 0.08], which holds 123..138:
    # 0.06 + 0.02 * (133 - 123) / 15, by hand.
    edges = [0.02, 0.04, 0.06, 0.08, 0.1, math.inf]
    cum = [13, 97, 123, 138, 140, 140]
    q = prom_text.histogram_quantile(edges, cum, 0.95)
    assert q is not None
    assert (q.value, q.lo, q.hi) == pytest.approx((0.06 + 0.02 * 10 / 15, 0.06, 0.08))
    top = prom_text.histogram_quantile([0.3, math.inf], [1, 10], 0.95)
    assert top is not None and top.lower_bound_only and top.lo == 0.3


def _sglang(n: int, total_ttft: float) -> str:
    lab = 'model_name="qwen",engine_type="unified",tp_rank="0"'
    lines = ["# HELP sglang:time_to_first_token_seconds TTFT", "# TYPE sglang:time_to_first_token_seconds histogram"]
    lines += [
        f'sglang:time_to_first_token_seconds_bucket{{{lab},le="{e}"}} {c}'
        for e, c in (("0.1", n // 2), ("0.5", n), ("+Inf", n))
    ]
    lines += [
        f"sglang:time_to_first_token_seconds_sum{{{lab}}} {total_ttft}",
        f"sglang:time_to_first_token_seconds_count{{{lab}}} {n}",
    ]
    lines += ["# TYPE sglang:queue_time_seconds histogram"]
    lines += [f'sglang:queue_time_seconds_bucket{{{lab},le="{e}"}} {n}' for e in ("0.05", "+Inf")]
    lines += [f"sglang:queue_time_seconds_sum{{{lab}}} {n * 0.01}", f"sglang:queue_time_seconds_count{{{lab}}} {n}"]
    lines += [
        "# TYPE sglang:generation_tokens counter",
        f"sglang:generation_tokens_total{{{lab}}} {n * 128}",
        "# TYPE sglang:num_running_reqs gauge",
        f"sglang:num_running_reqs{{{lab}}} 3",
    ]
    return "\n".join(lines) + "\n"


def test_sglang_scrape_pair_maps_its_own_names(tmp_path: Path) -> None:
    (tmp_path / "a.prom").write_text(_sglang(10, 1.0))
    (tmp_path / "b.prom").write_text(_sglang(50, 9.0))
    run = pair_run(tmp_path / "a.prom", tmp_path / "b.prom")
    s = run.meta["summary"]
    assert s["ttft_ms"]["source"] == "sglang:time_to_first_token_seconds"
    assert s["ttft_ms"]["mean"] == pytest.approx(200.0) and s["ttft_ms"]["count"] == 40
    assert s["queue_ms"]["mean"] == pytest.approx(10.0)
    assert s["total_output_tokens"] == 40 * 128
    assert "prefill_ms" not in s and "decode_ms" not in s  # SGLang has no such histograms: unknown
    assert run.dimensions["model"].value == "qwen"


# ---------------------------------------------------------------- silent zeros (issue 17 item 6)

_LABELS = 'engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"'


def _silent_pair(tmp_path, keep_new: bool):
    """The synthetic pair, as a v0.11 server scraped by a harness that still asks for
    the pre-0.9 names: gpu_cache_usage_perc and gpu_prefix_cache_* exist but stay 0."""
    out = []
    for name in ("vllm_before.prom", "vllm_after.prom"):
        text = (DATA / name).read_text()
        if not keep_new:
            text = "\n".join(line for line in text.splitlines() if "kv_cache_usage_perc" not in line) + "\n"
        text += (
            f"# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc{{{_LABELS}}} 0.0\n"
            f"# TYPE vllm:gpu_prefix_cache_queries counter\nvllm:gpu_prefix_cache_queries_total{{{_LABELS}}} 0.0\n"
            f"# TYPE vllm:gpu_prefix_cache_hits counter\nvllm:gpu_prefix_cache_hits_total{{{_LABELS}}} 0.0\n"
        )
        path = tmp_path / name
        path.write_text(text)
        out.append(path)
    return out


def test_renamed_metric_stuck_at_zero_is_missing_with_the_rename(tmp_path) -> None:
    from workbench.importers.prometheus import IMPORTER as PROM

    (run,) = PROM.read(_silent_pair(tmp_path, keep_new=False), ImportOptions(params={"scrape_pair": True}))
    missing = {m["metric"]: m["reason"] for m in run.meta["scrape"]["missing"]}
    assert "kv_cache_usage_perc in vLLM 0.9" in missing["vllm:gpu_cache_usage_perc"]
    assert "vllm:gpu_prefix_cache_hits" in missing
    summary = run.meta["summary"]
    assert summary["kv_cache_usage"]["unknown"] is True  # never "0 %"
    assert "prefix_cache_hit_rate" not in summary
    assert any("reported missing, not 0" in w for w in run.meta["warnings"])


def test_new_name_present_is_read_and_old_zero_still_named(tmp_path) -> None:
    from workbench.importers.prometheus import IMPORTER as PROM

    (run,) = PROM.read(_silent_pair(tmp_path, keep_new=True), ImportOptions(params={"scrape_pair": True}))
    usage = run.meta["summary"]["kv_cache_usage"]
    assert usage["after"] == pytest.approx(0.031) and usage["source"] == "vllm:kv_cache_usage_perc"
    assert "vllm:gpu_cache_usage_perc" in {m["metric"] for m in run.meta["scrape"]["missing"]}


def test_zero_without_traffic_is_not_called_missing(tmp_path) -> None:
    from workbench.importers.prometheus import IMPORTER as PROM

    paths = _silent_pair(tmp_path, keep_new=False)
    paths[1].write_text(paths[0].read_text())  # nothing served in the window
    (run,) = PROM.read(paths, ImportOptions(params={"scrape_pair": True}))
    assert "missing" not in run.meta["scrape"]
