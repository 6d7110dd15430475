"""``v``: what the focused region shows cut short (a run's label, an option elided to one
line, a report's lines), in full, in a dialog that wraps every line and loses nothing.

A widget offers its detail with a ``detail()`` method returning ``(title, text)`` or None;
the focused widget is asked first, then its ancestors (a report's scroll container asks the
report it holds); a plain option list gives its highlighted option's whole prompt.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import OptionList, Static

from workbench.tui.widgets import Dialog, Report

Detail = tuple[str, Text]


class DetailScreen(Dialog):
    """A value in full: every line wrapped with a hanging indent (a long token folded), scrolled with the arrows."""

    BINDINGS = [Binding("escape,v,q,enter", "cancel", "Close")]

    def __init__(self, title: str, text: Text) -> None:
        super().__init__(title)
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog detail-dialog"):
            with VerticalScroll(classes="dialog-body", can_focus=True):
                yield Report(id="detail-text")
            yield Static(Text("arrows scroll · enter or escape closes"), classes="hint")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#detail-text", Report).show(self.text)


def detail_of(widget: Widget | None) -> Detail | None:
    """The full value behind what ``widget`` shows: its own ``detail()``, or the nearest
    ancestor's (a pane knows more than its list: an observation's evidence), else the
    highlighted option's whole prompt, or the whole text of the reports it scrolls."""
    node: Any = widget
    while isinstance(node, Widget):
        offered = getattr(node, "detail", None)
        found = offered() if callable(offered) else None
        if found is not None:
            return found
        node = node.parent
    if isinstance(widget, OptionList):
        if widget.highlighted is None or not widget.option_count:
            return None
        prompt = widget.get_option_at_index(widget.highlighted).prompt
        return _title(widget), prompt.copy() if isinstance(prompt, Text) else Text(str(prompt))
    if isinstance(widget, Widget):
        reports = [r for r in widget.query(Report) if r.source.plain.strip()]
        if reports:
            return _title(widget), Text("\n\n").join(r.source for r in reports)
    return None


def _title(widget: Widget) -> str:
    title = str(widget.border_title or "") if widget.border_title else ""
    return f"In full: {title}" if title else "In full"
