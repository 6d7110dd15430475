"""wb: a GPU performance investigation workbench.

The package is headless: nothing under ``workbench`` except ``workbench.tui``
imports Textual, and heavy modules (scipy, sqlmodel, pynvml, cupy) load lazily.
"""

__version__ = "0.1.0"
TOOL_NAME = "wb"
