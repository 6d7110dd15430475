"""An investigation of two load sweeps (the real inference-perf KubeCon demo: vLLM against its
V0 engine): the report draws the curve and the matched levels, from the store and from the
bundle's embedded samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.structure import html_page, markdown_structure

SWEEPS = Path(__file__).resolve().parents[1] / "data" / "inference" / "real" / "inference-perf-kubecon-na-2025"


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    from store import open_store
    from workbench.bundle.export import write_bundle
    from workbench.ingest import import_files
    from workbench.investigations import workflow as wf
    from workbench.investigations.bundling import export_investigation
    from workbench.report.gather import bundle_report, investigation_report
    from workbench.report.render import render_html, render_markdown

    folder = tmp_path_factory.mktemp("sweeps")
    store = open_store(f"sqlite:///{folder / 'wb.sqlite'}")
    import_files(store, [SWEEPS])
    sweeps: dict[str, list[int]] = {}
    for run in store.list_runs():
        sweeps.setdefault(store.load_run(run.id, tables=[]).meta["sweep"]["label"], []).append(run.id)
    base, cand = sweeps["vllm"], sweeps["vllm+v0_engine"]
    inv = wf.new_investigation(
        store,
        lens="inference",
        title="vLLM V0 engine",
        question="Does the V0 engine serve as much load?",
        baseline=base,
        candidate=cand,
        intended_change={"engine_revision": ["V1", "V0"]},
    )
    wf.store_comparison(store, inv.id, base, cand, accepts={"weights": "one deployment of the hub model"})
    bundle = write_bundle(export_investigation(store, inv.id, embed_samples=True), folder / "sweeps.bundle.json")
    out = {"store": render_html(investigation_report(store, inv.id))}
    report = bundle_report(bundle)
    out["bundle"], out["md"] = render_html(report), render_markdown(report)
    store.close()
    return out


@pytest.mark.parametrize("source", ["store", "bundle"])
def test_the_sweeps_are_compared_at_matched_load(pages, source):
    page = html_page(pages[source])
    assert "sweep" in page.sections and "h2 Load sweeps at matched load" in page.headings
    levels = next(t for t in page.tables if t["header"][:2] == ["baseline load", "candidate load"])
    assert levels["rows"] == 3  # 1, ~120 and ~155 req/s match within 5 % (tests/compare/test_sweeps.py)
    assert 'id="chart-sweep"' in pages[source]
    assert "Candidate saturates at 79.4 req/s against 92.2" in pages[source]


def test_the_summary_reads_as_a_ticket(pages):
    md = markdown_structure(pages["md"])
    assert md["headings"][0] == "## vLLM V0 engine"
    assert md["tables"][0]["header"][-1] == "verdict"
