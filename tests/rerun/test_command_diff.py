"""The arms' commands split into what they share and what each adds."""

from __future__ import annotations

from workbench.rerun.command_diff import diff_commands, wrap_words


def test_the_words_that_differ_are_found():
    base = ["/very/long/venv/bin/python3", "/very/long/captures/workloads/cpu_workload.py", "--size", "8"]
    diff = diff_commands([base, [*base, "--slowdown", "5"], base])
    assert diff.common_prefix == tuple(base)
    assert diff.own == ((), ("--slowdown", "5"), ())
    assert diff.common_suffix == ()


def test_a_change_in_the_middle_keeps_both_ends():
    a = ["python", "bench.py", "--engine", "v0.8.2", "--rounds", "3"]
    b = ["python", "bench.py", "--engine", "v0.8.3", "--rounds", "3"]
    diff = diff_commands([a, b, a])
    assert diff.common_prefix == ("python", "bench.py", "--engine")
    assert diff.own == (("v0.8.2",), ("v0.8.3",), ("v0.8.2",))
    assert diff.common_suffix == ("--rounds", "3")


def test_identical_commands_and_empty_input():
    assert diff_commands([["x"], ["x"]]).own == ((), ())
    assert diff_commands([]).own == ()


def test_long_paths_wrap_and_are_never_cut():
    argv = ["/a/" + "b" * 150 + "/python3", "--seed", "2689448468"]
    lines = wrap_words(argv, 40)
    assert all(len(line) <= 40 for line in lines)
    assert "".join(line.strip() for line in lines).replace(" ", "") == "".join(argv).replace(" ", "")
    assert "2689448468" in lines[-1]
