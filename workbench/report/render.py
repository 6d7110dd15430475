"""The report as a self-contained HTML page or a Markdown summary, from Jinja2 templates
shipped with the package (``templates/``), written in one step (``files.write_text``).

Jinja2 because the page is markup with loops, and its autoescape plus a ``finalize`` hook
(``escape.py``) escape every printed value by construction; the templates never mark a
value safe (a test checks). The HTML holds its CSS inline, its charts as inline SVG, no
script, and a Content-Security-Policy that forbids every fetch: one file, readable with
JavaScript off, printable (print CSS), and it loads nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jinja2

from workbench.compare import dict_diff
from workbench.numbers import change, num, qty, signed, size
from workbench.investigations.evidence_text import brief
from workbench.report import charts, facts
from workbench.report.escape import MarkdownSafe, html_value, markdown_code, markdown_value, shown
from workbench.report.files import Format, write_text
from workbench.report.model import Report

# Every fetch forbidden; inline styles (the page's own and the charts') allowed; data: images only.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def _cell(value: object) -> str:
    """A dimension's value in a table cell: a mapping as its count of settings, anything else in brief."""
    return dict_diff.cell(value) or brief(value)


def _environment(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("workbench.report", "templates"),
        autoescape=autoescape,
        finalize=html_value if autoescape else markdown_value,
        undefined=jinja2.StrictUndefined,  # a misspelt field is an error, never a blank cell
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        num=num, qty=qty, change=change, pct=lambda value: signed(value, "%"), delta=signed, cell=_cell, size=size
    )
    env.globals["facts"] = facts
    if not autoescape:
        env.filters.update(code=markdown_code, code_block=lambda v: MarkdownSafe(shown(v)))  # in a ~~~ fence: as is
    return env


@dataclass(frozen=True)
class Charts:
    """The charts as the HTML template calls them (drawn when the template reaches them)."""

    per_run = staticmethod(charts.per_run_chart)
    phases = staticmethod(charts.phases_chart)
    ranks = staticmethod(charts.ranks_chart)
    sweep = staticmethod(charts.sweep_chart)
    rerun = staticmethod(charts.rerun_chart)


def render_html(report: Report) -> str:
    return _environment(True).get_template("report.html.j2").render(r=report, charts=Charts(), csp=CSP)


def render_markdown(report: Report) -> str:
    return _environment(False).get_template("report.md.j2").render(r=report)


def write_report(report: Report, path: Path, fmt: Format) -> Path:
    """Render ``report`` and write it to ``path`` in one step; the path written."""
    return write_text(path, render_html(report) if fmt == "html" else render_markdown(report))
