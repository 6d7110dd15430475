"""Lens extension files: guardrails and metrics added without code."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lenses import get_lens
from lenses.extensions import ExtensionError, load_extension, parse_extension

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compare"))
from factories import inference_run

GOOD = """
lens = "inference"
description = "serving team SLOs"

[[metric]]
name = "e2e_p99"
title = "End-to-end latency, p99"
column = "e2e_ms"
statistic = "p99"
unit = "ms"

[[metric]]
name = "cache_hit"
quality = "prefix_cache_hit_rate"
lower_is_better = false

[[guardrail]]
name = "e2e_p99_budget"
title = "End-to-end p99 within 5 %"
metric = "e2e_p99"
rule = "max_increase_pct"
limit = 5

[[guardrail]]
name = "error_rate"
title = "Error rate at most 2 %"
metric = "error_rate"
rule = "max"
limit = 0.02
unit = "fraction"
"""


def test_extension_adds_metrics_and_guardrails(tmp_path):
    path = tmp_path / "serving.toml"
    path.write_text(GOOD)
    lens = get_lens("inference", [path])
    assert [m.name for m in lens.metrics] == ["e2e_p99", "cache_hit"]
    # a same-named guardrail replaces the built-in one; others are added
    assert [g.name for g in lens.guardrails] == ["error_rate", "e2e_p99_budget"]
    assert lens.guardrails[0].rule == "max"
    assert lens.extensions == (str(path),)
    assert get_lens("training", [path]).metrics == ()  # files for other lenses are ignored

    r = inference_run(decode=90)
    assert lens.guardrail_value(r, "e2e_p99") == pytest.approx(lens.metrics[0].value(r))
    assert 195 < lens.metrics[0].value(r) < 205


def test_extension_guardrail_is_judged_in_a_comparison(tmp_path):
    from workbench.compare import compare

    path = tmp_path / "serving.toml"
    path.write_text(GOOD)
    base = [inference_run("b", decode=90, run_id=1)]
    cand = [inference_run("c", decode=120, run_id=2)]  # decode does not touch TTFT, but e2e grows
    result = compare(base, cand, extensions=[path]).to_json()
    states = {g["name"]: g["state"] for g in result["guardrails"]}
    assert states == {"error_rate": "held", "e2e_p99_budget": "broken"}
    metric = next(m for m in result["metrics"] if m["name"] == "e2e_p99")
    assert metric["delta"] == pytest.approx(30, abs=2)
    cache = next(m for m in result["metrics"] if m["name"] == "cache_hit")
    assert cache["baseline"] is None  # not in the runs: unknown, never zero
    assert any("End-to-end p99 within 5 % broke" in o["text"] for o in result["observations"])
    assert result["extensions"] == [str(path)]


@pytest.mark.parametrize(
    "text, where, message",
    [
        (
            'lens = "inference"\n[[metric]]\nname = "x"\ncolumn = "e2e_ms"\nstat = "p99"\n',
            "metric[0]",
            "unknown key 'stat'",
        ),
        (
            'lens = "inference"\n[[guardrail]]\nname = "x"\nrule = "roughly"\nlimit = 1\n',
            "guardrail[0]",
            "unknown rule",
        ),
        ('lens = "inference"\n[[guardrail]]\nname = "x"\nrule = "max"\nlimit = nan\n', "guardrail[0]", "finite number"),
        ('lens = "inference"\n[[guardrail]]\nname = "x"\nrule = "max"\nlimit = "1"\n', "guardrail[0]", "finite number"),
        ('lens = "inference"\n[[metric]]\nname = "x"\ncolumn = "a"\nquality = "b"\n', "metric[0]", "exactly one of"),
        ('lens = "inference"\n[[metric]]\nname = "x"\n', "metric[0]", "exactly one of"),
        ('lens = "inference"\n[[metric]]\nname = "x y"\ncolumn = "a"\n', "metric[0]", "must be letters"),
        (
            'lens = "inference"\n[[metric]]\nname = "x"\ncolumn = "a"\nstatistic = "p42"\n',
            "metric[0]",
            "unknown statistic",
        ),
        ('lens = "gaming"\n[[metric]]\nname = "x"\ncolumn = "a"\n', None, "'lens' must be one of"),
        ('lens = "inference"\n', None, "defines no"),
        ('lens = "inference"\ncolour = "red"\n', None, "unknown key 'colour'"),
        (
            'lens = "inference"\n[[metric]]\nname = "x"\ncolumn = "a"\n[[metric]]\nname = "x"\ncolumn = "b"\n',
            None,
            "defined twice",
        ),
        ("lens = \n", None, "not valid TOML"),
    ],
)
def test_bad_extension_names_file_and_place(text, where, message):
    with pytest.raises(ExtensionError) as err:
        parse_extension(text, "team.toml")
    assert err.value.file == "team.toml"
    assert err.value.where == where
    assert message in str(err.value)
    assert str(err.value).startswith("team.toml")


def test_unreadable_extension_file(tmp_path):
    with pytest.raises(ExtensionError, match="cannot read"):
        load_extension(tmp_path / "missing.toml")
    bad = tmp_path / "bin.toml"
    bad.write_bytes(b'lens = "inference"\xff\n')
    with pytest.raises(ExtensionError, match="not UTF-8"):
        load_extension(bad)
