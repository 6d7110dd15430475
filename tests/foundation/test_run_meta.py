"""store.run_meta: a run's stored meta and window typed at the edge, unknown keys left as they are."""

from pathlib import Path

import pytest

from store.records import RunRecord
from store.run_meta import Load, RunMeta, RunWindow, Sweep

DATA = Path(__file__).resolve().parent.parent / "data"


def test_the_keys_wb_writes_decode_typed():
    run = RunRecord(
        "inference",
        "x",
        window={"kind": "steady", "duration_s": 12, "policy": "p"},
        meta={
            "load": {"requested_rate": 5, "concurrency": None, "strategy": "constant", "achieved_rate": 4.9},
            "sweep": {"id": "sw-1", "label": "l", "tool": "vllm", "axis": "rate", "level": 1, "levels": 3},
            "summary": {"ttft_ms": {"mean": 3, "p99": 9.5, "p99_bounds": [8, None], "source": "fam"}, "duration_s": 12},
            "distributed": {"backend": "nccl", "rank": 3, "world_size": 8},
            "warnings": ["one"],
            "tool_specific": {"kept": True},
        },
    )
    meta = run.typed_meta
    assert meta.unread == ()
    assert meta.load == Load(requested_rate=5.0, strategy="constant", achieved_rate=4.9)
    assert meta.sweep == Sweep(id="sw-1", label="l", tool="vllm", axis="rate", level=1, levels=3)
    assert meta.summary_block("ttft_ms") == {"mean": 3.0, "p99": 9.5, "p99_bounds": [8.0, None], "source": "fam"}
    assert meta.summary_scalar("duration_s") == 12.0 and meta.summary_scalar("ttft_ms") is None
    assert meta.distributed is not None and (meta.distributed.rank, meta.distributed.world_size) == (3, 8)
    assert meta.warnings == ("one",)
    assert run.meta["tool_specific"] == {"kept": True}, "an unknown key stays in the raw mapping"
    assert run.typed_window == RunWindow(kind="steady", duration_s=12.0, policy="p")


def test_a_key_of_another_shape_is_left_out_and_named_not_the_whole_run():
    meta = RunMeta.of(
        {
            "load": {"requested_rate": "fast"},
            "sweep": {"id": "sw-1", "axis": "diagonal"},
            "warnings": ["w"],
            "pool": {"capacity_gpus": 64},
        }
    )
    assert set(meta.unread) == {"load", "sweep"}
    assert meta.load is None and meta.sweep is None
    assert meta.warnings == ("w",) and meta.pool is not None and meta.pool.capacity_gpus == 64.0
    assert RunWindow.of({"kind": "sideways"}).unread == ("kind",)
    assert RunMeta.of(None) == RunMeta() and RunMeta.of({}).unread == ()


INFERENCE_FILES = [
    "aiperf_profile_export.jsonl",
    "guidellm_v03.json",
    "guidellm_scheduler_report.json",
    "sglang_bench.jsonl",
    "vllm_bench_detailed.json",
    "vllm_bench_serve.json",
    "vllm_bench_summaries.jsonl",
    "otlp_spans.jsonl",
    "genai_perf_profile_export.json",
]


@pytest.mark.parametrize("name", INFERENCE_FILES)
def test_every_importer_writes_what_the_schemas_read(name):
    """What the importers write decodes with nothing unread: the schemas are the writers' shape."""
    from workbench.ingest import read_files

    runs = read_files([DATA / "inference" / name]).runs
    assert runs
    for run in runs:
        assert run.typed_meta.unread == (), (run.label, run.typed_meta.unread)
        assert run.typed_window.unread == (), (run.label, run.typed_window.unread)


def test_a_prometheus_window_and_the_demo_captures_decode_whole():
    from workbench.demo import demo_captures_dir
    from workbench.ingest import read_files

    runs = [
        *read_files([DATA / "inference" / "vllm_before.prom", DATA / "inference" / "vllm_after.prom"]).runs,
        *read_files([demo_captures_dir() / lens for lens in ("inference", "training", "fleet")]).runs,
    ]
    assert {r.lens for r in runs} == {"inference", "training", "fleet"}
    for run in runs:
        assert run.typed_meta.unread == () and run.typed_window.unread == (), run.label
    assert any(r.typed_meta.sweep is not None for r in runs) or any(r.typed_meta.summary for r in runs)
