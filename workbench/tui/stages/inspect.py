"""Inspect: phase chart, distributions, change over time, operations; pin an observation."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from workbench.investigations.views import InvestigationView, ObservationView
from workbench.tui import services
from workbench.tui.stages import Stage
from workbench.tui.widgets import Line, PaneList, Report, fill_options, highlighted_id, one_line, safe


class InspectStage(Stage):
    stage_id = "inspect"
    focus_target = "#derived"
    BINDINGS = [Binding("r", "refresh", "Refresh"), Binding("p", "pin", "Pin observation")]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._for: tuple[int, int] | None = None  # (investigation, comparison) drawn

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="inspect-scroll", can_focus=True, can_maximize=True):
            yield Report(id="inspect-report")
        yield Line(id="derived-label")
        yield PaneList(id="derived")

    def on_mount(self) -> None:
        self._heading()

    def _heading(self, pinned: str = "") -> None:
        """The list's heading; what a pin did is said here, not in a toast that would cover the list."""
        t = Text("Derived observations (observation, not cause): p pins the selected one")
        if pinned:
            t = Text(pinned, style="bold").append("  (observation, not cause; p pins another)", style="")
        self.query_one("#derived-label", Line).show(t)

    def say(self, text: str) -> None:
        """Why a key did nothing: on the list's heading, like what a pin did."""
        self.query_one("#derived-label", Line).show(Text(text, style="bold"))

    def show(self, inv: InvestigationView | None) -> None:
        report = self.query_one("#inspect-report", Report)
        derived = self.query_one("#derived", OptionList)
        comp = services.latest_comparison(inv) if inv else None
        if comp is None:
            report.show(Text("No comparison yet: pick runs in Compare (2) and press c."))
            derived.clear_options()
            self._for = None
            return
        observations = services.derived_texts(comp)
        pinned = {o.text for o in inv.observations if o.kind == "observation" and not o.retracted_by}
        fill_options(
            derived,
            [
                Option(one_line(safe(("✓ pinned  " if text in pinned else "") + text)), id=str(i))
                for i, text in enumerate(observations)
            ],
            derived.highlighted,
        )
        key = (inv.id, comp.id)
        if key != self._for:
            self._for = key
            self.action_refresh()

    def action_refresh(self) -> None:
        if self.inv is None:
            return
        self.query_one("#inspect-report", Report).show(Text("inspecting…"))
        self.wb.background(
            services.inspect_text,
            self.inv,
            done=lambda text: self.query_one("#inspect-report", Report).show(text),
            what="inspecting",
            group="inspect",
        )

    def action_pin(self) -> None:
        if not self.needs_investigation():
            return
        comp = services.latest_comparison(self.inv)
        index = highlighted_id(self.query_one("#derived", OptionList))
        if comp is None or index is None:
            self.say("Select a derived observation first (a comparison in 2 Compare derives them)")
            return

        def pinned(obs: ObservationView) -> None:
            self._heading(f"✓ pinned observation {obs.id}")
            self.wb.reload_investigation()

        self.wb.background(services.pin_from_comparison, self.inv.id, comp, index, done=pinned, what="pinning")
