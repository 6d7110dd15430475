"""Issue 44: the shapes a stranger's files have (tests/data/shapes, made from each writer's source:
see its README), each checked against a figure computed here by hand from the file itself."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from lenses import builtin_lens
from tests.declare.helpers import wb, wbj
from workbench.importers import detect
from workbench.ingest import read_files

SHAPES = Path(__file__).resolve().parents[1] / "data" / "shapes"
DIMS = ("--dim", "weights=hub", "--dim", "hardware=1xH100", "--dim", "topology=tp1")


@pytest.fixture
def store(tmp_path):
    return ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")


def _copy(src: Path, dst: Path, **change) -> Path:
    doc = json.loads(src.read_text())
    doc.update(change)
    dst.write_text(json.dumps(doc))
    return dst


def test_empty_responses_are_failed_requests_out_of_the_p95_and_in_the_error_rate(tmp_path, store, capsys):
    path = SHAPES / "vllm_empty_responses.json"
    doc = json.loads(path.read_text())
    ttfts, outs = np.asarray(doc["ttfts"]) * 1000.0, np.asarray(doc["output_lens"])
    by_hand = float(np.percentile(ttfts[outs > 0], 95))  # numpy's linear percentile, as the lens
    counted_as_zero = float(np.percentile(ttfts, 95))  # what wb said before: 0 ms TTFTs in the p95
    assert (outs == 0).sum() == 76 and by_hand != pytest.approx(counted_as_zero)

    _code, _out, err = wb(capsys, *store, "import", str(path), *DIMS)
    assert "run 1: 76 of 200 requests failed or returned nothing (76 with no output token)" in " ".join(err.split())
    shown = wbj(capsys, *store, "show", "1")
    assert shown["quality"]["error_rate"] == pytest.approx(0.38)
    _code, out, _err = wb(capsys, *store, "show", "1")
    assert "note: 76 of 200 requests failed or returned nothing" in " ".join(out.split())

    twin = _copy(path, tmp_path / "again.json", date="20250412-111500")  # the same failures, run again
    wb(capsys, *store, "import", str(twin), *DIMS)
    result = wbj(capsys, *store, "compare", "1", "--vs", "2")
    assert result["primary"]["baseline"] == pytest.approx(by_hand)
    (guard,) = result["guardrails"]
    assert guard["state"] == "held" and guard["baseline"] == pytest.approx(0.38)  # 38 % vs 38 %, not 0 % vs 0 %
    _code, out, _err = wb(capsys, *store, "compare", "1", "--vs", "2")
    text = " ".join(out.split())
    assert "Error rate held (38 % vs 38 %)" in text
    assert "Baseline run 1: 76 of 200 requests failed or returned nothing" in text


def test_two_of_two_hundred_completed_breaks_the_error_rate_guardrail(store, capsys):
    wb(capsys, *store, "import", str(SHAPES / "vllm_serve_200_of_200.json"), *DIMS)
    wb(capsys, *store, "import", str(SHAPES / "vllm_serve_2_of_200.json"), *DIMS)
    assert wbj(capsys, *store, "show", "2")["quality"]["error_rate"] == pytest.approx(198 / 200)
    result = wbj(capsys, *store, "compare", "1", "--vs", "2")
    (guard,) = result["guardrails"]
    assert guard["state"] == "broken" and guard["candidate"] == pytest.approx(0.99)
    first = result["observations"][0]["text"]
    assert first.startswith("Candidate run 2: 198 of 200 requests failed or returned nothing (the file says 2")


def test_five_hundred_of_five_hundred_completed_is_an_error_rate_of_zero(store, capsys):
    wb(capsys, *store, "import", str(SHAPES / "vllm_500_of_500.json"))
    shown = wbj(capsys, *store, "show", "1")
    assert shown["quality"]["error_rate"] == 0.0
    assert shown["meta"]["load"]["strategy"] == "all at once"
    _code, out, _err = wb(capsys, *store, "show", "1")
    assert "load: all requests at once" in out and "inf rate" not in out


def test_a_summary_of_latency_statistics_only_imports_with_what_it_states(store, capsys):
    path = SHAPES / "vllm_statistics_only.json"
    doc = json.loads(path.read_text())
    assert "request_throughput" not in doc and "duration" not in doc
    wb(capsys, *store, "import", str(path))
    summary = wbj(capsys, *store, "show", "1")["meta"]["summary"]
    assert summary["ttft_ms"]["p99"] == doc["p99_ttft_ms"] and summary["tpot_ms"]["mean"] == doc["mean_tpot_ms"]
    assert "request_throughput" not in summary and "duration_s" not in summary


def test_llmperf_summary_and_responses_are_one_run_failed_requests_out(store, capsys):
    folder = SHAPES / "llmperf"
    rows = json.loads(next(folder.glob("*_individual_responses.json")).read_text())
    good = [r for r in rows if r["error_code"] is None and r["number_output_tokens"] > 0]
    by_hand = float(np.percentile([r["ttft_s"] * 1000.0 for r in good], 95))
    _code, _out, err = wb(capsys, *store, "import", str(folder))
    assert "6 of 40 requests failed or returned nothing (4 with an error, 2 with no output token)" in " ".join(
        err.split()
    )
    shown = wbj(capsys, *store, "show", "1")
    assert shown["samples"] == 40 and shown["quality"]["error_rate"] == pytest.approx(6 / 40)
    assert shown["dimensions"]["request_mix"]["value"] == "550 prompt / 150 output tokens (configured)"
    summary = shown["meta"]["summary"]
    assert summary["requests_failed"] == 4 and summary["requests_planned"] == 40
    assert "itl_ms" not in summary and "llmperf_inter_token_ms" in summary  # LLMPerf's ITL counts the TTFT in
    assert {detect(p)[0].name for p in folder.iterdir()} == {"llmperf"}
    (run,) = read_files([folder]).runs  # the lens check applied, as at every import
    assert builtin_lens("inference").primary_value(run) == pytest.approx(by_hand)


def test_sacct_fixed_width_reads_with_a_note_on_what_was_cut(store, capsys):
    _code, _out, err = wb(capsys, *store, "import", str(SHAPES / "sacct_fixed_width"), "--tz", "UTC")
    said = " ".join(err.split())
    assert "read from sacct's fixed-width layout" in said and "sacct -P (--parsable2)" in said
    assert "AllocTRES 2" in said  # two TRES fields cut short
    shown = wbj(capsys, *store, "show", "1")
    assert shown["samples"] == 5
    assert shown["meta"]["states"] == {"COMPLETED": 2, "CANCELLED": 1, "RUNNING": 1, "PENDING": 1}


def test_sacct_any_single_character_delimiter(store, capsys):
    wb(capsys, *store, "import", str(SHAPES / "sacct_tilde"), "--tz", "UTC")
    assert wbj(capsys, *store, "show", "1")["samples"] == 3


def test_sacct_without_time_columns_is_jobs_without_a_window(store, capsys):
    _code, _out, err = wb(capsys, *store, "import", str(SHAPES / "sacct_no_times"))
    assert "the 6 jobs carry no times" in " ".join(err.split())
    shown = wbj(capsys, *store, "show", "1")
    assert shown["window"]["kind"] == "unknown" and shown["samples"] == 6


def test_a_window_allocating_more_gpus_than_its_pool_has_is_flagged(store, capsys):
    _code, _out, err = wb(capsys, *store, "import", str(SHAPES / "sacct_over_capacity"), "--tz", "UTC")
    said = " ".join(err.split())
    assert "78 GPUs are allocated at once" in said and "on a pool of 64" in said
    shown = wbj(capsys, *store, "show", "1")
    assert shown["meta"]["pool"]["capacity_gpus"] is None and shown["meta"]["pool"]["capacity_stated_gpus"] == 64


def _tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_an_archive_of_captures_is_read_member_by_member(tmp_path, store, capsys):
    folder = SHAPES / "llmperf"
    members = {f"results/{p.name}": p.read_bytes() for p in folder.iterdir()}
    archive = _tar(tmp_path / "llmperf.tar.gz", members)
    _code, out, _err = wb(capsys, *store, "import", str(archive))
    assert f"imported {archive}/results/" in out
    shown = wbj(capsys, *store, "show", "1")
    assert shown["samples"] == 40 and {c["name"] for c in shown["captures"]} == {p.name for p in folder.iterdir()}
    zipped = tmp_path / "same.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    doc = wbj(capsys, *store, "import", str(zipped))
    assert doc["runs"] == [] and all("already imported" in s["reason"] for s in doc["skipped"])


def test_an_archive_member_named_outside_it_is_refused_and_nothing_is_written(tmp_path, store, capsys):
    good = (SHAPES / "vllm_500_of_500.json").read_bytes()
    archive = _tar(tmp_path / "evil.tar.gz", {"ok.json": good, "../../escape.json": good})
    _code, _out, err = wb(capsys, *store, "import", str(archive), expect=2)
    assert "member '../../escape.json' would be written outside the archive's folder" in err
    assert not (tmp_path.parent / "escape.json").exists()
    assert wbj(capsys, *store, "runs") == []


def test_an_archive_over_its_decompression_budget_is_refused(tmp_path, store, capsys):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.json", b"{" + b" " * (70 << 20) + b"}")
    _code, _out, err = wb(capsys, *store, "import", str(archive), expect=2)
    assert "unpacks to more than 64 MiB" in err


def test_a_capture_in_an_archive_says_its_faults_by_member(tmp_path, store, capsys):
    archive = _tar(tmp_path / "bad.tar", {"r/bad.json": b'{"model_id": "m", "ttfts": "nope", "output_lens": []}'})
    _code, _out, err = wb(capsys, *store, "import", str(archive), expect=2)
    assert f"{archive}/r/bad.json" in err and "wb-archive-" not in err


def test_a_native_training_step_of_1e300_ms_is_unknown_with_the_reason(tmp_path, store, capsys):
    doc = {
        "format": "workbench.capture/1",
        "lens": "training",
        "label": "steps",
        "window": {"kind": "steady"},
        "samples": [{"step": s, "rank": 0, "step_ms": ms} for s, ms in ((1, 101.0), (2, 1e300), (3, 99.0))],
    }
    path = tmp_path / "steps.json"
    path.write_text(json.dumps(doc))
    _code, _out, err = wb(capsys, *store, "import", str(path))
    assert "samples.step_ms: 1 value(s) outside (0, 1e+09] ms kept as unknown (first 1e+300" in " ".join(err.split())
    (run,) = read_files([path]).runs
    assert builtin_lens("training").primary_value(run) == pytest.approx(100.0)  # (101 + 99) / 2, never 1e300


def test_a_single_scrape_says_in_words_that_it_covers_everything_since_start(store, capsys):
    _code, _out, err = wb(capsys, *store, "import", str(SHAPES / "prom_two_servers" / "after.prom"))
    assert "single scrape: figures cover everything since the server started" in " ".join(err.split())
    _code, out, _err = wb(capsys, *store, "show", "1")
    assert "note: single scrape: figures cover everything since the server started" in " ".join(out.split())


def test_a_pair_of_scrapes_of_two_server_launches_is_refused(store, capsys):
    two = SHAPES / "prom_two_servers"
    args = ("import", str(two / "before.prom"), str(two / "after.prom"), "--scrape-pair")
    _code, _out, err = wb(capsys, *store, *args, expect=2)
    assert "not the same server as before.prom: process_start_time_seconds" in err


def test_a_fleet_window_where_no_job_started_headlines_its_lower_bound(store, capsys):
    window = ("--tz", "UTC", "--dim", "scheduler_policy=fifo", "--dim", "pool=lab")
    wb(capsys, *store, "import", str(SHAPES / "sacct_tilde"), *window)
    nothing = SHAPES / "sacct_nothing_started"
    wb(capsys, *store, "import", str(nothing), *window, "--from", "2026-11-09T10:00:00", "--to", "2026-11-09T11:30:00")
    eligible = [line.split("|")[3] for line in (nothing / "sacct.txt").read_text().splitlines()[1:]]
    waited = [
        (np.datetime64("2026-11-09T11:30:00") - np.datetime64(t)).astype("timedelta64[s]").astype(float)
        for t in eligible
    ]
    by_hand = sum(waited) / len(waited)  # each job has waited at least this long: a lower bound of the mean
    accept = ("--accept", "capacity_gpus,device_types,eligibility_history", "--why", "a test of the headline")
    result = wbj(capsys, *store, "compare", "1", "--vs", "2", *accept)
    assert result["primary"]["candidate"] is None
    assert result["primary"]["censored"]["candidate"]["mean_at_least_s"] == pytest.approx(by_hand)
    _code, out, _err = wb(capsys, *store, "compare", "1", "--vs", "2", *accept)
    assert f"≥ {by_hand:.0f} s (6 jobs still waiting, none started)" in " ".join(out.split())


def test_the_lens_check_applies_to_what_a_plug_in_importer_reads(tmp_path, monkeypatch):
    """Importers map fields; the lens decides validity after every importer, a plug-in's too."""
    from store.records import RunRecord
    from workbench import importers
    from workbench.importers.base import Importer

    class Plugin(Importer):
        name, version = "plugin-bench", "1"

        def sniff(self, probe):
            return probe.stripped.startswith("#plugin-bench")

        def read(self, paths, options):
            ttft, out = np.array([0.0, 80.0, 90.0]), np.array([0.0, 16.0, 16.0])  # one empty response
            samples = {"id": np.array(["a", "b", "c"]), "ttft_ms": ttft, "output_tokens": out, "ok": np.ones(3)}
            yield RunRecord(lens="inference", label="p", tables={"samples": samples}, sources=list(paths))

    builtins = importers.all_importers()
    monkeypatch.setattr(importers, "all_importers", lambda: (*builtins, Plugin()))
    path = tmp_path / "p.txt"
    path.write_text("#plugin-bench\n")
    (run,) = read_files([path]).runs
    assert [f["code"] for f in run.meta["sample_check"]] == ["failed_requests"]
    assert run.quality["error_rate"] == pytest.approx(1 / 3)
    assert builtin_lens("inference").primary_value(run) == pytest.approx(np.percentile([80.0, 90.0], 95))
