"""Frame: lens, decision question, guardrails, intended change; a new investigation."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from workbench.investigations.views import InvestigationView
from workbench.textsafe import clean
from workbench.tui import offers, services
from workbench.tui.stages import Stage
from workbench.tui.state import InvestigationState
from workbench.tui.widgets import ChoiceScreen, Field, FormScreen

LENSES = (
    ("inference", "inference: latency of a serving engine (TTFT p95)"),
    ("training", "training: step time of a training job"),
    ("fleet", "fleet: queue waits in a GPU pool"),
)


def in_force(state: InvestigationState | None, inv: InvestigationView) -> list[tuple[str, str]]:
    """The intended change and the accepted differences the next comparison uses: Compare's
    own record (``InvestigationState``: declared with d and a, or restored from the latest
    comparison), so Frame never says "none declared" while Compare uses one."""
    changes = state.changes if state is not None else inv.intended_change
    accepts = state.accepts if state is not None else {}
    change = ", ".join(f"{k}: {' -> '.join('unknown' if x is None else str(x) for x in v)}" for k, v in changes.items())
    return [
        ("intended change", change or "none declared (d in 2 Compare)"),
        ("accepted", "; ".join(f"{k} ({why})" for k, why in accepts.items()) or "none"),
    ]


class FrameStage(Stage):
    stage_id = "frame"
    can_focus = True  # the pane scrolls itself: one container less to lay out and paint on a switch
    BINDINGS = [Binding("n", "new", "New investigation")]

    def compose(self) -> ComposeResult:
        yield Static(id="frame-body")

    def on_mount(self) -> None:
        if self.inv is None:
            self.show(None)

    def show(self, inv: InvestigationView | None) -> None:
        body = self.query_one("#frame-body", Static)
        if inv is None:
            body.update(Text("No investigation open. Press i to pick one, or n to start a new one."))
            return
        t = Text()
        t.append("Investigation ", style="bold")
        t.append(f"{inv.id}")
        if inv.imported:
            t.append("  (imported bundle, read-only)", style="italic")
        t.append("\n")
        rows = [
            ("title", inv.title or "(none)"),
            ("lens", inv.lens),
            ("question", inv.question),
            ("guardrails", ", ".join(inv.guardrails) or "the lens defaults"),
            *in_force(self.wb.state, inv),
            ("baseline runs", ", ".join(map(str, inv.baseline_runs)) or "not chosen yet"),
            ("candidate runs", ", ".join(map(str, inv.candidate_runs)) or "not chosen yet"),
            ("comparisons", str(len(inv.comparisons))),
            ("observations", str(sum(1 for o in inv.observations if o.kind == "observation"))),
            ("hypotheses", str(len(inv.hypotheses))),
        ]
        table = Table.grid(padding=(0, 2))
        table.add_column(justify="right", style="bold", no_wrap=True)
        table.add_column(ratio=1)  # long values wrap under themselves: a hanging indent
        for name, value in rows:
            table.add_row(name, Text(clean(value)))
        body.update(
            Group(
                t,
                table,
                Text(
                    "\nGuardrails (METRIC RULE LIMIT) are checked at Compare, and at Verify in plans that carry them. "
                    "Next: 2 Compare."
                ),
            )
        )

    def action_new(self) -> None:
        def chosen(lens: str | None) -> None:
            if lens is None:
                return
            example = offers.words(lens)  # placeholders in the lens's own words
            self.app.push_screen(
                FormScreen(
                    f"New {lens} investigation",
                    [
                        Field("question", "Decision question", placeholder=example.question),
                        Field(
                            "guardrails",
                            "Guardrails: METRIC RULE LIMIT, comma separated (empty: the lens defaults)",
                            placeholder=f"e.g. {example.guardrail}" if example.guardrail else "",
                        ),
                    ],
                ),
                lambda form: self._create(lens, form),
            )

        self.app.push_screen(ChoiceScreen("Lens", list(LENSES)), chosen)

    def _create(self, lens: str, form: dict[str, str] | None) -> None:
        if not form:
            return
        guardrails = [g.strip() for g in form["guardrails"].split(",") if g.strip()]
        self.wb.background(
            services.new_investigation,
            lens,
            form["question"],
            guardrails,
            done=lambda inv: self.wb.open_investigation(inv.id),
            what="creating the investigation",
        )
