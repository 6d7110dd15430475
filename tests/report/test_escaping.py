"""Hostile strings from captures and users show as text in both formats: no tag, link, image,
mention or math comes out of them, no table gains a cell, and control and invisible
characters are shown as escapes (textsafe.clean first, then the format's escaping)."""

from __future__ import annotations

import markdown_it
import pytest

from tests.report.hostile import BIDI, CONTROL, IMAGE, LINK, PIPES, SCRIPT, hostile_investigation
from tests.report.structure import html_page, markdown_structure
from workbench.report.escape import markdown_code, markdown_text


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    from store import open_store
    from workbench.bundle.export import write_bundle
    from workbench.investigations.bundling import export_investigation
    from workbench.report.gather import bundle_report, investigation_report
    from workbench.report.render import render_html, render_markdown

    folder = tmp_path_factory.mktemp("hostile")
    store = open_store(f"sqlite:///{folder / 'wb.sqlite'}")
    inv = hostile_investigation(store, folder)
    bundle = write_bundle(export_investigation(store, inv, embed_samples=True), folder / "hostile.bundle.json")
    out = {}
    for source, report in (("store", investigation_report(store, inv)), ("bundle", bundle_report(bundle))):
        out[f"{source}-html"] = render_html(report)
        out[f"{source}-md"] = render_markdown(report)
    store.close()
    return out


@pytest.mark.parametrize("source", ["store", "bundle"])
def test_html_shows_hostile_text_as_text(reports, source):
    text = reports[f"{source}-html"]
    page = html_page(text)
    assert page.tags.get("script", 0) == 0 and page.tags.get("img", 0) == 0
    hrefs = [v for tag, name, v in page.attributes if name in ("href", "src", "xlink:href", "action", "srcset")]
    assert all(v.startswith("#") for v in hrefs), hrefs  # links within the page only
    assert not [a for a in page.attributes if a[1].startswith("on")]  # no event handler attribute
    shown = "".join(page.text)
    for hostile in (SCRIPT, LINK, IMAGE, PIPES):
        assert hostile in shown  # as text: the parser read it back as characters, not markup
    assert "\\x1b[31mALERT\\x07" in shown and "exe.\\u202etxt" in shown
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "&lt;script&gt;" in text


@pytest.mark.parametrize("source", ["store", "bundle"])
def test_markdown_shows_hostile_text_as_text(reports, source):
    text = reports[f"{source}-md"]
    assert "\x1b" not in text and "\u202e" not in text
    markdown_structure(text)  # every table row has its table's number of cells (the pipes did not split)
    html = markdown_it.MarkdownIt("gfm-like").render(text)  # tables, strikethrough, linkify: as GitHub reads it
    page = html_page(html)
    assert page.tags.get("a", 0) == 0, "a link came out of a capture's text"
    assert page.tags.get("img", 0) == 0 and page.tags.get("script", 0) == 0
    shown = "".join(page.text)
    assert SCRIPT in shown and LINK in shown and IMAGE in shown
    assert "\\x1b[31mALERT\\x07" in shown and BIDI not in shown
    assert "@everyone" in shown and "\\@everyone" not in shown  # escaped in the source, plain when rendered
    assert "line one\\n| forged | row |" in shown  # a newline never starts a row of its own


def test_markdown_escapes_by_construction():
    for hostile in (SCRIPT, LINK, IMAGE, PIPES, CONTROL, "www.evil.example", "`code`", "**bold** _em_ ~~del~~"):
        rendered = markdown_it.MarkdownIt("gfm-like").render(f"| x |\n|---|\n| {markdown_text(hostile)} |")
        page = html_page(rendered)
        assert not (page.tags.keys() & {"a", "img", "script", "strong", "em", "s", "code"}), (hostile, rendered)
    code = markdown_code("a ``b`` | c")
    assert markdown_it.MarkdownIt("gfm-like").render(code).count("<code>") == 1
