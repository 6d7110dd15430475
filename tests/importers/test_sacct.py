"""Slurm sacct (+ sinfo) importer: real GCM fixtures, time zones, windows, the seed's pair."""

from __future__ import annotations

import gzip
import json
import math
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from workbench.errors import BadInput
from workbench.importers.base import ImportOptions, probe_file
from workbench.importers.sacct import IMPORTER, gang_size
from workbench.ingest import check_samples

ROOT = Path(__file__).resolve().parents[2]
GCM = ROOT / "tests" / "data" / "fleet" / "gcm"
PAIR = ROOT / "captures" / "fleet_sacct"
UTC = {"tz": "UTC"}


def read(*paths: Path, **params):
    return list(IMPORTER.read(list(paths), ImportOptions(params=params)))


def epoch(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize("name", sorted(p.name for p in GCM.glob("sample-sacct*.txt")))
def test_every_real_sacct_file_imports_or_fails_with_a_reason(name: str) -> None:
    path = GCM / name
    assert IMPORTER.sniff(probe_file(path))
    try:
        (run,) = read(path, **UTC)
    except BadInput as err:
        assert str(path) in str(err)
        assert "malformed" in str(err) or "job-step rows" in str(err)
        return
    assert run.lens == "fleet" and run.sample_count > 0
    # The time columns the file has, and only those (a column it lacks is unknown, not blank).
    header = path.read_text(errors="replace").splitlines()[0]
    times = {c.lower() for c in ("Submit", "Eligible", "Start", "End") if c in header}
    assert set(run.samples) == {"job", "gpus", "state", *times}
    for col in ("gpus", *times):
        assert run.samples[col].dtype == np.float64


def test_dependency_hold_is_zero_queue_wait() -> None:
    """GCM job 201729: Start − Submit 4 h 32 m 36 s, Start − Eligible 0 s."""
    (run,) = read(GCM / "sample-sacct-one-multiline.txt", **UTC)
    s = run.samples
    i = int(np.flatnonzero(s["job"] == "201729")[0])
    assert s["start"][i] - s["submit"][i] == 4 * 3600 + 32 * 60 + 36
    assert s["start"][i] - s["eligible"][i] == 0
    assert s["gpus"][i] == 1024 and s["state"][i] == "FAILED"
    assert run.dimensions["eligibility_history"].value == "recorded"


def test_multiline_records_joined_and_duplicates_dropped() -> None:
    (one,) = read(GCM / "sample-sacct-one-multiline.txt", **UTC)
    (multi,) = read(GCM / "sample-sacct-multiple-multiline.txt", **UTC)
    (fake,) = read(GCM / "sample-sacct-fake-line-break.txt", **UTC)
    assert multi.meta["duplicate_rows_dropped"] == 2  # three byte-identical REQUEUED rows
    for run in (one, multi, fake):
        assert sorted(run.samples["job"].tolist()) == ["201729", "201844"]
        assert run.meta["skipped_step_rows"] == 2
        assert sorted(run.samples["gpus"].tolist()) == [256.0, 1024.0]


def test_duplicates_across_files_are_dropped_once(tmp_path: Path) -> None:
    """Two overlapping dumps of one window: a row both hold is one job, its reason counted once;
    a requeued attempt (same JobID, other times) stays; the first copy keeps its place."""
    header = "JobID|Partition|State|Submit|Start|End|AllocTRES|Reason"
    row = "{job}|gpu|COMPLETED|2026-03-02T08:00:{s:02d}|2026-03-02T08:10:00|2026-03-02T09:00:00|gres/gpu=8|{why}"
    first = [row.format(job=j, s=j, why="Resources") for j in range(1, 6)]
    requeue = row.format(job=3, s=30, why="Priority")  # job 3 again, a later attempt
    folder = tmp_path / "window"
    folder.mkdir()
    (folder / "a.sacct").write_text(header + "\n" + "\n".join(first) + "\n")
    (folder / "b.sacct").write_text(header + "\n" + "\n".join([first[3], requeue, first[4], first[4]]) + "\n")
    (run,) = read(folder / "a.sacct", folder / "b.sacct", **UTC)
    assert run.samples["job"].tolist() == ["1", "2", "3", "4", "5", "3"]
    assert run.meta["duplicate_rows_dropped"] == 3
    assert run.meta["reasons"] == {"Resources": 5, "Priority": 1}


def test_invalid_utf8_and_cancelled_by_uid() -> None:
    (run,) = read(GCM / "sample-sacct-output-invalid-utf8.txt", **UTC)
    assert run.sample_count == 2 and set(run.samples["gpus"].tolist()) == {8.0, 1.0}


def test_malformed_record_is_flagged_not_shifted(tmp_path: Path) -> None:
    good = (GCM / "sample-sacct-one-multiline.txt").read_text(encoding="utf-8")
    header, *rest = good.split("\n", 1)
    path = tmp_path / "sacct.txt"
    path.write_text(header + "\n" + "x|#y|#z\n" * 0 + rest[0] + "a|#b|#c|#" * 200 + "\n", encoding="utf-8")
    (run,) = read(path, **UTC)
    assert run.meta["malformed_records"] and "line" in run.meta["malformed_records"][0]
    assert any("malformed" in w for w in run.meta["warnings"])


def test_times_need_an_explicit_zone() -> None:
    with pytest.raises(BadInput, match="--tz"):
        read(GCM / "sample-sacct-one-multiline.txt")
    with pytest.raises(BadInput, match="unknown time zone"):
        read(GCM / "sample-sacct-one-multiline.txt", tz="Mars/Olympus")


def test_zone_conversion_iana_and_offset_and_dst(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text(
        "JobID|State|Submit|Eligible|Start|End|AllocTRES\n"
        "1|COMPLETED|2026-01-15T12:00:00|2026-01-15T12:00:00|2026-01-15T12:00:10|2026-01-15T13:00:00|gres/gpu=8\n"
        "2|COMPLETED|2026-07-15T12:00:00|2026-07-15T12:00:00|2026-07-15T12:00:00|2026-07-15T13:00:00|gres/gpu=8\n"
        "3|COMPLETED|2026-10-25T02:30:00|2026-10-25T02:30:00|Unknown|None|gres/gpu=8\n"
    )
    (paris,) = read(path, tz="Europe/Paris")
    (plus,) = read(path, tz="+01:00")
    s = paris.samples
    assert s["submit"][0] == epoch("2026-01-15T11:00:00")  # winter: UTC+1
    assert s["submit"][1] == epoch("2026-07-15T10:00:00")  # summer: UTC+2
    assert plus.samples["submit"][0] == epoch("2026-01-15T11:00:00")
    assert any("daylight-saving" in w for w in paris.meta["warnings"])  # 02:30 on 25 Oct happens twice
    assert math.isnan(s["start"][2]) and math.isnan(s["end"][2])


def test_epoch_output_needs_no_zone(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text(
        "JobID|State|Submit|Eligible|Start|End|ReqTRES\n7|PENDING|1790000000|1790000100|Unknown|Unknown|gres/gpu:a100=4\n"
    )
    (run,) = read(path)
    assert run.samples["eligible"][0] == 1790000100 and run.samples["gpus"][0] == 4
    assert run.dimensions["device_types"].value == "a100"


def test_parsable_trailing_delimiter_and_other_delimiters(tmp_path: Path) -> None:
    p = tmp_path / "p.txt"
    p.write_text("JobID|State|Start|End|\n5|COMPLETED|2026-01-01T00:00:00|2026-01-01T01:00:00|\n")
    (run,) = read(p, **UTC)
    assert run.samples["end"][0] - run.samples["start"][0] == 3600
    q = tmp_path / "q.txt"
    q.write_text("JobID;State;Start;End;AllocTRES\n6;RUNNING;2026-01-01T00:00:00;Unknown;cpu=4,gres/gpu=2,node=1\n")
    (run,) = read(q, **UTC)
    assert run.samples["gpus"][0] == 2 and math.isnan(run.samples["end"][0])


def test_gang_size_sources() -> None:
    assert gang_size("billing=64,cpu=64,gres/gpu=8,mem=512G,node=1", "", "", "", "1") == (8.0, "")
    assert gang_size("gres/gpu:h100=8,node=1", "", "", "", "1") == (8.0, "h100")
    assert gang_size("", "cpu=8,gres/gpu=16,node=2", "", "", "2") == (16.0, "")  # pending: requested
    assert gang_size("cpu=8,mem=1G", "", "", "", "1") == (0.0, "")  # CPU-only job
    assert gang_size("", "", "gpu:8", "", "4") == (32.0, "")  # older AllocGRES, per node
    assert math.isnan(gang_size("", "", "", "", "1")[0])  # no field says: unknown
    assert math.isnan(gang_size("gres/gpu=NaN,node=1", "", "", "", "1")[0])  # unreadable count: unknown


def test_gzip_and_truncated_gzip(tmp_path: Path) -> None:
    import gzip

    raw = (GCM / "sample-sacct-one-multiline.txt").read_bytes()
    good = tmp_path / "good" / "sacct.txt.gz"
    good.parent.mkdir()
    good.write_bytes(gzip.compress(raw))
    (run,) = read(good, **UTC)
    assert run.sample_count == 2
    bad = tmp_path / "bad" / "sacct.txt.gz"
    bad.parent.mkdir()
    bad.write_bytes(gzip.compress(raw)[:-40])
    with pytest.raises(BadInput, match="corrupt or truncated"):
        read(bad, **UTC)


def test_bad_time_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text(
        "JobID|State|Submit|Start\n1|COMPLETED|2026-01-01T00:00:00|2026-01-01T00:00:00\n2|COMPLETED|nan|2026-13-45T99:00:00\n"
    )
    with pytest.raises(BadInput, match="line 3"):
        read(path, **UTC)


def test_window_filter_and_bad_window() -> None:
    folder = PAIR / "window_a"
    (all_jobs,) = read(*sorted(folder.glob("*.txt")), **UTC)
    (window,) = read(
        *sorted(folder.glob("*.txt")), tz="UTC", window_from="2026-11-02T10:00:00", window_to="2026-11-02T10:10:00"
    )
    assert window.sample_count < all_jobs.sample_count
    assert window.meta["pool"]["window_end"] - window.meta["pool"]["window_start"] == 600
    with pytest.raises(BadInput, match="ends before it starts"):
        read(
            *sorted(folder.glob("*.txt")), tz="UTC", window_from="2026-11-02T11:00:00", window_to="2026-11-02T10:00:00"
        )


def test_no_eligible_column_means_no_eligibility_dimension(tmp_path: Path) -> None:
    (run,) = read(GCM / "sample-sacct-output-midnight-edge-case-small.txt", **UTC)
    assert "eligibility_history" not in run.dimensions
    assert "eligible" not in run.samples and "start" not in run.samples  # absent, never a column of blanks
    check_samples(run)  # the fleet lens's check says what the missing columns cost
    assert [f["code"] for f in run.meta["sample_check"]] == ["no_start"]
    path = tmp_path / "s.txt"
    path.write_text("JobID|State|Submit|Start|End\n1|COMPLETED|1790000000|1790000010|1790000100\n")
    (run,) = read(path)
    check_samples(run)
    assert any("no job has an Eligible time" in f["text"] for f in run.meta["sample_check"])


def test_sinfo_capacity_excludes_drained_nodes(tmp_path: Path) -> None:
    sacct = tmp_path / "sacct.txt"
    sacct.write_bytes((GCM / "sample-sacct-one-multiline.txt").read_bytes())
    (tmp_path / "sinfo.txt").write_bytes((GCM / "sample-sinfo-output.txt").read_bytes())
    (run,) = read(sacct, tmp_path / "sinfo.txt", **UTC)
    # node0201 (8 GPUs) is drained; node1537 has 8 and node4180 has 2.
    assert run.meta["pool"]["capacity_gpus"] == 10
    assert run.meta["capacity"]["gpus_unavailable"] == 8
    with pytest.raises(BadInput, match="sinfo capacity file alone"):
        read(tmp_path / "sinfo.txt", **UTC)


def test_million_column_line_fails_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    path.write_bytes(b"JobID|State|Start\n" + b"1|" * 1_000_000 + b"\n")
    with pytest.raises(BadInput, match="line 2"):
        read(path, **UTC)


def test_not_sacct_is_not_sniffed(tmp_path: Path) -> None:
    assert not IMPORTER.sniff(probe_file(GCM.parent.parent / "inference" / "vllm_after.prom"))
    path = tmp_path / "t.txt"
    path.write_text("name|value\na|1\n")
    assert not IMPORTER.sniff(probe_file(path))


@pytest.mark.parametrize(
    "window, day, expected",
    [
        (
            "window_a",
            "2026-11-02",
            {
                "mean_wait": 14.2,
                "service_attainment": 98.5,
                "allocated_gpus": 60,
                "allocated_gpus_end": 60,
                "waiting": (),
            },
        ),
        (
            "window_b",
            "2026-11-09",
            {
                "mean_wait": 85.6,
                "service_attainment": 100 * 223 / 256,
                "allocated_gpus": 56,
                "allocated_gpus_end": 56,
                "waiting": (16,) * 6,
            },
        ),
    ],
)
def test_seed_fleet_pair_through_the_fleet_lens(window: str, day: str, expected: dict) -> None:
    """The seed: 'Eight GPUs sat unallocated while six jobs waited, each needing 16'."""
    fleet = pytest.importorskip("lenses.fleet")
    folder = PAIR / window
    (run,) = read(
        *sorted(folder.glob("*.txt")),
        tz="UTC",
        window_from=f"{day}T10:00:00",
        window_to=f"{day}T11:00:00",
        wait_target_s=60,
    )
    assert run.meta["pool"]["capacity_gpus"] == 64
    assert run.dimensions["eligibility_history"].value == "recorded"
    metrics = fleet.LENS.window_metrics(run)
    assert fleet.LENS.primary_value(run) == pytest.approx(expected["mean_wait"])
    assert metrics["service_attainment"] == pytest.approx(expected["service_attainment"])
    assert metrics["allocated_gpus"] == pytest.approx(expected["allocated_gpus"])
    assert metrics["allocated_gpus_end"] == expected["allocated_gpus_end"]
    window_state = fleet.read_window(run)
    assert window_state.waiting_gangs == expected["waiting"]
    if expected["waiting"]:
        idle = 64 - metrics["allocated_gpus_end"]
        assert idle == 8 and all(g > idle for g in window_state.waiting_gangs)


def test_crlf_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "crlf.txt"
    path.write_bytes(
        b"JobID|State|Start|End|AllocTRES\r\n9|COMPLETED|2026-01-01T00:00:00|2026-01-01T00:10:00|gres/gpu=4\r\n"
    )
    (run,) = read(path, **UTC)
    assert run.samples["gpus"][0] == 4 and run.samples["end"][0] - run.samples["start"][0] == 600


def test_gpu_hours_are_unknown_when_a_running_job_has_no_gang_size(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    head = "JobID|State|Submit|Eligible|Start|End|ReqTRES\n"
    known = "1|COMPLETED|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T01:00:00|gres/gpu=4\n"
    path.write_text(head + known)
    (run,) = read(path, tz="UTC", window_from="2026-01-01T00:00:00", window_to="2026-01-01T01:00:00")
    assert run.work.amount == pytest.approx(4.0)
    path.write_text(
        head + known + "2|COMPLETED|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T01:00:00|\n"
    )  # no GPU field
    (run,) = read(path, tz="UTC", window_from="2026-01-01T00:00:00", window_to="2026-01-01T01:00:00")
    assert run.work.unit == "GPU-hours" and run.work.amount is None  # not 4: job 2 held an unknown number


def test_pending_jobs_keep_their_eligible_time_and_are_censored_waits(tmp_path: Path) -> None:
    """A job still PENDING at the window's end is kept with its Eligible time: the fleet
    lens reads it as a right-censored wait (window end − eligible), a known miss here."""
    fleet = pytest.importorskip("lenses.fleet")
    path = tmp_path / "s.txt"
    path.write_text(
        "JobID|State|Submit|Eligible|Start|End|ReqTRES|AllocTRES\n"
        "1|COMPLETED|1790000000|1790000000|1790000030|1790000100|gres/gpu=8|gres/gpu=8\n"
        "2|PENDING|1790000500|1790000600|Unknown|Unknown|gres/gpu=16|\n"
        "3|PENDING|1790003000|1790003550|Unknown|Unknown|gres/gpu=16|\n"
    )
    (run,) = read(path, window_from=1790000000, window_to=1790003600, wait_target_s=60)
    assert run.sample_count == 3
    s = run.samples
    assert list(s["eligible"][1:]) == [1790000600, 1790003550] and np.isnan(s["start"][1:]).all()
    w = fleet.read_window(run)
    assert list(w.waits) == [30] and sorted(w.censored) == [50, 3000]
    assert (w.met, w.missed, w.known_misses, w.pending) == (1, 0, 1, 1)
    assert w.attained == pytest.approx(1 / 2) and w.attainment_bounds == (pytest.approx(1 / 3), pytest.approx(2 / 3))


# ---------------------------------------------------------------- headerless (--noheader), issue 29 item 4


def _headerless(tmp_path: Path, source: Path, delim: str) -> tuple[Path, str]:
    """``source`` as ``sacct --parsable2 --noheader --delimiter DELIM`` writes it: the same
    records, no header line. Returns the file and the fields for --sacct-fields."""
    header, *rows = source.read_text(encoding="utf-8", errors="replace").splitlines()
    out = tmp_path / f"noheader-{source.name}"
    out.write_text("".join(row.replace("|", delim) + "\n" for row in rows))
    return out, ",".join(header.split("|"))


@pytest.mark.parametrize("delim", ["|", "#", "|#", ";"])
def test_headerless_sacct_reads_with_sacct_fields_and_any_delimiter(tmp_path: Path, delim: str) -> None:
    source = GCM / "sample-sacct-output-midnight-edge-case-small.txt"
    (expected,) = read(source, **UTC)
    path, fields = _headerless(tmp_path, source, delim)
    assert IMPORTER.sniff(probe_file(path))
    (run,) = read(path, sacct_fields=fields, **UTC)
    assert run.sample_count == expected.sample_count
    assert list(run.tables["samples"]["job"]) == list(expected.tables["samples"]["job"])


def test_headerless_sacct_without_fields_is_refused_naming_the_option(tmp_path: Path) -> None:
    path, _ = _headerless(tmp_path, GCM / "sample-sacct-output-midnight-edge-case-small.txt", "|")
    with pytest.raises(BadInput) as err:
        read(path, **UTC)
    assert "--sacct-fields" in str(err.value) and "without a header line" in str(err.value)


def test_sacct_fields_that_do_not_fit_the_records_are_refused(tmp_path: Path) -> None:
    path, _ = _headerless(tmp_path, GCM / "sample-sacct-output-midnight-edge-case-small.txt", "|")
    with pytest.raises(BadInput) as err:
        read(path, sacct_fields="JobID,State", **UTC)
    assert "does not split into the 2 fields" in str(err.value)
    with pytest.raises(BadInput, match="JobID among them"):
        read(path, sacct_fields="State,End,Start", **UTC)


def _wb(*args: str) -> tuple[int, str, str]:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, timeout=120)
    return out.returncode, out.stdout, out.stderr


def test_a_wb_toml_gives_the_fields_of_headerless_sacct(tmp_path: Path) -> None:
    """``[sacct] fields`` in the folder's wb.toml reads --noheader output as --sacct-fields would,
    as a string or a list, beside [dimensions]; the command line wins over it."""
    import json

    source = GCM / "sample-sacct-output-midnight-edge-case-small.txt"
    (expected,) = read(source, **UTC)
    store = f"sqlite:///{tmp_path / 's.sqlite'}"
    for form, delim in (("string", ";"), ("list", "#")):
        folder = tmp_path / f"window-{form}"
        folder.mkdir()
        path, fields = _headerless(folder, source, delim)
        value = json.dumps(fields) if form == "string" else json.dumps(fields.split(","))
        (folder / "wb.toml").write_text(f'[dimensions]\nscheduler_policy = "gang"\n\n[sacct]\nfields = {value}\n')
        rc, out, err = _wb("--store", store, "import", str(folder), "--tz", "UTC", "--json")
        assert rc == 0, err
        (run_id,) = json.loads(out)["runs"]
        from store import open_store

        run = open_store(store).load_run(run_id)
        assert run.sample_count == expected.sample_count
        assert list(run.tables["samples"]["job"]) == list(expected.tables["samples"]["job"])
        assert run.dimensions["scheduler_policy"].value == "gang"
    # The command line wins: a wrong list given there is the one used (and refused).
    fresh = f"sqlite:///{tmp_path / 'fresh.sqlite'}"
    rc, _out, err = _wb(
        "--store", fresh, "import", str(tmp_path / "window-string"), "--tz", "UTC", "--sacct-fields", "JobID,State"
    )
    assert rc == 2 and "does not split into the 2 fields" in err


def test_a_wb_toml_without_fields_leaves_headerless_sacct_refused_naming_both_ways(tmp_path: Path) -> None:
    folder = tmp_path / "w"
    folder.mkdir()
    _headerless(folder, GCM / "sample-sacct-output-midnight-edge-case-small.txt", "|")
    (folder / "wb.toml").write_text('[dimensions]\nscheduler_policy = "gang"\n')
    rc, _out, err = _wb("--store", f"sqlite:///{tmp_path / 's.sqlite'}", "import", str(folder), "--tz", "UTC")
    assert rc == 2 and "--sacct-fields" in err and "[sacct] fields" in err and "wb.toml" in err


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('[sacct]\nfields = "State,End"\n', "JobID among them"),
        ('[sacct]\nfields = ["JobID", 3]\n', "is not one"),
        ('[sacct]\nfield = "JobID,State"\n', "unknown key 'field'"),
        ('sacct = "JobID"\n', "[sacct] must be a table"),
        ('[slurm]\nfields = "JobID"\n', "unknown table or key 'slurm'"),
    ],
)
def test_a_wb_toml_sacct_table_is_validated_naming_the_file(tmp_path: Path, table: str, said: str) -> None:
    folder = tmp_path / "w"
    folder.mkdir()
    _headerless(folder, GCM / "sample-sacct-output-midnight-edge-case-small.txt", "|")
    (folder / "wb.toml").write_text(table)
    store = tmp_path / "s.sqlite"
    rc, _out, err = _wb("--store", f"sqlite:///{store}", "import", str(folder), "--tz", "UTC")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and said in lines[0] and str(folder / "wb.toml") in lines[0], err


def test_records_read_the_same_however_the_file_is_cut_into_blocks(tmp_path: Path, monkeypatch) -> None:
    """Issue 47: records are taken in bulk between odd lines (a job name with newlines, a
    blank line, a malformed record, CRLF, step rows, duplicates); cut into blocks of a few
    hundred bytes, the same run as read whole: every column, and what the meta says."""
    from workbench.importers import sacct

    header = "JobID|JobName|Partition|State|Submit|Eligible|Start|End|AllocTRES|ReqTRES|NNodes|Reason|Cluster"
    rows = []
    for i in range(1, 400):
        name = "two\nlines" if i % 37 == 0 else ("" if i % 11 == 0 else f"train{i}")
        state = ["COMPLETED", "FAILED", "CANCELLED by 12", "PENDING"][i % 4]
        start = "Unknown" if state == "PENDING" else f"2026-03-02T{8 + i % 10:02d}:{i % 60:02d}:00"
        tres = "" if state == "PENDING" else f"billing=8,gres/gpu:h100={i % 8 + 1},gres/gpu={i % 8 + 1}"
        rows.append(
            f"{i}|{name}|gpu{i % 3}|{state}|2026-03-02T07:{i % 60:02d}:00|2026-03-02T07:{i % 60:02d}:30|{start}|"
            f"{start}|{tres}|gres/gpu={i % 4 + 1}|{i % 2 + 1}|{'Resources' if i % 5 else 'None'}|c1"
        )
        if i % 50 == 0:
            rows.append(f"{i}.batch|batch|gpu0|COMPLETED|x|x|x|x|||1|None|c1")  # a step row
            rows.append(rows[-2])  # a byte-identical duplicate (sacct -D)
        if i % 97 == 0:
            rows.append("")  # a blank line
            rows.append(f"{i}x|too|many|fields|" + "|" * 12)  # malformed: skipped, reported
    path = tmp_path / "sacct.txt"
    path.write_text(header + "\n" + "\r\n".join(rows[:150]) + "\r\n" + "\n".join(rows[150:]) + "\n")
    options = ImportOptions(params={"tz": "Europe/Paris"})
    (whole,) = IMPORTER.read([path], options)
    monkeypatch.setattr(sacct, "BLOCK", 301)
    monkeypatch.setattr(sacct, "CHUNK_ROWS", 7)
    (cut,) = IMPORTER.read([path], options)
    packed = tmp_path / "gz" / "sacct.txt.gz"  # columns sized from the compressed size: they grow
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(path.read_bytes()))
    (grown,) = IMPORTER.read([packed], options)
    for other in (cut, grown):
        assert list(whole.samples) == list(other.samples)
        for key, values in whole.samples.items():
            assert values.dtype == other.samples[key].dtype, key
            assert np.array_equal(values, other.samples[key], equal_nan=values.dtype.kind == "f"), key
        assert json.dumps(whole.meta) == json.dumps(other.meta).replace("sacct.txt.gz", "sacct.txt")
        assert whole.dimensions == other.dimensions
    assert whole.meta["skipped_step_rows"] == 7 and whole.meta["duplicate_rows_dropped"] == 7
    assert len(whole.meta["malformed_records"]) == 4
    assert set(whole.meta["states"]) == {"COMPLETED", "FAILED", "CANCELLED", "PENDING"}
    assert whole.dimensions["device_types"].value == "h100"
    assert whole.samples["job"].tolist()[36] == "37"  # the job whose name runs over two lines
