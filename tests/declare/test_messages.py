"""Messages a new user can act on: lens mismatch, export paths, `wb runs` at 80
columns, labels that tell two imported files apart."""

from __future__ import annotations

import os

from tests.conftest import REPO
from tests.declare.helpers import inference_pair, wb, wbj

TRACE = REPO / "tests" / "data" / "training" / "sampled" / "sampled_rank-0.json.gz"


def test_runs_of_different_lenses_cannot_be_compared(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    a, _b = inference_pair(tmp_path)
    wb(capsys, *store, "import", str(a), str(TRACE))
    _c, _o, err = wb(capsys, *store, "compare", "1", "--vs", "2", expect=2)
    assert err.count("\n") == 1 and "--lens" not in err
    assert "different lenses (inference: run 1; training: run 2) and cannot be compared" in err


def test_export_paths(tmp_path, capsys, monkeypatch):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    wb(capsys, *store, "import", *map(str, inference_pair(tmp_path)))
    wbj(capsys, *store, "investigate", "new", "--lens", "inference", "--question", "q?")
    missing = tmp_path / "no" / "such" / "dir" / "b.json"
    _c, _o, err = wb(capsys, *store, "bundle", "export", "1", "-o", str(missing), expect=2)
    assert err == f"wb: error: {missing}: cannot be written: the directory {missing.parent} does not exist\n"
    assert ".tmp" not in err
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    _c, out, _e = wb(capsys, *store, "bundle", "export", "1")
    assert out.startswith(f"wrote {work / 'investigation-1.bundle.json'} (")
    assert os.listdir(work) == ["investigation-1.bundle.json"]  # no temporary file left


def test_runs_at_80_columns_keep_one_line_per_run(tmp_path, capsys, monkeypatch):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    a, b = inference_pair(tmp_path)
    wb(capsys, *store, "import", str(a), str(b))
    long_label = "engine v0.8.3 with the new scheduler, chunked prefill on, node gpu-17, rerun 4"
    wb(capsys, *store, "rename", "2", long_label)
    monkeypatch.setenv("COLUMNS", "80")
    _c, out, _e = wb(capsys, *store, "runs")
    lines = out.splitlines()
    assert len(lines) == 3 and all(len(line) <= 80 for line in lines)
    assert "…" in lines[2] and "rerun 4" in lines[2] and lines[2].split()[2] == "engine"
    assert wbj(capsys, *store, "runs")[1]["label"] == long_label
    assert wbj(capsys, *store, "show", "2")["label"] == long_label


def test_two_files_without_label_get_distinguishable_labels(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    a, b = inference_pair(tmp_path)
    for p in (a, b):  # the same label inside both files
        p.write_text(p.read_text().replace('"before"', '"engine run"').replace('"after"', '"engine run"'))
    wb(capsys, *store, "import", str(a), str(b))
    labels = [r["label"] for r in wbj(capsys, *store, "runs")]
    assert labels == ["engine run (1-before.json)", "engine run (2-after.json)"]
    # same file names in two folders: the folder tells them apart; a later import too
    for d in ("day1", "day2"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "r.json").write_text(
            a.read_text().replace('"engine run"', '"nightly"').replace("110.0", f"11{d[-1]}.5")
        )
    wb(capsys, *store, "import", str(tmp_path / "day1" / "r.json"), str(tmp_path / "day2" / "r.json"))
    c = tmp_path / "3-again.json"
    c.write_text(a.read_text().replace("110.0", "120.0"))
    wb(capsys, *store, "import", str(c))
    labels = [r["label"] for r in wbj(capsys, *store, "runs")]
    assert labels[2:] == [
        "nightly (day1/r.json)",
        "nightly (day2/r.json)",
        "engine run",
    ]  # no stored run is "engine run"
    d = tmp_path / "4.json"
    d.write_text(a.read_text().replace("110.0", "130.0"))
    wb(capsys, *store, "import", str(d))  # now one is: the new run is told apart from it
    assert wbj(capsys, *store, "runs")[-1]["label"] == "engine run (4.json)"
    e = tmp_path / "5.json"
    e.write_text(a.read_text().replace("110.0", "140.0"))
    wb(capsys, *store, "import", str(e), "--label", "engine run")  # an explicit --label is kept as given
    assert wbj(capsys, *store, "runs")[-1]["label"] == "engine run"


def test_runs_at_80_columns_never_shows_two_different_labels_alike(tmp_path, capsys, monkeypatch):
    # the qa walk: two sacct files of one folder read "sacct gcm (samp…multiline.txt)" twice
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    a, b = inference_pair(tmp_path)
    wb(capsys, *store, "import", str(a), str(b))
    first = "sacct gcm (sample-sacct-multiple-multiline.txt) from the nightly window"
    second = "sacct gcm (sample-sacct-one-multiline.txt) from the nightly window"
    wb(capsys, *store, "rename", "1", first)
    wb(capsys, *store, "rename", "2", second)
    monkeypatch.setenv("COLUMNS", "80")
    _c, out, _e = wb(capsys, *store, "runs")
    lines = out.splitlines()
    assert len(lines) == 3 and all(len(line) <= 80 for line in lines)
    shown = [line[line.index("inference") + len("inference") :].strip() for line in lines[1:]]
    assert "…" in shown[0] and "…" in shown[1] and shown[0] != shown[1]
