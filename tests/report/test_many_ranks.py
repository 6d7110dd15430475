"""The report of a 1,024-rank investigation stays under 2 MB (its size does not grow with
the ranks beyond one chart's lines) and names the planted straggler first. How fast a
browser draws it is bench/report_render.py's (speed is never asserted in a test)."""

from __future__ import annotations

import pytest

from tests.report.many_ranks import STRAGGLER, many_rank_investigation
from tests.report.structure import html_page

LIMIT = 2 * 1024 * 1024

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    from store import open_store
    from workbench.bundle.export import write_bundle
    from workbench.investigations.bundling import export_investigation
    from workbench.report.gather import bundle_report, investigation_report
    from workbench.report.render import write_report

    folder = tmp_path_factory.mktemp("ranks")
    store = open_store(f"sqlite:///{folder / 'wb.sqlite'}")
    inv = many_rank_investigation(store, folder)
    bundle = write_bundle(export_investigation(store, inv, embed_samples=True), folder / "ranks.bundle.json")
    out = {
        "store": write_report(investigation_report(store, inv), folder / "store.html", "html"),
        "bundle": write_report(bundle_report(bundle), folder / "bundle.html", "html"),
        "md": write_report(bundle_report(bundle), folder / "bundle.md", "md"),
    }
    store.close()
    return out


@pytest.mark.parametrize("source", ["store", "bundle"])
def test_a_1024_rank_report_stays_under_2_mb_and_names_the_straggler(written, source):
    path = written[source]
    assert path.stat().st_size < LIMIT, f"{path.stat().st_size:,} bytes"
    page = html_page(path.read_text(encoding="utf-8"))
    assert "h3 Ranks: the straggler view" in page.headings
    ranks = next(t for t in page.tables if t["header"][0] == "rank")
    assert ranks["rows"] == 8  # the ranks that moved most, whatever the job's size
    text = path.read_text(encoding="utf-8")
    first_rank = text.split("<th>moved (ms)</th></tr></thead>", 1)[1].split('<td class="num">', 2)[1].split("<", 1)[0]
    assert first_rank == str(STRAGGLER)
    assert "(of 1024 on both sides)" in " ".join(text.split())


def test_the_ticket_summary_is_small_too(written):
    text = written["md"].read_text(encoding="utf-8")
    assert len(text.encode()) < 20_000 and f"rank {STRAGGLER} " in text
