"""The six stage panes. Each is a widget with ``show(inv)``: draw the investigation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Vertical

from workbench.investigations.views import InvestigationView

if TYPE_CHECKING:
    from workbench.tui.app import WorkbenchApp


class Stage(Vertical):
    """A stage pane: it draws an investigation and asks the app to do work off the UI thread."""

    stage_id = ""
    focus_target = ""  # a selector for the widget that takes focus when the stage opens (unless it can itself)

    @property
    def wb(self) -> "WorkbenchApp":
        return self.app  # type: ignore[return-value]

    @property
    def inv(self) -> InvestigationView | None:
        return self.wb.inv

    def show(self, inv: InvestigationView | None) -> None:  # pragma: no cover - overridden
        """Redraw from the investigation (called on the UI thread)."""

    def focus_first(self) -> None:
        """Focus the pane's list, or the pane where it scrolls itself."""
        # Now, not a message later (Widget.focus): the footer and the pane then share a frame.
        self.screen.set_focus(self if self.can_focus else self.query_one(self.focus_target), scroll_visible=False)

    def say(self, text: str) -> None:
        """What a key did, or why it did nothing; a pane with a status line says it there."""
        self.wb.notify(text, severity="warning", markup=False)

    def needs_investigation(self) -> bool:
        if self.inv is None:
            self.say("Pick or create an investigation first (i)")
            return False
        if self.inv.imported:
            self.say("This investigation was imported from a bundle: read-only")
            return False
        return True
