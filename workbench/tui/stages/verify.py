"""Verify: pick or create a rerun plan, see its preflight, run it in a worker, read the verdict."""

from __future__ import annotations

import threading
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from workbench.tui.stages import Stage
from workbench.tui.widgets import Field, FormScreen, block, highlighted_id, safe


class RunProgress(Message):
    """Progress from the executor's thread."""

    def __init__(self, event: dict[str, Any]) -> None:
        super().__init__()
        self.event = event


class VerifyStage(Stage):
    stage_id = "verify"
    focus_target = "#plans"
    BINDINGS = [
        Binding("n", "new_plan", "New plan"),
        Binding("r", "run", "Run"),
        Binding("escape", "cancel", "Cancel run"),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stop = threading.Event()
        self.running = False
        self.plans: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield OptionList(id="plans")
        yield ProgressBar(total=1, show_eta=False, id="rerun-progress")
        yield Static(id="rerun-status")
        with VerticalScroll(id="verify-scroll", can_focus=True):
            yield Static(id="plan-detail")

    def on_mount(self) -> None:
        self.query_one("#plans").border_title = "rerun plans (n new, r run)"

    def show(self, inv: dict[str, Any] | None) -> None:
        from workbench.tui import services

        self.wb.background(services.plans, done=self._got_plans, what="loading plans", group="plans")

    def _got_plans(self, plans: list[dict[str, Any]]) -> None:
        self.plans = plans
        widget = self.query_one("#plans", OptionList)
        keep = widget.highlighted
        widget.clear_options()
        for p in plans:
            status = p["executions"][-1][1] if p["executions"] else "not run"
            widget.add_option(Option(safe(f"{p['id']:>3}  {p['name']}  [{p['lens']}, {status}]"), id=str(p["id"])))
        if plans:
            widget.highlighted = keep if keep is not None and keep < len(plans) else len(plans) - 1
        else:
            self.query_one("#plan-detail", Static).update(Text("No rerun plans yet. Press n to make one with the bundled CPU workload, "
                                                               "or see docs/verify.md to wrap your own benchmark (wb rerun plan)."))

    def _plan_id(self) -> int | None:
        return highlighted_id(self.query_one("#plans", OptionList)) if self.plans else None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        plan_id = self._plan_id()
        if plan_id is None:
            return
        from workbench.tui import services

        self.wb.background(services.plan_text, plan_id, done=lambda text: self.query_one("#plan-detail", Static).update(block(text)),
                           what="loading the plan", group="plan-detail")

    def action_new_plan(self) -> None:
        self.app.push_screen(
            FormScreen("New rerun plan (bundled CPU workload)", [
                Field("name", "Name", value=f"cpu-demo-{len(self.plans) + 1}"),
                Field("slowdown", "Candidate slowdown, %", value="10"),
                Field("rounds", "Rounds (A, B, A′ each)", value="5"),
            ], note="Your own benchmark: wb rerun plan NAME --baseline ... --candidate ... (docs/verify.md)."),
            self._create_plan,
        )

    def _create_plan(self, form: dict[str, str] | None) -> None:
        if not form:
            return
        from workbench.tui import services

        try:
            slowdown, rounds = float(form["slowdown"]), int(form["rounds"])
        except ValueError:
            self.wb.notify("Slowdown and rounds must be numbers", severity="error")
            return
        self.wb.background(services.new_cpu_plan, form["name"], slowdown, rounds, done=lambda _id: self.show(self.inv), what="saving the plan")

    def action_run(self) -> None:
        plan_id = self._plan_id()
        if plan_id is None:
            self.wb.notify("Pick a plan first (or n for a new one)", severity="warning")
            return
        if self.running:
            self.wb.notify("A rerun is already running; escape cancels it after the current run", severity="warning")
            return
        from workbench.tui import services

        self.stop.clear()
        self.running = True
        observer = services.RunObserver(lambda event: self.post_message(RunProgress(event)), self.stop)
        self.query_one("#rerun-status", Static).update(Text("preflight…"))

        def finished(text: str) -> None:
            self.running = False
            self.query_one("#plan-detail", Static).update(block(text))
            self.show(self.inv)

        self.wb.background(services.run_plan, plan_id, observer, done=finished, what="running the plan", group="rerun",
                           on_error=lambda _error: setattr(self, "running", False))

    def action_cancel(self) -> None:
        if self.running:
            self.stop.set()
            self.query_one("#rerun-status", Static).update(Text("cancelling after the current run; finished runs are kept…"))

    def on_run_progress(self, message: RunProgress) -> None:
        event = message.event
        bar = self.query_one("#rerun-progress", ProgressBar)
        status = self.query_one("#rerun-status", Static)
        if event["event"] == "begin":
            bar.update(total=max(event["total"], 1), progress=event["done"])
        elif event["event"] == "started":
            status.update(Text(f"round {event['round']}, arm {event['arm']}: running"))
        elif event["event"] == "finished":
            bar.advance(1)
            live = event.get("live") or {}
            text = f"last run: {event['status']}"
            if live.get("rounds"):
                text += f"; after {live['rounds']} complete rounds B/A = {live['b_over_a']:.3f}, A′/A = {live['aprime_over_a']:.3f} (live, not a verdict)"
            status.update(Text(text))
        elif event["event"] == "end":
            status.update(Text(f"execution {event['status']}"))
