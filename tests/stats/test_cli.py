"""wb stats and wb bounds from the command line."""

import json

import pytest
from click.testing import CliRunner

from tests.conftest import run_wb
from tests.stats.datasets import AP, A, B, B2
from workbench.cli import cli


def csv_list(x):
    return ",".join(str(v) for v in x)


def invoke(*args):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result


def test_stats_json_matches_the_oracles():
    r = invoke("stats", "-a", csv_list(A), "-b", csv_list(B), "--a-prime", csv_list(AP), "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["ratio"] == pytest.approx(1.0271820449, abs=1e-10)
    assert doc["throughput_ratio"] == pytest.approx(0.9735372663, abs=1e-10)
    primary = [i for i in doc["intervals"] if i["method"] == "fieller-paired" and i["level"] == 0.95][0]
    assert (primary["low"], primary["high"]) == pytest.approx((1.0219099057, 1.0324743033), abs=1e-10)
    assert doc["verdict"] == "REGRESSION" and doc["gate"] == "FAIL"
    assert doc["aa"]["noise_floor_sd_log"] == pytest.approx(0.0041847117, abs=1e-10)


def test_stats_human_output_names_methods_verdict_and_rounds_needed():
    r = invoke("stats", "-a", csv_list(A), "-b", csv_list(B2), "--a-prime", csv_list(AP), "--delta", "0.005")
    out = r.stdout
    for word in (
        "fieller-paired",
        "log-t-paired",
        "bootstrap-percentile",
        "seed 12345",
        "throughput change",
        "noise floor",
        "verdict: INCONCLUSIVE",
        "gate: RERUN",
        "8 rounds to detect it",
    ):
        assert word in out, word


def test_stats_unpaired_and_higher_is_better():
    r = invoke("stats", "-a", "10 11 10.5", "-b", "9 9.2 9.1 9.3", "--unpaired", "--higher-is-better", "--json")
    doc = json.loads(r.stdout)
    assert doc["paired"] is False and doc["lower_is_better"] is False
    assert doc["ratio"] == pytest.approx((31.5 / 3) / (36.6 / 4))


def test_stats_csv_with_an_incomplete_round(tmp_path):
    rows = ["round,arm,value"]
    for k, (a, b, ap) in enumerate(zip(A, B, AP)):
        rows += [f"{k},A,{a}", f"{k},B,{b}", f"{k},A',{ap}"]
    rows.append("8,A,100.0")  # a round whose B and A′ runs crashed
    path = tmp_path / "runs.csv"
    path.write_text("\n".join(rows) + "\n")
    r = invoke("stats", "--csv", str(path), "--json")
    doc = json.loads(r.stdout)
    assert doc["n"] == {"A": 8, "B": 8, "A'": 8}
    assert doc["ratio"] == pytest.approx(1.0271820449, abs=1e-10)
    assert "left out" in r.stderr and doc["notes"]


@pytest.mark.parametrize(
    "content, message",
    [
        ("round,arm\n1,A\n", "missing column(s) value"),
        ("round,arm,value\n1,A,1\n1,C,2\n", "line 3: unknown arm"),
        ("round,arm,value\n1,A,1\n1,B,x\n", "line 3: value is not a number"),
        ("round,arm,value\n1,A,1\n1,A,2\n", "line 3: round '1' has two values"),
        ("round,arm,value\n1,A,1\n1,B,-2\n", "line 3: value must be a positive"),
        ("round,arm,value\n1,A,1\n2,A,2\n", "needs values for both arms"),
        ("", "empty file"),
    ],
)
def test_stats_bad_csv_names_file_and_place(tmp_path, content, message):
    from workbench.errors import BadInput

    path = tmp_path / "bad.csv"
    path.write_text(content)
    r = CliRunner().invoke(cli, ["stats", "--csv", str(path)])
    assert isinstance(r.exception, BadInput) and r.exception.exit_code == 2
    assert str(r.exception).startswith(str(path)) and message in str(r.exception)
    assert r.stdout == ""


def test_stats_bad_csv_is_one_line_with_exit_2(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("round,arm,value\n1,A,1\n1,B,x\n")
    p = run_wb("stats", "--csv", str(path))
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip().splitlines() == [f"wb: error: {path}: line 3: value is not a number: 'x'"]


def test_stats_usage_errors_and_fail_on():
    from workbench.errors import UsageError

    for args, message in (
        (("-a", "1,2,3", "-b", "1,2"), "--unpaired"),
        (("-a", "1,abc", "-b", "1,2"), "not a number"),
        (("-a", "1,2"), "-a and -b"),
        (("-a", "1,2", "-b", "1,2", "--delta", "2"), "--delta"),
    ):
        r = CliRunner().invoke(cli, ["stats", *args])
        assert isinstance(r.exception, UsageError) and message in str(r.exception)
    p = run_wb("stats", "-a", csv_list(A), "-b", csv_list(B), "--fail-on", "regression", "--json")
    assert p.returncode == 4
    assert json.loads(p.stdout)["verdict"] == "REGRESSION"  # the document is still complete


def test_bounds_json_contract():
    p = run_wb(
        "bounds", "--baseline", "99:101", "--candidate", "109:111", "--work", "10000", "--unit", "tokens", "--json"
    )
    assert p.returncode == 0
    doc = json.loads(p.stdout)
    assert doc["time_ratio"] == pytest.approx([109 / 101, 111 / 99])
    assert doc["throughput_ratio"] == pytest.approx([0.8918918919, 0.9266055046], abs=1e-10)
    assert doc["time_ratio_exact"] == ["109/101", "37/33"] and doc["time_ratio_formula"] == ["109/101", "111/99"]
    assert doc["throughput_ratio_exact"] == ["33/37", "101/109"]
    assert doc["throughput_ratio_display"] == ["0.89189189", "0.92660551"]
    assert doc["verdict"] == "SLOWER_CERTAIN"
    assert doc["baseline_throughput"] == pytest.approx([10000 / 0.101, 10000 / 0.099])


def test_bounds_human_output_is_not_a_confidence_interval():
    r = invoke("bounds", "--baseline", "48:52", "--candidate", "49:53")
    assert r.exit_code == 0
    assert "not a confidence interval" in r.stdout
    assert "[48/53, 52/49]" in r.stdout and "0.90566037" in r.stdout and "1.06122449" in r.stdout
    assert "UNDETERMINED" in r.stdout and "no direction" in r.stdout


@pytest.mark.parametrize(
    "baseline, candidate, message",
    [
        ("101:99", "109:111", "inverted"),
        ("0:1", "1:2", "positive"),
        ("99", "1:2", "LOW:HIGH"),
        ("a:b", "1:2", "not a number"),
    ],
)
def test_bounds_refuses_bad_bounds(baseline, candidate, message):
    from workbench.errors import UsageError

    r = CliRunner().invoke(cli, ["bounds", "--baseline", baseline, "--candidate", candidate])
    assert isinstance(r.exception, UsageError) and r.exception.exit_code == 2
    assert message in str(r.exception) and r.stdout == ""


def test_bounds_refusal_exit_code():
    p = run_wb("bounds", "--baseline", "101:99", "--candidate", "109:111")
    assert p.returncode == 2 and p.stdout == "" and p.stderr.startswith("wb: error: baseline bounds are inverted")


def test_stats_with_one_run_a_side_says_the_noise_is_unknown():
    r = invoke("stats", "-a", "100", "-b", "101")
    assert r.exit_code == 0
    assert "none: an interval needs at least 2 rounds" in r.stdout
    assert "verdict: INCONCLUSIVE" in r.stdout and "noise is unknown" in r.stdout
    doc = json.loads(invoke("stats", "-a", "100", "-b", "101", "--json").stdout)
    assert doc["intervals"] == [] and doc["gate"] == "RERUN" and doc["tests"]["df"] is None


def test_stats_csv_from_stdin():
    text = "round,arm,value\n" + "".join(f"{k},A,{a}\n{k},B,{b}\n" for k, (a, b) in enumerate(zip(A, B)))
    r = CliRunner().invoke(cli, ["stats", "--csv", "-", "--json"], input=text, catch_exceptions=False)
    assert json.loads(r.stdout)["ratio"] == pytest.approx(1.0271820449, abs=1e-10)
