"""What a new user met when walking the README with their own folders (qa walk):
a wb.toml one folder up, empty values, declarations the data refuse."""

from __future__ import annotations

from tests.declare.helpers import inference_pair, wb, wbj


def test_wb_toml_in_the_imported_folder_applies_to_files_below_it(tmp_path, capsys):
    # inference-perf keeps its results in variant/results/; the team writes variant/wb.toml
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    variant = tmp_path / "bench" / "variant"
    (variant / "results").mkdir(parents=True)
    inference_pair(variant / "results")
    (tmp_path / "bench" / "wb.toml").write_text('[dimensions]\nmodel = "Llama"\nprecision = "fp8"\n')
    (variant / "wb.toml").write_text('[dimensions]\nprecision = "bf16"\n')
    wb(capsys, *store, "import", str(tmp_path / "bench"))
    dims = wbj(capsys, *store, "show", "1")["dimensions"]
    assert dims["model"]["value"] == "Llama"  # from the folder named on the command line
    assert dims["precision"]["value"] == "bf16"  # the nearer file wins
    assert wbj(capsys, *store, "compare", "1", "--vs", "2")["comparable"]


def test_wb_toml_above_the_imported_folder_is_not_read(tmp_path, capsys):
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    (tmp_path / "wb.toml").write_text('[dimensions]\nmodel = "stray"\n')
    job = tmp_path / "job"
    job.mkdir()
    a, _b = inference_pair(job)
    wb(capsys, *store, "import", str(job))
    wb(capsys, *store, "import", str(a))  # a file named alone: only its own folder
    assert "model" not in wbj(capsys, *store, "show", "1")["dimensions"]


def test_an_empty_value_declares_nothing_and_is_refused(tmp_path, capsys):
    # model= on both runs used to make a must-match dimension "same" with nothing in it
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    a, b = inference_pair(tmp_path)
    _c, _o, err = wb(capsys, *store, "import", str(a), str(b), "--dim", "model=", expect=2)
    assert err.count("\n") == 1 and "--dim model=: an empty value declares nothing" in err
    assert wbj(capsys, *store, "runs") == []  # nothing half-written
    wb(capsys, *store, "import", str(a), str(b))
    _c, _o, err = wb(capsys, *store, "declare", "1", "2", "model= ", "--why", "x", expect=2)
    assert err.count("\n") == 1 and "empty value" in err and "--unset model" in err
    assert wbj(capsys, *store, "show", "1")["declarations"] == []
    assert not wbj(capsys, *store, "compare", "1", "--vs", "2")["comparable"]
    job = tmp_path / "job"
    job.mkdir()
    (job / "wb.toml").write_text('[dimensions]\nmodel = ""\n')
    c = job / "c.json"
    c.write_text(a.read_text().replace('"before"', '"third"'))
    _c, _o, err = wb(capsys, *store, "import", str(c), expect=2)
    assert err.count("\n") == 1 and str(job / "wb.toml") in err and "'model' is empty" in err


def _sacct_window(folder, *, eligible: bool, end: str = "10:05:00"):
    folder.mkdir()
    head = "JobIDRaw|JobID|State|Submit|Eligible|Start|End|AllocTRES|Partition"
    rows = [
        f"{i}|{i}|COMPLETED|2026-11-09T10:00:00|{'2026-11-09T10:00:00' if eligible else 'Unknown'}|"
        f"2026-11-09T10:00:{10 * i:02d}|2026-11-09T{end}|gres/gpu=1|gpu"
        for i in (1, 2, 3)
    ]
    (folder / "sacct.txt").write_text("\n".join([head, *rows]) + "\n")


def test_a_declaration_the_data_would_contradict_is_refused_and_never_offered(tmp_path, capsys):
    # sacct without Eligible times: any declared eligibility history reads "none in the data"
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    _sacct_window(tmp_path / "w1", eligible=False)
    _sacct_window(tmp_path / "w2", eligible=False, end="10:06:00")
    wb(capsys, *store, "import", "--tz", "UTC", str(tmp_path / "w1"), "--label", "w1")
    wb(capsys, *store, "import", "--tz", "UTC", str(tmp_path / "w2"), "--label", "w2")
    doc = wbj(capsys, *store, "compare", "w1", "--vs", "w2")
    assert not doc["comparable"]
    offered = " ".join(doc["way_out"]["declare"])
    assert "eligibility_history" not in offered and "scheduler_policy=VALUE" in offered
    assert "eligibility_history" in doc["way_out"]["accept"]
    _c, _o, err = wb(capsys, *store, "declare", "w1", "w2", "eligibility_history=recorded", "--why", "x", expect=2)
    assert err.count("\n") == 1 and "contradicts the data" in err and "none in the data" in err
    assert wbj(capsys, *store, "show", "w1")["declarations"] == []
    # a window whose jobs carry eligible times: the data say it, nothing to declare or refuse
    _sacct_window(tmp_path / "w3", eligible=True, end="10:07:00")
    wb(capsys, *store, "import", "--tz", "UTC", str(tmp_path / "w3"), "--label", "w3")
    wb(capsys, *store, "declare", "w3", "eligibility_history=recorded", "--why", "sacct has Eligible")


def test_a_wb_toml_value_is_named_as_coming_from_the_wb_toml(tmp_path, capsys):
    # the user passed no --dim: the refusal must not say "--dim hardware=..."
    from tests.conftest import REPO

    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    job = tmp_path / "job"
    job.mkdir()
    trace = REPO / "tests" / "data" / "training" / "sampled" / "sampled_rank-0.json.gz"
    (job / trace.name).write_bytes(trace.read_bytes())
    (job / "wb.toml").write_text('[dimensions]\nframework = "JAX"\n')
    _c, _o, err = wb(capsys, *store, "import", str(job), expect=2)
    assert (
        err.count("\n") == 1 and f"{job / 'wb.toml'} framework=JAX contradicts the file" in err and "--dim" not in err
    )
    (job / "wb.toml").write_text('[dimensions]\nmodel = "llama"\n')
    wb(capsys, *store, "import", str(job))
    (job / "wb.toml").write_text('[dimensions]\nmodel = "llama"\nobjective = "pretrain"\n')
    wb(capsys, *store, "import", str(job))  # stored already: the new line goes into the history
    history = wbj(capsys, *store, "show", "1")["declarations"]
    assert [(d["name"], d["value"]) for d in history] == [("objective", "pretrain")]
    assert str(job / "wb.toml") in history[0]["why"]


def test_a_name_no_lens_compares_is_recorded_with_a_note(tmp_path, capsys):
    # a typo ("modle") used to pass silently while "model" stayed unknown
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    a, b = inference_pair(tmp_path)
    wb(capsys, *store, "import", str(a), str(b))
    _c, out, err = wb(capsys, *store, "declare", "1", "2", "modle=llama", "--why", "typo")
    assert "run 1: modle=llama" in out
    assert (
        err.count("\n") == 1 and "note: modle is not a dimension the inference lens compares" in err and "model," in err
    )
    _c, _o, err = wb(capsys, *store, "declare", "1", "2", "model=llama", "--why", "fixed")
    assert "note:" not in err


def test_a_label_its_data_contradict_is_not_called_a_difference_between_equal_values(tmp_path, capsys):
    # a store from before the data check holds an eligibility history the jobs do not
    # carry: both sides read "none in the data"; the refusal used to say
    # "differs: baseline X, candidate X"
    from store import open_store
    from store.declarations import declare

    url = f"sqlite:///{tmp_path / 'wb.sqlite'}"
    store = ("--store", url)
    for name, end in (("w1", "10:05:00"), ("w2", "10:06:00")):
        _sacct_window(tmp_path / name, eligible=False, end=end)
        wb(capsys, *store, "import", "--tz", "UTC", str(tmp_path / name), "--label", name)
    declare(open_store(url), [1, 2], {"eligibility_history": "recorded"}, [], who="old wb", why="before the check")
    doc = wbj(
        capsys,
        *store,
        "compare",
        "w1",
        "--vs",
        "w2",
        "--accept",
        "pool,capacity_gpus,device_types,scheduler_policy",
        "--why",
        "one pool",
    )
    reason = doc["refusal"]["reason"]
    assert "the data contradict the label" in reason and "but differs" not in reason
    assert "the label says 'recorded' but the data show 'none in the data'" in reason


def test_import_time_declarations_meet_the_same_data_check_as_wb_declare(tmp_path, capsys):
    # --dim / wb.toml at import used to record an eligibility history the jobs do not carry
    store = ("--store", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    _sacct_window(tmp_path / "w1", eligible=False)
    _c, _o, err = wb(
        capsys, *store, "import", "--tz", "UTC", str(tmp_path / "w1"), "--dim", "eligibility_history=recorded", expect=2
    )
    assert (
        err.count("\n") == 1
        and "--dim eligibility_history=recorded contradicts the data" in err
        and "none in the data" in err
    )
    (tmp_path / "w1" / "wb.toml").write_text('[dimensions]\neligibility_history = "recorded"\n')
    _c, _o, err = wb(capsys, *store, "import", "--tz", "UTC", str(tmp_path / "w1"), expect=2)
    assert f"{tmp_path / 'w1' / 'wb.toml'} eligibility_history=recorded contradicts the data" in err
    assert wbj(capsys, *store, "runs") == []  # nothing half-written
    (tmp_path / "w1" / "wb.toml").write_text('[dimensions]\nscheduler_policy = "fifo"\n')
    wb(capsys, *store, "import", "--tz", "UTC", str(tmp_path / "w1"))
