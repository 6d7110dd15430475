"""A bundle whose comparison was made before `wb declare` still recomputes.

The stranger's walk (tests/tui/test_walk.py) compares a user's own traces, is refused
for what the files do not say, declares it, and compares again. The first comparison
saw the runs without those declarations; its recomputation must too, or every bundle of
such an investigation fails ``wb evidence verify --recompute``.
"""

import json
from pathlib import Path

from tests.investigations.test_cli_flow import wb, wbj

TRACES = Path(__file__).resolve().parents[1] / "data" / "training" / "trace_diff"
MISSING = ("model=llama-7b", "objective=pretrain", "topology=dp", "effective_batch=64")


def test_comparison_made_before_declare_recomputes(tmp_path, capsys):
    s = ("--store", f"sqlite:///{tmp_path / 'own.sqlite'}")
    wb(capsys, *s, "import", str(TRACES / "control" / "control.json.gz"), str(TRACES / "test" / "test.json.gz"))
    runs = {r["label"].split()[0]: str(r["id"]) for r in wbj(capsys, *s, "runs")}
    base, cand = runs["control"], runs["test"]
    inv = str(wbj(capsys, *s, "investigate", "new", "--lens", "training", "--question", "Why is test slower?")["id"])
    before = wbj(capsys, *s, "investigate", "compare", inv, base, "--vs", cand)
    assert not before["comparable"] and before["result"]["refusal"]["dimension"] == "model"
    wb(capsys, *s, "declare", base, cand, *MISSING, "--why", "one job script for both")
    after = wbj(
        capsys,
        *s,
        "investigate",
        "compare",
        inv,
        base,
        "--vs",
        cand,
        "--accept",
        "hardware,rank_count",
        "--why",
        "another GPU on purpose",
    )
    assert after["comparable"] and {d["dimension"] for d in after["result"]["declarations"]} == {
        "model",
        "objective",
        "topology",
        "effective_batch",
    }

    bundle = tmp_path / "own.json"
    wbj(capsys, *s, "bundle", "export", inv, "-o", str(bundle), "--embed-samples")
    recipe = json.loads(bundle.read_text())["recipe"]["content"]["comparisons"]
    # What each comparison relied on is part of how it was made: none for the first, four a run for the second.
    assert [len(spec["declarations"]) for spec in recipe] == [0, 8]
    report = wbj(capsys, "evidence", "verify", str(bundle), "--recompute")
    assert report["valid"], report["mismatched"]

    # The declarations are inputs of the recipe: one the comparison did not rely on changes its result.
    doc = json.loads(bundle.read_text())
    doc["recipe"]["content"]["comparisons"][0]["declarations"] = doc["recipe"]["content"]["comparisons"][1][
        "declarations"
    ]
    from workbench.bundle.export import reseal_digests, write_bundle

    forged = write_bundle(reseal_digests(doc), tmp_path / "forged.json")
    report = wbj(capsys, "evidence", "verify", str(forged), "--recompute", expect=3)
    assert any("comparisons[0]" in m for m in report["mismatched"]), report["mismatched"]


def test_a_declaration_not_in_the_runs_history_is_refused(tmp_path, capsys):
    """The recipe may only name declarations the runs' own history carries."""
    s = ("--store", f"sqlite:///{tmp_path / 'own.sqlite'}")
    wb(capsys, *s, "import", str(TRACES / "control" / "control.json.gz"), str(TRACES / "test" / "test.json.gz"))
    wb(capsys, *s, "declare", "1", "2", *MISSING, "--why", "one job script for both")
    inv = str(wbj(capsys, *s, "investigate", "new", "--lens", "training", "--question", "Why is test slower?")["id"])
    wbj(
        capsys,
        *s,
        "investigate",
        "compare",
        inv,
        "1",
        "--vs",
        "2",
        "--accept",
        "hardware,rank_count",
        "--why",
        "another GPU",
    )
    bundle = tmp_path / "own.json"
    wbj(capsys, *s, "bundle", "export", inv, "-o", str(bundle), "--embed-samples")
    doc = json.loads(bundle.read_text())
    spec = doc["recipe"]["content"]["comparisons"][0]
    spec["declarations"][0]["value"] = "something else"
    from workbench.bundle.export import reseal_digests, write_bundle

    forged = write_bundle(reseal_digests(doc), tmp_path / "forged.json")
    out = wb(capsys, "evidence", "verify", str(forged), "--recompute", expect=3)
    assert "not in the history of run/" in out.out, out.out
