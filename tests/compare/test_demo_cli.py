"""`wb compare` and `wb inspect` on the bundled demo captures: the seed's figures and
observations, refusals with their reason, the JSON contract, --fail-on exit codes."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO, run_wb

DEMO = REPO / "captures" / "demo"
INF_A = [f"engine v0.8.2 run {i}" for i in range(1, 6)]
INF_A2 = [f"engine v0.8.2 run {i} (A′ control)" for i in range(1, 6)]
INF_B = [f"engine v0.8.3 run {i}" for i in range(1, 6)]
TR_A = [f"PyTorch 2.3.1 run {i}" for i in range(1, 6)]
TR_A2 = [f"PyTorch 2.3.1 run {i} (A′ control)" for i in range(1, 6)]
TR_B = [f"PyTorch 2.4.0-rc1 run {i}" for i in range(1, 6)]
FL_A = [f"window A{i}" for i in range(1, 6)]
FL_A2 = [f"window A′{i}" for i in range(1, 6)]
FL_B = [f"window B{i}" for i in range(1, 6)]
OTHER_GPU = "engine v0.8.3 on A100"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """The demo captures plus one candidate on other hardware, imported once."""
    root = tmp_path_factory.mktemp("demo")
    doc = json.loads((DEMO / "inference" / "candidate-1.json").read_text())
    doc["label"] = OTHER_GPU
    doc["dimensions"]["hardware"] = "1x A100 SXM4 80GB"
    (root / "a100.json").write_text(json.dumps(doc))
    url = f"sqlite:///{root / 'wb.sqlite'}"
    out = run_wb("--store", url, "import", str(DEMO), str(root / "a100.json"))
    assert out.returncode == 0, out.stderr
    return url


def wb(capsys, store, *args):
    from workbench.cli import main

    try:
        main(["--store", store, *args])
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def compare_json(capsys, store, base, cand, *extra):
    code, out, err = wb(capsys, store, "compare", *base, "--vs", *cand, "--json", *extra)
    return code, json.loads(out), err


def test_inference_demo(capsys, store):
    code, doc, _ = compare_json(capsys, store, INF_A, INF_B, "--change", "engine_revision=v0.8.2:v0.8.3")
    assert code == 0
    assert doc["comparable"] and doc["lens"] == "inference"
    p = doc["primary"]
    assert p["baseline"] == pytest.approx(110, rel=0.02) and p["candidate"] == pytest.approx(230, rel=0.02)
    assert p["delta"] == pytest.approx(120, rel=0.03) and p["delta_pct"] == pytest.approx(109, abs=3)
    assert p["effect"]["verdict"] == "REGRESSION"
    phases = {ph["name"]: ph for ph in doc["phases"]}
    assert phases["queue"]["baseline_p95"] == pytest.approx(40, rel=0.03)
    assert phases["queue"]["candidate_p95"] == pytest.approx(160, rel=0.03)
    assert phases["prefill"]["candidate_p95"] == pytest.approx(70, rel=0.03)
    assert phases["decode"]["candidate_p95"] == pytest.approx(90, rel=0.03)
    texts = [o["text"] for o in doc["observations"]]
    assert texts[0].startswith("Queue time grew from ")
    assert texts[1].startswith("Prefill and decode took the same time")
    assert texts[2] == "The added latency happens before the model starts work on the request."
    states = {d["name"]: d["state"] for d in doc["dimensions"]}
    assert states["engine_revision"] == "changed"
    assert all(states[d] == "same" for d in ("model", "weights", "hardware", "topology", "request_mix", "window"))


def test_training_demo(capsys, store):
    code, doc, _ = compare_json(capsys, store, TR_A, TR_B, "--change", "framework")
    assert code == 0 and doc["comparable"]
    assert doc["primary"]["baseline"] == pytest.approx(420, rel=0.01)
    assert doc["primary"]["candidate"] == pytest.approx(570, rel=0.01)
    texts = [o["text"] for o in doc["observations"]]
    assert texts[0].startswith("Compute stayed at 260 ms")
    assert "communication grew from 115 ms to 265 ms" in texts[0]
    assert "Evaluation loss held (2.14 vs 2.15)." in texts
    states = {d["name"]: (d["state"], d["source"]) for d in doc["dimensions"]}
    assert states["rank_count"] == ("same", "derived") and states["effective_batch"][0] == "same"


def test_fleet_demo(capsys, store):
    code, doc, _ = compare_json(capsys, store, FL_A, FL_B)
    assert code == 0 and doc["comparable"]
    assert doc["primary"]["baseline"] == pytest.approx(14.2, abs=0.05)
    assert doc["primary"]["candidate"] == pytest.approx(85.6, abs=0.05)
    m = {p["name"]: p for p in doc["phases"]}
    assert m["service_attainment"]["baseline_mean"] == pytest.approx(98.5, abs=0.1)
    # 178 or 179 of 200 started jobs met the 60 s target, and the six still waiting are
    # past it (known misses): (3 × 178 + 2 × 179) / (5 × 206).
    assert m["service_attainment"]["candidate_mean"] == pytest.approx(100 * 892 / 1030)
    assert m["allocated_gpus_end"]["baseline_mean"] == 60 and m["allocated_gpus_end"]["candidate_mean"] == 56
    assert m["waiting_jobs"]["candidate_mean"] == 6
    blocking = [o for o in doc["observations"] if "sat unallocated" in o["text"]]
    assert len(blocking) == 1
    assert blocking[0]["text"].startswith("8 GPUs sat unallocated while 6 jobs waited, each needing 16 GPUs at once")
    # the demo's windows record eligibility for every job: no "without eligibility history" caveat
    assert "eligibility" not in blocking[0]["text"] and blocking[0]["evidence"]["values"]["eligibility_known"] is True
    assert blocking[0]["evidence"]["values"]["waiting_gang_sizes"] == [16] * 6


@pytest.mark.parametrize("base, again", [(INF_A, INF_A2), (TR_A, TR_A2), (FL_A, FL_A2)])
def test_aa_demo_pairs_are_not_regressions(capsys, store, base, again):
    code, doc, _ = compare_json(capsys, store, base, again, "--fail-on", "regression")
    assert code == 0
    assert doc["primary"]["effect"]["verdict"] != "REGRESSION"
    assert not any("grew" in o["text"] for o in doc["observations"])


def test_fail_on_regression_exits_4(capsys, store):
    code, doc, _ = compare_json(capsys, store, INF_A, INF_B, "--change", "engine_revision", "--fail-on", "regression")
    assert code == 4 and doc["primary"]["effect"]["verdict"] == "REGRESSION"
    code, _, _ = compare_json(capsys, store, INF_A, INF_B, "--change", "engine_revision", "--fail-on", "refused")
    assert code == 0


def test_refusal_names_its_reason_and_fail_on_refused_exits_3(capsys, store):
    code, doc, _ = compare_json(capsys, store, INF_A, [OTHER_GPU], "--change", "engine_revision")
    assert code == 0  # without --fail-on a refusal is a result, not a failure
    assert doc["comparable"] is False and doc["primary"] is None and doc["phases"] is None
    assert doc["refusal"]["dimension"] == "hardware"
    assert "1x H100 SXM5 80GB" in doc["refusal"]["reason"] and "1x A100 SXM4 80GB" in doc["refusal"]["reason"]
    for fail_on in ("refused", "any"):
        assert compare_json(capsys, store, INF_A, [OTHER_GPU], "--fail-on", fail_on)[0] == 3
    code, out, _ = wb(capsys, store, "compare", *INF_A, "--vs", OTHER_GPU)
    assert "REFUSED: Hardware (hardware) must match but differs" in out


def test_accept_is_recorded(capsys, store):
    code, doc, _ = compare_json(
        capsys,
        store,
        INF_A,
        [OTHER_GPU],
        "--change",
        "engine_revision",
        "--accept",
        "hardware",
        "--why",
        "fleet is mixed; we ship on both",
    )
    assert code == 0 and doc["comparable"]
    assert doc["accepted"] == [{"dimension": "hardware", "why": "fleet is mixed; we ship on both"}]
    assert doc["primary"]["effect"]["verdict"] is None  # one candidate run: no uncertainty


def test_text_report_fits_80_columns(capsys, store):
    code, out, _ = wb(capsys, store, "compare", *INF_A, "--vs", *INF_B, "--change", "engine_revision=v0.8.2:v0.8.3")
    assert code == 0
    assert "time to first token, p95: " in out and "→" in out
    assert "Observations (observation, not cause)" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_inspect_shows_distributions_windows_and_charts(capsys, store):
    code, out, _ = wb(capsys, store, "inspect", *TR_A, "--vs", *TR_B, "--change", "framework")
    assert code == 0
    assert "Phase mean (each run's, averaged over runs), baseline against candidate" in out
    assert "Communication B |###" in out and "C |===" in out
    assert "Distributions" in out and "Over time: 8 equal windows by step" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    code, out, _ = wb(
        capsys, store, "inspect", *INF_A, "--vs", *INF_B, "--change", "engine_revision", "--json", "--windows", "4"
    )
    doc = json.loads(out)
    assert doc["comparison"]["comparable"]
    assert {d["name"] for d in doc["distributions"]} == {"ttft", "queue", "prefill", "decode"}
    queue = next(m for m in doc["over_time"]["metrics"] if m["name"] == "queue")
    assert len(queue["baseline"]) == 4 and all(c > 2 * b for b, c in zip(queue["baseline"], queue["candidate"]))


def test_inspect_refused_exits_3(capsys, store):
    code, out, _ = wb(capsys, store, "inspect", *INF_A, "--vs", OTHER_GPU)
    assert code == 3 and "REFUSED" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["compare", "engine v0.8.2 run 1"], "name the candidate runs"),
        (["compare", "engine v0.8.2 run 1", "--vs", "no such run"], "no run with id or label"),
        (
            ["compare", "engine v0.8.2 run 1", "--vs", "engine v0.8.2 run 1"],
            "is named in the baseline and in the candidate",
        ),
        (
            ["compare", "engine v0.8.2 run 1", "--vs", "engine v0.8.3 run 1", "--accept", "hardware"],
            "needs its own --why",
        ),
        (["compare", "engine v0.8.2 run 1", "--vs", "PyTorch 2.3.1 run 1"], "different lenses"),
        (
            ["compare", "engine v0.8.2 run 1", "--vs", "engine v0.8.3 run 1", "--change", "colour=a:b"],
            "no such dimension",
        ),
    ],
)
def test_usage_errors_are_one_line_exit_2(capsys, store, args, message):
    code, out, err = wb(capsys, store, *args)
    assert code == 2, (out, err)
    assert message in err and len(err.strip().splitlines()) == 1


def test_bad_extension_file_is_one_line(capsys, store, tmp_path):
    bad = tmp_path / "team.toml"
    bad.write_text('lens = "inference"\n[[guardrail]]\nname = "x"\nrule = "nearly"\nlimit = 1\n')
    code, _, err = wb(capsys, store, "compare", INF_A[0], "--vs", INF_B[0], "--extension", str(bad))
    assert code == 2 and "team.toml: guardrail[0]: unknown rule 'nearly'" in err


def test_synthetic_sacct_pair_through_the_fleet_lens(capsys, tmp_path):
    """The inference/fleet helper's sacct pair, imported with its window, yields the seed's fleet figures."""
    url = f"sqlite:///{tmp_path / 'sacct.sqlite'}"
    pair = REPO / "captures" / "fleet_sacct"
    for name, day in (("window_a", "2026-11-02"), ("window_b", "2026-11-09")):
        code, _, err = wb(
            capsys,
            url,
            "import",
            str(pair / name),
            "--tz",
            "UTC",
            "--from",
            f"{day}T10:00:00",
            "--to",
            f"{day}T11:00:00",
            "--wait-target",
            "60",
        )
        assert code == 0, err
    code, doc, _ = compare_json(
        capsys, url, ["1"], ["2"], "--accept", "scheduler_policy", "--why", "sacct does not record it"
    )
    assert code == 0 and doc["comparable"]
    assert doc["primary"]["baseline"] == pytest.approx(14.2) and doc["primary"]["candidate"] == pytest.approx(85.6)
    m = {p["name"]: p for p in doc["phases"]}
    # 223 of the 250 started jobs met the 60 s target (89.2 % of started jobs); the six
    # still waiting, for 1200 to 1800 s, are known misses: 223 / 256.
    assert m["service_attainment"]["candidate_mean"] == pytest.approx(100 * 223 / 256)
    assert (m["allocated_gpus_end"]["baseline_mean"], m["allocated_gpus_end"]["candidate_mean"]) == (60, 56)
    assert any(
        o["text"].startswith("8 GPUs sat unallocated while 6 jobs waited, each needing 16 GPUs at once")
        for o in doc["observations"]
    )


def test_control_gives_the_demo_pair_its_aa_noise_floor(capsys, store):
    code, out, err = wb(
        capsys,
        store,
        "compare",
        *INF_A,
        "--vs",
        *INF_B,
        "--control",
        *INF_A2,
        "--change",
        "engine_revision=v0.8.2:v0.8.3",
        "--json",
    )
    assert code == 0, err
    doc = json.loads(out)
    effect = doc["primary"]["effect"]
    assert len(doc["runs"]["control"]) == 5 and effect["runs"]["control"] == 5
    assert "NO_AA_CONTROL" not in effect["flags"] and effect["aa"]["ratio"] == pytest.approx(1.0, abs=0.02)
    code, out, _ = wb(capsys, store, "compare", *INF_A, "--control", *INF_A2, "--vs", *INF_B)
    assert code == 0 and "A/A control: A′/A" in out and "5 A′ control runs" in out
    code, out, _ = wb(capsys, store, "inspect", *TR_A, "--vs", *TR_B, "--control", *TR_A2, "--json")
    assert code == 0 and len(json.loads(out)["comparison"]["runs"]["control"]) == 5


def test_control_that_is_not_the_baseline_again_is_one_line_exit_2(capsys, store):
    code, _, err = wb(capsys, store, "compare", *INF_A, "--vs", *INF_B[:3], "--control", *INF_B[3:])
    assert code == 2
    assert err.strip().count("\n") == 0 and "not baseline-again runs: engine_revision differs" in err
    code, _, err = wb(capsys, store, "compare", *INF_A, "--vs", *INF_B, "--control")
    assert code == 2 and "--control needs at least one control run" in err


def test_wb_demo_says_its_values_are_synthetic(capsys, tmp_path, monkeypatch):
    """Headless and --json: the demo is a synthetic demonstration; its sentences are no stronger than its data."""
    from captures import SYNTHETIC_NOTICE

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    url = f"sqlite:///{tmp_path / 'demo.sqlite'}"
    code, out, err = wb(capsys, url, "demo", "--json")
    assert code == 0, err
    assert json.loads(out)["note"] == SYNTHETIC_NOTICE
    code, out, err = wb(capsys, url, "demo", "--headless")
    assert code == 0, err
    assert SYNTHETIC_NOTICE in out.splitlines()[2]  # before the first comparison
    # eligibility history is recorded in every demo window: the caveat for its absence is not said
    assert "Without eligibility history" not in out


def test_demo_windows_vary_between_runs(capsys, store):
    """captures/README: runs vary between runs. The fleet windows of a side are not copies
    (their interval and the A/A noise floor are not degenerate), yet pool to the seed's figure."""
    code, doc, _ = compare_json(capsys, store, FL_A, FL_B, *sum((["--control", r] for r in FL_A2), []))
    assert code == 0
    effect = doc["primary"]["effect"]
    ci = next(i for i in effect["intervals"] if i["level"] == 0.95)
    assert ci["high"] / ci["low"] > 1.01  # not "6.03..6.03"
    assert effect["aa"]["mde_pct"] > 1.0  # not 0.000352 %
    assert doc["primary"]["baseline"] == pytest.approx(14.2, abs=0.05)
    means = {compare_json(capsys, store, [a], [b])[1]["primary"]["baseline"] for a, b in zip(FL_A, FL_B)}
    assert len(means) == len(FL_A)
