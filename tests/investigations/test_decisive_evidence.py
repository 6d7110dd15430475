"""Evidence must be able to decide: ``wb hypothesis status N supported|refuted --evidence``
takes only records of the hypothesis's own investigation that can decide it."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO, run_wb

pytestmark = pytest.mark.store

# Each lens's baseline pair, and a candidate that differs on a must-match dimension (a copy
# of a demo capture with that dimension changed): the pair is refused.
LENS_RUNS = {
    "inference": (
        ["engine v0.8.2 run 1", "engine v0.8.2 run 2"],
        "inference/candidate-1.json",
        "hardware",
        "1x A100 SXM4 80GB",
    ),
    "training": (["PyTorch 2.3.1 run 1", "PyTorch 2.3.1 run 2"], "training/candidate-1.json", "rank_count", 16),
    "fleet": (["window A1", "window A2"], "fleet/candidate-1.json", "scheduler_policy", "fifo"),
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("decisive")
    url = f"sqlite:///{tmp_path / 'wb.sqlite'}"
    assert run_wb("--store", url, "demo").returncode == 0
    for lens, (_, capture, dim, value) in LENS_RUNS.items():
        doc = json.loads((REPO / "captures" / "demo" / capture).read_text())
        doc["label"], doc["dimensions"][dim] = f"{lens} other {dim}", value
        (tmp_path / f"{lens}.json").write_text(json.dumps(doc))
        out = run_wb("--store", url, "import", str(tmp_path / f"{lens}.json"))
        assert out.returncode == 0, out.stderr
    return url


def wb(url, *args):
    out = run_wb("--store", url, *args)
    return out.returncode, out.stdout, out.stderr


def _investigation(url, lens):
    rows = json.loads(wb(url, "investigate", "list", "--json")[1])
    inv = next(r for r in rows if r["lens"] == lens)
    view = json.loads(wb(url, "investigate", "show", str(inv["id"]), "--json")[1])
    return view


@pytest.mark.parametrize("lens", sorted(LENS_RUNS))
def test_a_refused_comparison_cannot_decide(demo, lens):
    view = _investigation(demo, lens)
    base, _, dim, _ = LENS_RUNS[lens]
    code, out, err = wb(demo, "investigate", "compare", str(view["id"]), *base, "--vs", f"{lens} other {dim}", "--json")
    assert code == 0, err
    refused = json.loads(out)
    assert not refused["comparable"], refused["result"].get("refusal")
    hyp = view["hypotheses"][0]["id"]
    before = view["hypotheses"][0]["history"]
    for status in ("supported", "refuted"):
        code, _, err = wb(demo, "hypothesis", "status", str(hyp), status, "--evidence", f"comparison={refused['id']}")
        assert code == 2 and "was refused (not comparable)" in err and len(err.strip().splitlines()) == 1
    shown = json.loads(wb(demo, "investigate", "show", str(view["id"]), "--json")[1])
    assert shown["hypotheses"][0]["history"] == before  # nothing was written
    # The investigation's own comparable comparison with a verdict is what suggested the hypothesis
    # (its observations rest on it): not its test, whatever its verdict (issue 42).
    good = view["comparisons"][0]
    if good["comparable"] and good["verdict"] not in (None, "INCONCLUSIVE"):
        code, _, err = wb(demo, "hypothesis", "status", str(hyp), "supported", "--evidence", f"comparison={good['id']}")
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert "its test is a rerun" in err or "recorded before the hypothesis" in err


def test_a_record_of_another_investigation_or_of_none_cannot_decide(demo):
    inference, training = _investigation(demo, "inference"), _investigation(demo, "training")
    hyp = inference["hypotheses"][0]["id"]
    code, _, err = wb(
        demo,
        "hypothesis",
        "status",
        str(hyp),
        "supported",
        "--evidence",
        f"comparison={training['comparisons'][0]['id']}",
    )
    assert code == 2 and f"belongs to investigation {training['id']}" in err
    # One run a side: no verdict, nothing decided.
    code, out, _ = wb(
        demo,
        "investigate",
        "compare",
        str(inference["id"]),
        "engine v0.8.2 run 1",
        "--vs",
        "engine v0.8.3 run 1",
        "--json",
    )
    single = json.loads(out)["id"]
    code, _, err = wb(demo, "hypothesis", "status", str(hyp), "refuted", "--evidence", f"comparison={single}")
    assert code == 2 and "has no verdict" in err
    # A plan of no investigation, then one of this investigation that has not run.
    for name, extra in (("loose", []), ("mine", ["--investigation", str(inference["id"])])):
        code, _, err = wb(
            demo, "rerun", "plan", name, "--lens", "inference", "--baseline", "true", "--candidate", "true", *extra
        )
        assert code == 0, err
    code, _, err = wb(demo, "hypothesis", "status", str(hyp), "supported", "--evidence", "plan=loose")
    assert code == 2 and "belongs to no investigation" in err and f"--investigation {inference['id']}" in err
    code, _, err = wb(demo, "hypothesis", "status", str(hyp), "supported", "--evidence", "plan=mine")
    assert code == 2 and "has not been run" in err
    # An observation that is not a diagnosis is not a diagnosis.
    code, _, err = wb(
        demo,
        "hypothesis",
        "status",
        str(hyp),
        "supported",
        "--evidence",
        f"diagnosis={inference['observations'][0]['id']}",
    )
    assert code == 2 and "is not a diagnosis" in err
    # "undetermined" may cite a record that cannot decide, but only one of this investigation.
    code, _, err = wb(demo, "hypothesis", "status", str(hyp), "undetermined", "--evidence", f"comparison={single}")
    assert code == 0, err
    code, _, err = wb(
        demo,
        "rerun",
        "plan",
        "x",
        "--investigation",
        "999",
        "--lens",
        "inference",
        "--baseline",
        "true",
        "--candidate",
        "true",
    )
    assert code != 0 and "no investigation 999" in err


def test_a_pinned_diagnosis_decides_a_hypothesis_whose_test_it_is(demo):
    view = _investigation(demo, "training")
    code, out, err = wb(
        demo,
        "hypothesize",
        str(view["id"]),
        "The job fails for want of GPU memory.",
        "--test",
        "diagnose the next failure",
        "--test-kind",
        "diagnosis",
        "--json",
    )
    assert code == 0, err
    mine = json.loads(out)["id"]
    failures = REPO / "tests" / "data" / "failures"
    case = next(p for p in sorted(failures.iterdir()) if p.is_dir())
    code, _, err = wb(demo, "diagnose", str(case), "--pin", str(view["id"]))
    assert code == 0, err
    shown = json.loads(wb(demo, "investigate", "show", str(view["id"]), "--json")[1])
    pinned = [o for o in shown["observations"] if o["source"] == "diagnose"]
    assert pinned
    # The demo's hypothesis names a rerun: a diagnosis is not its test.
    code, _, err = wb(
        demo,
        "hypothesis",
        "status",
        str(view["hypotheses"][0]["id"]),
        "supported",
        "--evidence",
        f"diagnosis={pinned[-1]['id']}",
    )
    assert code == 2 and "its test is a rerun" in err
    code, _, err = wb(
        demo, "hypothesis", "status", str(mine), "supported", "--evidence", f"diagnosis={pinned[-1]['id']}"
    )
    assert code == 0, err
