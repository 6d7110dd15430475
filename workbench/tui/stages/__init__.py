"""The six stage panes. Each is a widget with ``show(inv)``: draw the investigation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.containers import Vertical

if TYPE_CHECKING:
    from workbench.tui.app import WorkbenchApp


class Stage(Vertical):
    """A stage pane: it draws an investigation and asks the app to do work off the UI thread."""

    stage_id = ""
    focus_target = ""  # a selector for the widget that takes focus when the stage opens

    @property
    def wb(self) -> "WorkbenchApp":
        return self.app  # type: ignore[return-value]

    @property
    def inv(self) -> dict[str, Any] | None:
        return self.wb.inv

    def show(self, inv: dict[str, Any] | None) -> None:  # pragma: no cover - overridden
        """Redraw from the investigation (called on the UI thread)."""

    def focus_first(self) -> None:
        if self.can_focus:  # a pane that scrolls itself
            self.focus(scroll_visible=False)
            return
        if self.focus_target:
            self.query_one(self.focus_target).focus(scroll_visible=False)
            return
        from textual.widgets import Input

        for widget in self.query("*"):
            if isinstance(widget, Input):
                continue
            if widget.focusable and widget.display:
                widget.focus(scroll_visible=False)
                return

    def needs_investigation(self) -> bool:
        if self.inv is None:
            self.wb.notify("Pick or create an investigation first (i)", severity="warning")
            return False
        if self.inv.get("imported"):
            self.wb.notify("This investigation was imported from a bundle: read-only", severity="warning")
            return False
        return True
