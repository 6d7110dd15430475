"""``wb report``: an investigation or a verified bundle as a self-contained HTML page or a
Markdown summary for an incident ticket (docs/report.md).

``model`` reads a bundle document (an exported file, verified first, or an investigation
exported in memory) into the typed :class:`model.Report`; ``details`` adds what needs the
runs' rows (the straggler view, load sweeps); ``charts`` draws inline SVG with matplotlib;
``render`` fills the Jinja2 templates (``templates/``). Only ``wb report`` and the TUI's
Share pane load this package's renderers: matplotlib and Jinja2 never load on another
command's path.
"""
