"""`wb import --dim` on a file already stored, `wb.toml` beside the files and `--dims-file`."""

from __future__ import annotations

from tests.declare.helpers import inference_pair, wb, wbj


def test_import_dim_on_a_stored_file_declares_on_its_runs(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    a, b = inference_pair(tmp_path)
    wb(capsys, *store, "import", str(a), str(b))
    _c, out, _e = wb(capsys, *store, "import", str(a), str(b), "--dim", "model=Llama 3.1 8B")
    assert "already stored" in out and "run 1 model=Llama 3.1 8B" in out and "run 2 model=Llama 3.1 8B" in out
    history = wbj(capsys, *store, "show", "1")["declarations"]
    assert [(d["name"], d["value"]) for d in history] == [("model", "Llama 3.1 8B")]
    assert "new import of 1-before.json" in history[0]["why"]
    assert wbj(capsys, *store, "compare", "1", "--vs", "2")["comparable"]
    # the same again: nothing new, still exit 0, and no second history row
    doc = wbj(capsys, *store, "import", str(a), "--dim", "model=Llama 3.1 8B")
    assert doc["declared"] == [{"file": str(a), "declarations": []}] and doc["runs"] == []
    assert len(wbj(capsys, *store, "show", "1")["declarations"]) == 1
    # without --dim a stored file is still just skipped
    doc = wbj(capsys, *store, "import", str(a))
    assert doc["skipped"] and "already imported" in doc["skipped"][0]["reason"]


def test_import_dim_contradicting_the_data_on_a_stored_file_is_refused(tmp_path, capsys):
    from tests.conftest import REPO

    trace = REPO / "tests" / "data" / "training" / "sampled" / "sampled_rank-0.json.gz"
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    wb(capsys, *store, "import", str(trace))
    _c, _o, err = wb(capsys, *store, "import", str(trace), "--dim", "framework=JAX", expect=2)
    assert "contradicts the data" in err and "'PyTorch'" in err
    assert wbj(capsys, *store, "show", "1")["declarations"] == []


def test_wb_toml_beside_the_files_declares_for_the_folder(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    job = tmp_path / "job"
    job.mkdir()
    inference_pair(job)
    (job / "wb.toml").write_text('[dimensions]\nmodel = "Llama 3.1 8B"\nmax_batch = 64\n')
    _c, out, _e = wb(capsys, *store, "import", str(job))
    assert "wb.toml" not in out  # not read as a capture
    dims = wbj(capsys, *store, "show", "1")["dimensions"]
    assert dims["model"] == {"value": "Llama 3.1 8B", "source": "declared"} and dims["max_batch"]["value"] == "64"
    assert wbj(capsys, *store, "compare", "1", "--vs", "2")["comparable"]
    wb(capsys, *store, "import", str(job))  # again, unchanged: no history rows
    assert wbj(capsys, *store, "show", "1")["declarations"] == []
    # --dim wins over the file; a later wb.toml change applies to the stored runs as declarations
    (job / "wb.toml").write_text('[dimensions]\nmodel = "Llama 3.1 8B"\nobjective = "chat"\n')
    wb(capsys, *store, "import", str(job), "--dim", "model=Llama 3.1 8B Instruct")
    dims = wbj(capsys, *store, "show", "2")["dimensions"]
    assert dims["model"]["value"] == "Llama 3.1 8B Instruct" and dims["objective"]["value"] == "chat"


def test_dims_file_option_and_bad_files(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    a, b = inference_pair(tmp_path)
    dims = tmp_path / "team.toml"
    dims.write_text('[dimensions]\nmodel = "Llama 3.1 8B"\n')
    wb(capsys, *store, "import", str(a), str(b), "--dims-file", str(dims))
    assert wbj(capsys, *store, "show", "2")["dimensions"]["model"]["value"] == "Llama 3.1 8B"
    for text, expected in (
        ('[dimension]\nmodel = "x"\n', "unknown table or key 'dimension'"),
        ("[dimensions\n", "is not valid TOML"),
        ('[dimensions]\nmodel = ["a", "b"]\n', "must be a single value"),
    ):
        dims.write_text(text)
        c = tmp_path / "c.json"
        c.write_text(a.read_text().replace('"before"', '"third"'))
        _c, _o, err = wb(capsys, *store, "import", str(c), "--dims-file", str(dims), expect=2)
        assert err.count("\n") == 1 and str(dims) in err and expected in err, err
    assert [r["id"] for r in wbj(capsys, *store, "runs")] == [1, 2]  # nothing half-written
