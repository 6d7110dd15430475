"""The demo's inference investigation carried to its end: a refused comparison stored beside
the others, a controlled rerun (the stand-in serving benchmark) that decides the hypothesis,
and an approved, verified action. The page shows each: the refusal with no delta, the rerun's
plan, A/A control, interval, verdict and flags with its per-run values, the hypothesis with the
evidence that decided it, the action with its decisions and derived status."""

from __future__ import annotations

import shutil

import pytest

from tests.actions.helpers import bench_command
from tests.report.structure import html_page, markdown_structure
from tests.rerun.helpers import wb

pytestmark = [pytest.mark.store, pytest.mark.slow]


def _ok(url, *args):
    code, out, err = wb(*args, store=url)
    assert code in (0, 4), err
    return out


@pytest.fixture(scope="module")
def pages(demo, tmp_path_factory):
    from store import open_store
    from workbench.bundle.export import write_bundle
    from workbench.investigations.bundling import export_investigation
    from workbench.report.gather import bundle_report
    from workbench.report.render import render_html, render_markdown

    folder = tmp_path_factory.mktemp("verified")
    url = f"sqlite:///{folder / 'wb.sqlite'}"
    shutil.copy(demo[0].removeprefix("sqlite:///"), folder / "wb.sqlite")
    store = open_store(url)
    other = [r.id for r in store.list_runs("inference") if r.label.endswith("(other hardware)")]
    _ok(url, "investigate", "compare", "1", "1", "2", "3", "--vs", *[str(i) for i in other])  # refused: a result
    _ok(
        url,
        "action",
        "propose",
        "1",
        "--change",
        "max_num_seqs=128:256",
        "--scope",
        "pool-a",
        "--because",
        "1",
        "--expect",
        "queue_ms",
        "decrease",
    )
    _ok(url, "action", "approve", "1", "--by", "dana", "--why", "queue time dominates TTFT p95")
    _ok(
        url,
        "rerun",
        "plan",
        "seqs-256",
        "--investigation",
        "1",
        "--lens",
        "inference",
        "--metric",
        "queue_ms",
        "--statistic",
        "mean",
        "--rounds",
        "5",
        "--seed",
        "7",
        "--change",
        "engine_config",
        "--baseline",
        bench_command(128, 30.0),
        "--candidate",
        bench_command(256, 15.0),
    )
    _ok(url, "rerun", "run", "seqs-256")
    _ok(url, "action", "verify", "1", "--plan", "seqs-256")
    _ok(url, "hypothesis", "status", "1", "supported", "--evidence", "plan=seqs-256", "--note", "B halves queue time")
    bundle = write_bundle(export_investigation(store, 1, embed_samples=True), folder / "inv1.bundle.json")
    report = bundle_report(bundle)
    store.close()
    return render_html(report), render_markdown(report)


def test_the_rerun_that_verified_is_on_the_page(pages):
    html, _md = pages
    page = html_page(html)
    assert "h3 rerun-comparison/1: plan seqs-256" in page.headings
    text = " ".join(" ".join(page.text).split())
    verification = text.split("Verification: controlled reruns", 1)[1].split("Actions and decisions", 1)[0]
    for label in ("design", "plan", "A/A control", "interval", "verdict", "flags", "guardrail error_rate"):
        assert f" {label} " in f" {verification} ", label
    assert "paired by round" in verification and "IMPROVEMENT" in verification
    assert 'id="chart-rerun-comparison-1-runs"' in html


def test_the_hypothesis_shows_what_decided_it_and_the_action_its_decisions(pages):
    html, md = pages
    text = " ".join(" ".join(html_page(html).text).split())
    assert "[supported] hypothesis/1" in text and "on the evidence: rerun_plan 1; note: B halves queue time" in text
    actions = text.split("Actions and decisions", 1)[1].split("Provenance", 1)[0]
    assert "action/1 [verified] configuration: engine_config.max_num_seqs 128 → 256" in actions
    assert "approved dana queue time dominates TTFT p95" in actions
    assert "queue_ms: IMPROVEMENT: the metric moved as expected (decrease)" in actions
    assert "- rerun-comparison/1 (plan seqs-256): **IMPROVEMENT**" in md
    assert "decided supported by" in md


def test_a_refused_comparison_shows_its_refusal_and_no_delta(pages):
    html, md = pages
    refused = html.split('<section id="comparison-4"', 1)[1].split("</section>", 1)[0]
    assert "REFUSED: Hardware (hardware) must match but differs" in " ".join(refused.split())
    assert "Headline" not in refused and "Per-run values" not in refused
    assert "**REFUSED:** Hardware \\(hardware\\)" not in md  # parentheses are not escaped: they open nothing
    assert "**REFUSED:** Hardware (hardware) must match" in md
    assert markdown_structure(md)["headings"].count("### comparison/4") == 1
