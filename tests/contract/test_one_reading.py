"""Derived and measured never contradict each other (issue 27 item 9): one reading of a
dimension (``comparability.run_value``) for ``wb compare``, ``wb show`` and ``wb declare``."""

from __future__ import annotations

from pathlib import Path

from tests.rerun.helpers import wb

CONTROL = Path(__file__).resolve().parents[1] / "data" / "training" / "trace_diff" / "control"


def test_declare_agrees_with_the_value_show_lists(sqlite_url):
    code, _, err = wb("import", str(CONTROL / "control.json.gz"), store=sqlite_url)
    assert code == 0, err
    _, shown, _ = wb("show", "1", store=sqlite_url)
    assert any(line.split()[:3] == ["rank_count", "8", "measured"] for line in shown.splitlines())
    # HTA's trace-diff control: the trace of one rank, a job of 8 (measured by the importer).
    code, out, err = wb("declare", "1", "rank_count=8", "--why", "the job's world size", store=sqlite_url)
    assert code == 0, err
    code, out, err = wb("declare", "1", "rank_count=4", "--why", "wrong", store=sqlite_url)
    assert code == 2 and "which say rank_count = 8 (measured)" in err


def test_compare_reads_the_same_value(sqlite_url):
    from store import open_store
    from lenses import get_lens
    from workbench.compare.contract import dimension_values

    wb("import", str(CONTROL / "control.json.gz"), store=sqlite_url)
    reading = dimension_values(get_lens("training"), open_store(sqlite_url).load_run(1))["rank_count"]
    assert (reading.value, reading.source) == (8, "measured")
