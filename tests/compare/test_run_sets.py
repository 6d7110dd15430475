"""One way to name run sets, ``BASE... --vs CAND... [--control APRIME...]``, in every
command that takes them (compare, inspect, investigate compare; stats for its values)
and in the TUI's selection: a run on two sides is refused, a value never joins another side."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_wb
from workbench.compare.run_sets import check_run_sets
from workbench.errors import UsageError

LENSES = {
    "inference": (
        [f"engine v0.8.2 run {i}" for i in range(1, 4)],
        [f"engine v0.8.3 run {i}" for i in range(1, 4)],
        [f"engine v0.8.2 run {i} (A′ control)" for i in range(1, 4)],
        "1",
    ),
    "training": (
        [f"PyTorch 2.3.1 run {i}" for i in range(1, 4)],
        [f"PyTorch 2.4.0-rc1 run {i}" for i in range(1, 4)],
        [f"PyTorch 2.3.1 run {i} (A′ control)" for i in range(1, 4)],
        "2",
    ),
    "fleet": (
        [f"window A{i}" for i in range(1, 4)],
        [f"window B{i}" for i in range(1, 4)],
        [f"window A′{i}" for i in range(1, 4)],
        "3",
    ),
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('runsets') / 'wb.sqlite'}"
    out = run_wb("--store", url, "demo")
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


@pytest.mark.parametrize("lens", sorted(LENSES))
def test_investigate_compare_takes_every_run_after_vs_as_a_candidate(capsys, demo, lens):
    base, cand, _, inv = LENSES[lens]
    code, out, err = wb(capsys, demo, "investigate", "compare", inv, base[0], "--vs", *cand, "--json")
    assert code == 0, err
    stored = json.loads(out)
    assert (len(stored["baseline_runs"]), len(stored["candidate_runs"])) == (1, 3)
    code, out, err = wb(capsys, demo, "investigate", "compare", inv, *base, "--vs", *cand, "--json")
    assert code == 0, err
    stored = json.loads(out)
    assert (len(stored["baseline_runs"]), len(stored["candidate_runs"])) == (3, 3)


@pytest.mark.parametrize("lens", sorted(LENSES))
@pytest.mark.parametrize("command", ["compare", "inspect", "investigate"])
def test_a_run_of_the_other_side_in_the_vs_list_is_refused(capsys, demo, lens, command):
    base, cand, aprime, inv = LENSES[lens]
    head = ["investigate", "compare", inv] if command == "investigate" else [command]
    for args, sides in (
        ([*base, "--vs", *cand, base[1]], ("baseline", "candidate")),
        ([*base, "--vs", *cand, "--control", *aprime, cand[0]], ("candidate", "control")),
        ([*base, "--vs", *cand, "--control", base[2]], ("baseline", "control")),
    ):
        code, _, err = wb(capsys, demo, *head, *args)
        assert code == 2, err
        assert f"is named in the {sides[0]} and in the {sides[1]}" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["compare", "inspect", "investigate"])
def test_a_run_after_another_option_never_joins_the_baseline(capsys, demo, command):
    base, cand, _, inv = LENSES["training"]
    head = ["investigate", "compare", inv] if command == "investigate" else [command]
    code, _, err = wb(capsys, demo, *head, base[0], "--vs", cand[0], "--lens", "training", cand[1])
    assert code == 2 and f"{cand[1]!r} comes after the --vs list" in err
    code, _, err = wb(capsys, demo, *head, base[0], "--vs", cand[0], "--json", cand[1])
    assert code == 2 and "comes after the --vs list" in err


def test_a_run_named_twice_on_one_side_by_id_and_label_is_refused(capsys, demo):
    code, out, _ = wb(capsys, demo, "runs", "--json")
    first = next(r for r in json.loads(out) if r["label"] == "PyTorch 2.3.1 run 1")
    code, _, err = wb(
        capsys, demo, "compare", str(first["id"]), "PyTorch 2.3.1 run 1", "--vs", "PyTorch 2.4.0-rc1 run 1"
    )
    assert code == 2 and f"run {first['id']} is named twice in the baseline" in err


def test_a_mixed_baseline_is_named_in_the_control_refusal(capsys, demo):
    """The control's refusal names the side that disagrees, never one run's value as the side's."""
    code, _, err = wb(
        capsys,
        demo,
        "compare",
        "PyTorch 2.3.1 run 1",
        "PyTorch 2.4.0-rc1 run 2",
        "--vs",
        "PyTorch 2.4.0-rc1 run 1",
        "--control",
        "PyTorch 2.3.1 run 1 (A′ control)",
    )
    assert code == 2
    assert (
        "baseline runs disagree" in err
        and "'PyTorch 2.4.0-rc1'" in err
        and "control" not in err.split("baseline-again runs:")[1]
    )


def test_stats_reads_each_arm_up_to_the_next_option(capsys, demo):
    listed = wb(capsys, demo, "stats", "-a", "100.3", "99.6", "101.2", "-b", "102.9", "102.1", "104.0", "--json")
    joined = wb(capsys, demo, "stats", "-a", "100.3,99.6,101.2", "-b", "102.9,102.1,104.0", "--json")
    assert listed[0] == joined[0] == 0
    assert json.loads(listed[1])["n"] == json.loads(joined[1])["n"] == {"A": 3, "B": 3}
    code, _, err = wb(capsys, demo, "stats", "-a", "1", "2", "-b")
    assert code == 2 and "-b needs at least one candidate value" in err


def test_the_one_check_every_caller_shares():
    assert check_run_sets([1, 2], [3], [4]).control == (4,)
    for args, message in (
        (([], [1]), "name the baseline runs"),
        (([1], []), "name the candidate runs"),
        (([1, 2], [2]), "run 2 is named in the baseline and in the candidate"),
        (([1], [2], [2]), "run 2 is named in the candidate and in the control"),
        (([1, 1], [2]), "run 1 is named twice in the baseline"),
    ):
        with pytest.raises(UsageError, match=message):
            check_run_sets(*args)
