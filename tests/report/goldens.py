"""Every demo report's structure, by name: ``{store|bundle}-{investigation}-{html|md}``."""

from __future__ import annotations

from pathlib import Path

from tests.report.structure import html_structure, markdown_structure


def demo_reports(url: str, bundles: dict[int, Path]) -> dict[str, str]:
    """Each demo investigation's report text, drawn from the store and from its bundle, in both formats."""
    from store import open_store
    from workbench.report.gather import bundle_report, investigation_report
    from workbench.report.render import render_html, render_markdown

    store = open_store(url)
    out = {}
    for inv, bundle in bundles.items():
        for source, report in (("store", investigation_report(store, inv)), ("bundle", bundle_report(bundle))):
            out[f"{source}-{inv}-html"] = render_html(report)
            out[f"{source}-{inv}-md"] = render_markdown(report)
    store.close()
    return out


def structure_of(name: str, text: str) -> dict:
    return html_structure(text) if name.endswith("-html") else markdown_structure(text)
