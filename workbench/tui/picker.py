"""The investigation picker: the first thing the workbench shows."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from workbench.investigations.views import InvestigationSummary
from workbench.tui.widgets import Dialog, FocusList, fill_options, one_line, safe


class InvestigationPicker(Dialog):
    """Returns an investigation id, "new", or None (escape)."""

    BINDINGS = [Binding("n", "new", "New"), Binding("escape", "cancel", "Close"), Binding("q", "quit", "Quit")]

    def __init__(self, investigations: list[InvestigationSummary], current: int | None = None) -> None:
        super().__init__("Investigations")
        self.investigations = investigations
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog picker"):
            yield FocusList(id="picker-list")
            yield Static(id="picker-detail", classes="detail")
            yield Static(Text("enter opens · n new · escape closes · q quits"), classes="hint")

    def on_mount(self) -> None:
        super().on_mount()
        options = []
        for inv in self.investigations:
            label = Text(f"{inv.id:>3}  {inv.lens:<9} ")
            label.append_text(safe(inv.title or inv.question))
            label.append(f"  {inv.observations}o {inv.hypotheses}h")
            if inv.imported:
                label.append(" (imported)", style="italic")
            options.append(Option(one_line(label), id=str(inv.id)))
        if not options:
            options.append(Option(Text("No investigations yet: press n to frame one (or run wb demo)."), id="new"))
        ids = [inv.id for inv in self.investigations]
        keep = ids.index(self.current) if self.current in ids else 0
        fill_options(self.query_one(OptionList), options, keep)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        inv = next((i for i in self.investigations if str(i.id) == event.option.id), None)
        detail = self.query_one("#picker-detail", Static)
        detail.update(safe(inv.question) if inv else "")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss("new" if event.option.id == "new" else int(event.option.id or 0))

    def action_new(self) -> None:
        self.dismiss("new")

    def action_quit(self) -> None:
        self.app.exit()
