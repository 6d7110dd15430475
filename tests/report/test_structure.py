"""Golden structure of every demo report: both sources (the store, the verified bundle), both
formats; headings, sections and tables, never the figures in them."""

from __future__ import annotations

import pytest

from tests.report.goldens import demo_reports, structure_of
from tests.report.structure import html_page, markdown_structure, read_golden

SECTIONS = ["frame", "observations", "hypotheses", "verification", "actions", "provenance", "recheck"]


@pytest.fixture(scope="module")
def reports(demo):
    return demo_reports(*demo)


@pytest.mark.parametrize("source", ["store", "bundle"])
@pytest.mark.parametrize("inv", [1, 2, 3])
@pytest.mark.parametrize("fmt", ["html", "md"])
def test_structure_matches_the_golden(reports, source, inv, fmt):
    name = f"{source}-{inv}-{fmt}"
    assert structure_of(name, reports[name]) == read_golden(name), f"python -m tests.report.regen, then review {name}"


@pytest.mark.parametrize("inv", [1, 2, 3])
def test_every_section_is_on_the_page(reports, inv):
    for source in ("store", "bundle"):
        page = html_page(reports[f"{source}-{inv}-html"])
        assert [s for s in page.sections if s in SECTIONS] == SECTIONS
        assert f"comparison-{inv}" in page.sections
        text = " ".join(" ".join(page.text).split())
        assert "observation, not cause" in text and "claims to test, not findings" in text
        assert page.tags.get("svg", 0) >= 1  # the per-run chart at least
        dims = next(t for t in page.tables if t["header"][:3] == ["dimension", "must match", "state"])
        assert dims["rows"] >= 5 and dims["header"][-2:] == ["source", "note"]


def test_the_top_says_where_it_came_from_and_the_bottom_how_to_recheck(reports, demo):
    _url, bundles = demo
    for inv, bundle in bundles.items():
        verified = reports[f"bundle-{inv}-html"]
        assert "VERIFIED: every digest matches the checksum and the results recompute" in verified
        assert f"wb evidence verify {bundle} --recompute" in verified
        drawn = reports[f"store-{inv}-html"]
        assert "nothing on this page has been rechecked" in drawn
        assert f"wb bundle export {inv} -o investigation-{inv}.bundle.json --embed-samples" in drawn
        md = reports[f"bundle-{inv}-md"]
        assert md.index("VERIFIED") < md.index("### Observations") < md.index("### How to recheck")
        assert f"wb evidence verify {bundle} --recompute" in md


def test_headline_has_absolute_and_relative_change_and_the_verdict(reports):
    md = markdown_structure(reports["bundle-2-md"])
    headline = md["tables"][0]
    assert headline["header"] == ["metric", "baseline", "candidate", "absolute change", "relative change", "verdict"]
    assert "| mean step time | 420 ms | 570 ms | +150 ms | +35.7 % | **REGRESSION** |" in reports["bundle-2-md"]
    assert {"plan:", "A/A control:", "interval:", "verdict:", "flags:"} <= set(md["labels"])


def test_the_training_report_has_the_straggler_view(reports):
    for source in ("store", "bundle"):
        page = html_page(reports[f"{source}-2-html"])
        assert "h3 Ranks: the straggler view" in page.headings
        ranks = next(t for t in page.tables if t["header"][0] == "rank")
        assert 1 <= ranks["rows"] <= 8
    for inv in (1, 3):  # single-GPU serving and the fleet's windows have no ranks
        assert "straggler" not in reports[f"store-{inv}-html"]


def test_the_fleet_report_shows_window_metrics(reports):
    page = html_page(reports["bundle-3-html"])
    assert "h3 Window metrics" in page.headings
