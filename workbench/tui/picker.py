"""The investigation picker: the first thing the workbench shows."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from workbench.tui.widgets import safe


class InvestigationPicker(ModalScreen[int | str | None]):
    """Returns an investigation id, "new", or None (escape)."""

    BINDINGS = [Binding("n", "new", "New"), Binding("escape", "close", "Close")]

    def __init__(self, investigations: list[dict[str, Any]]) -> None:
        super().__init__()
        self.investigations = investigations

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog picker"):
            yield Label(Text("Investigations  (enter opens, n new, escape closes)", style="bold"))
            options = []
            for inv in self.investigations:
                label = Text(f"{inv['id']:>3}  {inv['lens']:<9} ")
                label.append_text(safe(inv.get("title") or inv["question"]))
                label.append(f"  {inv.get('observations', 0)}o {inv.get('hypotheses', 0)}h", style="dim")
                if inv.get("imported"):
                    label.append(" (imported)", style="italic")
                options.append(Option(label, id=str(inv["id"])))
            if not options:
                options.append(Option(Text("No investigations yet: press n to frame one (or run wb demo)."), id="new"))
            yield OptionList(*options, id="picker-list")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss("new" if event.option.id == "new" else int(event.option.id or 0))

    def action_new(self) -> None:
        self.dismiss("new")

    def action_close(self) -> None:
        self.dismiss(None)
