"""The investigation picker: the first thing the workbench shows, drawn at once; its rows
come from a worker (``fill``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from workbench.tui.widgets import Dialog, FocusList, fill_options, one_line, safe

if TYPE_CHECKING:  # the views load the compare engine (numpy): not before the first frame
    from workbench.investigations.views import InvestigationSummary

HINT = "enter opens · n new · escape closes · q quits"


class InvestigationPicker(Dialog):
    """Returns an investigation id, "new", or None (escape). ``investigations`` None: still
    being listed (the rows come with ``fill``)."""

    BINDINGS = [Binding("n", "new", "New"), Binding("escape", "cancel", "Close"), Binding("q", "quit", "Quit")]

    def __init__(self, investigations: list[InvestigationSummary] | None, current: int | None = None) -> None:
        super().__init__("Investigations")
        self.investigations = investigations
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog picker"):
            yield FocusList(id="picker-list")
            yield Static(id="picker-detail", classes="detail")
            yield Static(classes="hint")

    def on_mount(self) -> None:
        super().on_mount()
        self._draw()

    def fill(self, investigations: list[InvestigationSummary]) -> None:
        """The rows, once listed."""
        self.investigations = investigations
        if self.is_mounted:
            self._draw()

    def _draw(self) -> None:
        if self.investigations is None:
            self.query_one(OptionList).add_option(Option(Text("listing the investigations…"), disabled=True))
            self.query_one(".hint", Static).update(Text("escape closes · q quits"))
            return
        self.query_one(".hint", Static).update(Text(HINT))
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
        inv = next((i for i in self.investigations or () if str(i.id) == event.option.id), None)
        detail = self.query_one("#picker-detail", Static)
        detail.update(safe(inv.question) if inv else "")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss("new" if event.option.id == "new" else int(event.option.id or 0))

    def action_new(self) -> None:
        if self.investigations is not None:  # framing needs the panes, loaded with the rows
            self.dismiss("new")

    def action_quit(self) -> None:
        self.app.exit()
