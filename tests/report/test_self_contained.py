"""The page is one file that loads nothing: no script, no stylesheet or font or image to
fetch, no URL at all in its markup; a Content-Security-Policy that forbids every fetch;
print CSS. The templates print every value through the escaping environment (never
``|safe``) and ship as package data. matplotlib and Jinja2 load only for a report."""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.report.goldens import demo_reports
from tests.report.structure import html_page
from workbench.report.render import CSP

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = REPO / "workbench" / "report" / "templates"
FETCHING_TAGS = {
    "script",
    "link",
    "iframe",
    "frame",
    "object",
    "embed",
    "img",
    "image",
    "audio",
    "video",
    "source",
    "track",
    "base",
    "form",
    "input",
    "meta-refresh",
    "use-external",
    "foreignobject",
    "portal",
}
URL_ATTRIBUTES = {"href", "src", "srcset", "action", "formaction", "poster", "data", "background", "xlink:href", "ping"}


@pytest.fixture(scope="module")
def pages(demo):
    return {k: v for k, v in demo_reports(*demo).items() if k.endswith("-html")}


def test_no_page_names_anything_to_fetch(pages):
    for name, text in pages.items():
        page = html_page(text)
        assert not (set(page.tags) & FETCHING_TAGS), (name, set(page.tags) & FETCHING_TAGS)
        for tag, attr, value in page.attributes:
            if attr in URL_ATTRIBUTES:
                assert value.startswith("#"), (name, tag, attr, value)  # a fragment of this page, or nothing
            assert not attr.startswith("on"), (name, tag, attr)  # no script in an attribute either
        # url(#clip) names a clip path of the page's own SVG; nothing else, not even a namespace URI
        assert not re.search(r"(?i)url\s*\((?!#)|@import|https?:|//[a-z0-9]", text), name
        assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'.replace("'", "&#39;") in text
        assert "default-src 'none'" in CSP and "script-src" not in CSP
        assert "@media print" in text


def test_templates_never_mark_a_value_safe():
    for path in TEMPLATES.glob("*.j2"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\|\s*safe\b|autoescape\s+false|\bMarkup\b", text), path
        assert not re.search(r"https?://", text), path


def test_templates_are_package_data():
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["*"]
    package = REPO / "workbench" / "report"
    for path in TEMPLATES.iterdir():
        relative = str(path.relative_to(package))
        assert any(fnmatch.fnmatch(relative, p) for p in patterns), f"{relative} would not be installed"


PROBE = """
import sys
from workbench.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print("LOADED:" + ",".join(m for m in ("matplotlib", "jinja2", "markupsafe") if m in sys.modules))
"""


@pytest.mark.parametrize(
    "argv", [["--help"], ["report", "--help"], ["evidence", "verify", "--help"], ["runs", "--help"]]
)
def test_matplotlib_and_jinja2_load_only_for_a_report(argv):
    out = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True, text=True, timeout=120)
    line = [row for row in out.stdout.splitlines() if row.startswith("LOADED:")]
    assert line == ["LOADED:"], out.stdout + out.stderr


def test_the_tuis_first_frame_loads_no_report_renderer():
    probe = "import sys, workbench.tui.app; print([m for m in ('matplotlib', 'jinja2') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_ids_are_unique_and_every_reference_resolves(pages):
    """Many charts on one page: each chart's ids are its own, and every fragment points somewhere."""
    for name, text in pages.items():
        ids = re.findall(r'\bid="([^"]+)"', text)
        assert len(ids) == len(set(ids)), (name, sorted({i for i in ids if ids.count(i) > 1})[:5])
        refs = re.findall(r'url\(#([^)]+)\)|href="#([^"]+)"', text)
        assert refs and not [r for pair in refs for r in pair if r and r not in set(ids)], name
