"""From question to a verified bundle with headless commands only (the docs' walk-through)."""

import json

import pytest

from workbench.cli import main


def wb(capsys, *args, expect=0):
    capsys.readouterr()
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    assert code == expect, (args, code, out.err)
    return out


def wbj(capsys, *args, expect=0):
    out = wb(capsys, *args, "--json", expect=expect)
    return json.loads(out.out)


@pytest.fixture
def demo_store(tmp_path, capsys):
    pytest.importorskip("workbench.compare")
    from workbench.demo import demo_captures_dir

    store = f"sqlite:///{tmp_path / 'wb.sqlite'}"
    wb(capsys, "--store", store, "import", str(demo_captures_dir() / "inference"))
    return store


def test_question_to_verified_bundle(demo_store, tmp_path, capsys):
    s = ("--store", demo_store)
    inv = wbj(
        capsys,
        *s,
        "investigate",
        "new",
        "--lens",
        "inference",
        "--question",
        "Ship engine v0.8.3?",
        "--guardrail",
        "error_rate max_increase 0",
        "--change",
        "engine_revision=v0.8.2:v0.8.3",
    )
    i = str(inv["id"])
    runs = {r["label"]: r["id"] for r in wbj(capsys, *s, "runs")}
    base = [str(runs[f"engine v0.8.2 run {n}"]) for n in range(1, 6)]
    cand = [x for n in range(1, 6) for x in ("--vs", str(runs[f"engine v0.8.3 run {n}"]))]
    comp = wbj(capsys, *s, "investigate", "compare", i, *base, *cand)
    assert comp["comparable"] and comp["verdict"] == "REGRESSION"
    assert comp["parameters"]["changes"] == {"engine_revision": ["v0.8.2", "v0.8.3"]}
    pinned = wbj(capsys, *s, "observe", i, "--from-compare", str(comp["id"]))
    assert any("Queue time grew" in o["text"] for o in pinned)
    manual = wbj(
        capsys,
        *s,
        "observe",
        i,
        "--text",
        "Decode p95 held at 90 ms.",
        "--evidence",
        f"run={base[0]}",
        "--evidence",
        "metric=decode_p95",
        "--evidence",
        "window=steady",
    )
    wbj(capsys, *s, "observe", i, "--retract", str(manual[0]["id"]), "--text", "duplicate of a compare observation")
    hyp = wbj(
        capsys, *s, "hypothesize", i, "The scheduler queues requests longer.", "--test", "interleaved rerun with A/A"
    )
    wb(capsys, *s, "hypothesis", "status", str(hyp["id"]), "supported", expect=2)  # evidence required
    decided = wbj(capsys, *s, "hypothesis", "status", str(hyp["id"]), "undetermined", "--note", "no rerun yet")
    assert decided["status"] == "undetermined"
    listed = wbj(capsys, *s, "investigate", "list")
    assert listed[0]["observations"] == len(pinned) + 2 and listed[0]["hypotheses"] == 1

    bundle = tmp_path / "bundle.json"
    summary = wbj(capsys, *s, "bundle", "export", i, "-o", str(bundle), "--embed-samples")
    assert summary["signed"] is False and summary["samples_sha256"]
    out = wb(capsys, "evidence", "verify", str(bundle), "--recompute")
    assert "VALID" in out.out and "recompute within tolerance" in out.out and "not signed" in out.out
    empty = tmp_path / "no-captures"
    empty.mkdir()
    report = wbj(capsys, "evidence", "verify", str(bundle), "--captures", str(empty), expect=3)
    assert report["mismatched"] and all(m.startswith("captures[") for m in report["mismatched"])
    from workbench.demo import demo_captures_dir

    report = wbj(capsys, "evidence", "verify", str(bundle), "--captures", str(demo_captures_dir() / "inference"))
    assert report["valid"], report["mismatched"]

    other = ("--store", f"sqlite:///{tmp_path / 'colleague.sqlite'}")
    imported = wbj(capsys, *other, "bundle", "import", str(bundle))
    shown = wbj(capsys, *other, "investigate", "show", str(imported["investigation"]))
    assert shown["imported"] and shown["hypotheses"][0]["status"] == "undetermined"
    err = wb(
        capsys, *other, "observe", str(imported["investigation"]), "--text", "x", "--evidence", "value=1", expect=3
    )
    assert "read-only" in err.err

    text = wb(capsys, *s, "investigate", "show", i).out
    assert "observation, not cause" in text and "[retracted]" in text and "[undetermined]" in text


def test_usage_errors_are_one_line(demo_store, capsys):
    s = ("--store", demo_store)
    err = wb(capsys, *s, "investigate", "compare", "99", "1", "--vs", "2", expect=2).err
    assert err.startswith("wb: error: no investigation 99") and err.count("\n") == 1
    err = wb(
        capsys, *s, "investigate", "new", "--lens", "inference", "--question", "q", "--change", "bad", expect=2
    ).err
    assert "DIM=FROM:TO" in err
    err = wb(capsys, *s, "observe", "1", expect=2).err
    assert "give one of" in err
