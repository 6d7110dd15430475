"""The workbench TUI (Textual): six stage panes over the headless core.

The only package that imports Textual. It computes nothing of its own: every figure
comes from ``workbench.compare``, ``workbench.investigations``, ``workbench.rerun``
and ``workbench.bundle``, called through ``services`` in worker threads.
"""
