"""Snapshots are native captures the workbench imports unchanged, and compare."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from workbench.importers.native import read_capture
from workbench.recorder import TriggerRule

from .helpers import assert_no_nan, load, record_steps

TRAINING_DIMS = {
    "model": "toy",
    "objective": "regression",
    "hardware": "1x test CPU",
    "topology": "single process",
    "rank_count": 1,
    "effective_batch": 32,
}


def test_training_snapshot_follows_the_capture_format(make_recorder, clock):
    rec = make_recorder(dimensions=TRAINING_DIMS, rank=0, label="unit")
    record_steps(rec, clock, [10.0, 12.0, 11.0])
    rec.mark("epoch 1 done", epoch=1)
    path = rec.snapshot("on demand")
    doc = load(path)
    assert doc["format"] == "workbench.capture/1" and doc["lens"] == "training"
    assert doc["label"] == "unit: on demand"
    assert doc["recorded_at"].endswith("Z")
    assert doc["dimensions"] == TRAINING_DIMS
    assert doc["window"]["kind"] == "steady" and doc["window"]["snapshot_reason"] == "on demand"
    assert doc["work"] == {"unit": "samples", "amount": 96}
    first = doc["samples"][0]
    assert first["step"] == 0 and first["rank"] == 0
    assert first["step_ms"] == pytest.approx(10.0)
    assert first["input_ms"] == pytest.approx(5.0) and first["compute_ms"] == pytest.approx(5.0)
    assert first["samples"] == 32
    assert isinstance(first["started_at"], float)
    assert [e["kind"] for e in doc["recorder"]["events"]] == ["mark"]
    assert doc["recorder"]["events"][0]["epoch"] == 1
    assert doc["recorder"]["spans"]["evicted_records"] == 0
    assert_no_nan(doc)
    # Every duration key carries its unit; nothing else ends in _s or _ms by accident.
    for sample in doc["samples"]:
        for key, value in sample.items():
            if key.endswith(("_ms", "_s")):
                assert isinstance(value, float) and value >= 0


def test_native_importer_accepts_a_snapshot_unchanged(make_recorder, clock):
    rec = make_recorder(dimensions=TRAINING_DIMS)
    record_steps(rec, clock, [10.0] * 20)
    run = read_capture(rec.snapshot("x"))
    assert run.lens == "training"
    assert run.sample_count == 20
    assert run.samples["step_ms"][0] == pytest.approx(10.0)
    assert run.samples["input_ms"][3] == pytest.approx(5.0)
    assert run.dimensions["model"].value == "toy"
    assert run.window_kind == "steady"


def test_a_missing_phase_is_absent_not_zero(make_recorder, clock):
    rec = make_recorder(dimensions=TRAINING_DIMS)
    record_steps(rec, clock, [10.0], phases=("input", "compute"))
    record_steps(rec, clock, [10.0], phases=("compute",))  # no input phase in step 1
    doc = load(rec.snapshot("x"))
    assert "input_ms" in doc["samples"][0] and "input_ms" not in doc["samples"][1]
    run = read_capture(rec.snapshot("again"))
    import math

    assert math.isnan(run.samples["input_ms"][1])


def test_phases_repeated_in_a_step_are_summed(make_recorder, clock):
    rec = make_recorder()
    start = clock.now
    rec.record_step(start, start + 10_000_000, phases={"communication": (start, start + 2_000_000)})
    # The same name twice via the context API on a fresh step.
    with rec.step():
        for _ in range(3):
            with rec.phase("communication"):
                clock.advance_ms(1.5)
    doc = load(rec.snapshot("x"))
    assert doc["samples"][0]["communication_ms"] == pytest.approx(2.0)
    assert doc["samples"][1]["communication_ms"] == pytest.approx(4.5)
    assert doc["samples"][1]["step_ms"] == pytest.approx(4.5)


def test_inference_snapshot(make_recorder, clock):
    rec = make_recorder(
        lens="inference",
        trigger=TriggerRule(slower_than_ms=500.0, k_median=None),
        dimensions={"model": "m", "weights": "sha256:00", "hardware": "h", "topology": "t", "request_mix": "512/128"},
    )
    for i in range(4):
        with rec.request() as req:
            with req.phase("queue"):
                clock.advance_ms(5)
            with req.phase("prefill"):
                clock.advance_ms(20)
            req.value("ttft_ms", 26.0)
            with req.phase("decode"):
                clock.advance_ms(100 if i != 3 else 900)
            req.value("prompt_tokens", 512)
            req.value("output_tokens", 128)
    try:
        with rec.request():
            clock.advance_ms(3)
            raise RuntimeError("the workload's own error")
    except RuntimeError:
        pass
    rec.close()
    paths = rec.stats()["snapshot_paths"]
    assert len(paths) == 1  # the slow request
    doc = load(paths[0])
    assert doc["lens"] == "inference" and doc["trigger"]["span"] == "request"
    last = doc["samples"][-1]
    assert last["decode_ms"] == pytest.approx(900.0) and last["e2e_ms"] == pytest.approx(925.0)
    assert last["prompt_tokens"] == 512 and last["ttft_ms"] == 26.0 and last["ok"] is True
    assert doc["work"] == {"unit": "tokens", "amount": 4 * 128}
    run = read_capture(Path(paths[0]))
    assert run.sample_count == 4
    # An on-demand snapshot afterwards counts the failed request.
    rec2 = make_recorder(lens="inference")
    for fail in (False, True):
        try:
            with rec2.request():
                if fail:
                    raise ValueError
        except ValueError:
            pass
    doc2 = load(rec2.snapshot("x"))
    assert [s["ok"] for s in doc2["samples"]] == [True, False]
    assert doc2["quality"]["error_rate"] == 0.5


def test_last_s_limits_the_window(make_recorder, clock):
    rec = make_recorder()
    record_steps(rec, clock, [100.0] * 50)  # ~5 s
    doc = load(rec.snapshot("tail", last_s=1.0))
    assert 9 <= len(doc["samples"]) <= 11
    assert doc["samples"][-1]["step"] == 49


def test_compressed_snapshot_and_atomic_write(make_recorder, clock, tmp_path):
    rec = make_recorder(compress=True)
    record_steps(rec, clock, [5.0] * 3)
    path = rec.snapshot("gz")
    assert path.name.endswith(".json.gz")
    doc = json.loads(gzip.decompress(path.read_bytes()))
    assert len(doc["samples"]) == 3
    assert not list(path.parent.glob(".wb-snapshot-*"))  # no temporary file left behind
    assert read_capture(path).sample_count == 3


def test_large_snapshot_is_written_in_chunks_identically(make_recorder, clock):
    from workbench.recorder.capture import iter_json

    doc = {"a": list(range(1000)), "b": {"c": [{"x": i / 3} for i in range(700)]}, "d": "é\n"}
    assert "".join(iter_json(doc, chunk=64)) == json.dumps(doc, separators=(",", ":"))
    with pytest.raises(ValueError):
        "".join(iter_json({"x": [float("nan")] * 300}, chunk=64))


@pytest.mark.store
def test_snapshot_goes_straight_into_the_store_and_compares(make_recorder, clock, store_url):
    from tests.conftest import run_wb
    from store import open_store

    rec = make_recorder(
        store_url=store_url, dimensions=TRAINING_DIMS, label="loop", trigger=TriggerRule(k_median=4.0, cooldown_s=0.0)
    )
    record_steps(rec, clock, [10.0] * 100)
    normal = rec.snapshot("normal window")
    stalled = [10.0] * 40
    stalled[-1] = 400.0
    record_steps(rec, clock, stalled)
    rec.close()
    stats = rec.stats()
    assert stats["faults"] == 0, stats.get("last_fault")
    assert stats["snapshots_imported"] == 2
    baseline, candidate = stats["imported_run_ids"]
    store = open_store(store_url)
    try:
        runs = {r.id: r for r in store.list_runs()}
        assert set(runs) == {baseline, candidate}
        assert store.load_run(candidate).sample_count == 140
    finally:
        store.close()
    assert normal is not None
    out = run_wb("--store", store_url, "compare", str(baseline), "--vs", str(candidate), "--json")
    assert json.loads(out.stdout)["refusal"]["dimension"] == "window"  # steady against incident
    out = run_wb(
        "--store",
        store_url,
        "compare",
        str(baseline),
        "--vs",
        str(candidate),
        "--json",
        "--accept",
        "window",
        "--why",
        "an incident against the normal window",
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["comparable"] is True, result["refusal"]
    primary = result["primary"]
    assert primary["metric"] == "mean_step_time"
    assert primary["baseline"] == pytest.approx(10.0, abs=0.01)
    # 139 steps of 10 ms and one of 400 ms.
    assert primary["candidate"] == pytest.approx((139 * 10.0 + 400.0) / 140, abs=0.01)


def test_row_codes_decode_and_the_counter_restarts_before_floats_lose_exactness(make_recorder, clock):
    import itertools

    import numpy as np

    from workbench.recorder.capture import SEQ_LIMIT, SEQ_UNIT, VALUE, decode

    seq, name, kind = decode(np.array([float(5 * SEQ_UNIT + 7 * 8 + VALUE)]))
    assert (seq[0], name[0], kind[0]) == (5, 7, VALUE)
    rec = make_recorder()
    rec._seq = itertools.count(SEQ_LIMIT - 8 * SEQ_UNIT, SEQ_UNIT)  # 8 spans before the limit
    record_steps(rec, clock, [1.0] * 40)
    doc = load(rec.snapshot("x"))
    steps = [s["step"] for s in doc["samples"]]
    assert len(steps) == 40
    assert steps[0] == SEQ_LIMIT // SEQ_UNIT - 8 and 0 in steps  # restarted, nothing lost
    starts = [s["started_at"] for s in doc["samples"]]
    assert starts == sorted(starts)  # ordered by time across the restart
    assert all(s["input_ms"] == pytest.approx(0.5) for s in doc["samples"])
