"""Verify: pick or create a rerun plan, see its preflight, run it in a worker, read the verdict."""

from __future__ import annotations

import threading
import time
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import OptionList, ProgressBar
from textual.widgets.option_list import Option

from workbench.investigations.views import InvestigationView
from workbench.tui import actions_pane, services
from workbench.tui.messages import RunBegan, RunEnded, RunFinished, RunStarted
from workbench.tui.stages import Stage
from workbench.tui.widgets import PaneList, Field, FormScreen, Line, Report, fill_options, one_line, safe


def _plan_check(form: dict[str, str]) -> tuple[str, str] | None:
    """The custom plan's numbers, checked in the dialog (it stays open on the field at fault)."""
    if not form["name"].strip():
        return "name", "the plan needs a name"
    numbers: list[tuple[str, type[float] | type[int], str]] = [
        ("slowdown", float, "the slowdown must be a number of %"),
        ("rounds", int, "rounds must be a whole number"),
    ]
    for name, kind, reason in numbers:
        try:
            kind(form[name])
        except ValueError:
            return name, reason
    return None


class VerifyStage(Stage):
    stage_id = "verify"
    focus_target = "#plans"
    BINDINGS = [
        Binding("n", "new_plan", "New plan"),
        Binding("N", "custom_plan", "Custom plan", show=False),
        Binding("r", "run", "Run"),
        Binding("escape", "cancel", "Cancel run"),
        # On a highlighted action (listed after the plans; the keys are in its detail).
        Binding("a", "approve", "Approve action", show=False),
        Binding("j", "reject", "Reject action", show=False),
        Binding("t", "attach_plan", "Attach plan", show=False),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stop = threading.Event()
        self.running = False
        self.plans: list[services.PlanHistory] = []
        self.bisections: list[services.BisectionRow] = []  # listed after the plans, with ids "b<id>"
        self._started = 0.0  # when the current rerun began (monotonic), for the time left
        self._runs_done = 0
        self._runs_total = 0
        self._select_after_load: int | None = None
        self._estimate = ""
        self._begun_at = 0
        self._texts: dict[str, str] = {}  # each listed plan's or bisection's report, by option id
        self.actions: list[Any] = []  # the open investigation's actions, listed after the bisections with ids "a<id>"

    def compose(self) -> ComposeResult:
        yield PaneList(id="plans")
        yield ProgressBar(total=1, show_eta=False, id="rerun-progress")
        yield Line(id="rerun-status")
        with VerticalScroll(id="verify-scroll", can_focus=True, can_maximize=True):
            yield Report(id="plan-detail")

    def on_mount(self) -> None:
        self.query_one("#plans").border_title = "rerun plans and bisections (n new, r run, N custom)"

    def show(self, inv: InvestigationView | None) -> None:
        self.wb.background(services.plans, done=self._got_plans, what="loading plans", group="plans")

    def _got_plans(self, plans: list[services.PlanHistory]) -> None:
        self.plans = plans
        self.wb.background(
            services.bisections, done=self._got_bisections, what="loading bisections", group="bisections"
        )

    def _got_bisections(self, bisections: list[services.BisectionRow]) -> None:
        plans = self.plans
        self.bisections = bisections
        self._texts.clear()  # the list was reloaded: a plan may have run since
        widget = self.query_one("#plans", OptionList)
        ids = [p.id for p in plans]
        # A new plan is highlighted (r runs it); otherwise the highlight stays, or starts on the first.
        keep = ids.index(self._select_after_load) if self._select_after_load in ids else widget.highlighted
        self._select_after_load = None
        options = [
            Option(one_line(safe(f"{p.id:>3}  {p.name}  [{p.lens}, {p.last_status}]")), id=str(p.id)) for p in plans
        ]
        options += [
            Option(one_line(safe(f"bisect {b.name}  [{b.status}, {b.steps} steps, {b.open} open]")), id=f"b{b.id}")
            for b in bisections
        ]
        fill_options(widget, options, keep)
        if self.inv is not None:
            self.wb.background(
                actions_pane.actions_of, self.inv.id, done=self._got_actions, what="loading actions", group="actions"
            )
        if not plans and not bisections and not self.actions:
            self.query_one("#plan-detail", Report).show(
                Text(
                    "No rerun plans yet. Press n to make one with the bundled CPU workload,\n"
                    "or see docs/verify.md to wrap your own benchmark (wb rerun plan)."
                )
            )

    def _got_actions(self, actions: list[Any]) -> None:
        self.actions = actions
        widget = self.query_one("#plans", OptionList)
        listed = {widget.get_option_at_index(i).id for i in range(widget.option_count)}
        widget.add_options(
            [Option(one_line(actions_pane.option_label(a)), id=f"a{a.id}") for a in actions if f"a{a.id}" not in listed]
        )
        option = self._highlighted()
        shown = next((a for a in actions if f"a{a.id}" == option), None)
        if shown is not None:  # its status may have changed since it was drawn
            self.query_one("#plan-detail", Report).show(actions_pane.detail_text(shown))

    def say(self, text: str) -> None:
        """What a key did, or why it did nothing: on the status line under the plans."""
        self.query_one("#rerun-status", Line).show(Text(text, style="bold"))

    def _action(self) -> Any:
        option = self._highlighted()
        if not option or not option.startswith("a"):
            self.say("Highlight an action first (listed after the plans)")
            return None
        return next((a for a in self.actions if a.id == int(option[1:])), None)

    def _action_done(self, action: Any) -> None:
        self.query_one("#plan-detail", Report).show(actions_pane.detail_text(action))
        self.show(self.inv)

    def _decide(self, decision: str) -> None:
        a = self._action()
        if a is None:
            return

        def submitted(form: dict[str, str] | None) -> None:
            if form:
                self.wb.background(
                    actions_pane.decide,
                    a.id,
                    decision,
                    form["by"].strip(),
                    form["why"],
                    done=self._action_done,
                    what=f"recording the {decision[:-1]}al" if decision == "approved" else "recording the rejection",
                )

        self.app.push_screen(*actions_pane.decision_dialog(a, decision, submitted))

    def action_approve(self) -> None:
        self._decide("approved")

    def action_reject(self) -> None:
        self._decide("rejected")

    def action_attach_plan(self) -> None:
        a = self._action()
        if a is None:
            return

        def submitted(form: dict[str, str] | None) -> None:
            if form:
                self.wb.background(
                    actions_pane.attach_plan, a.id, form["plan"], done=self._action_done, what="attaching the plan"
                )

        self.app.push_screen(*actions_pane.plan_dialog(a, submitted))

    def _highlighted(self) -> str | None:
        widget = self.query_one("#plans", OptionList)
        if widget.highlighted is None or not widget.option_count:
            return None
        return widget.get_option_at_index(widget.highlighted).id

    def _plan_id(self) -> int | None:
        option = self._highlighted()
        return int(option) if option and option.isdigit() else None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        option = self._highlighted()
        if option is None:
            return
        if option in self._texts:  # drawn before, and nothing was run or made since
            self.query_one("#plan-detail", Report).show(self._texts[option])
            return

        def drawn(text: str) -> None:
            self._texts[option] = text
            if self._highlighted() == option:
                self.query_one("#plan-detail", Report).show(text)

        if option.startswith("a"):  # an action: its change, decisions, verifications and derived status
            action = next((a for a in self.actions if f"a{a.id}" == option), None)
            if action is not None:
                self.query_one("#plan-detail", Report).show(actions_pane.detail_text(action))
            return
        if option.startswith("b"):  # a bisection: its report (ranges, steps, result)
            self.wb.background(
                services.bisection_text, int(option[1:]), what="loading the bisection", group="plan-detail", done=drawn
            )
        else:
            self.wb.background(
                services.plan_text, int(option), what="loading the plan", group="plan-detail", done=drawn
            )

    def _lens(self) -> str | None:
        return self.inv.lens if self.inv else None

    def action_new_plan(self) -> None:
        """The one-key plan: the bundled CPU workload in the investigation's lens, candidate +5 %."""
        lens = self._lens()
        self._make_plan(
            f"cpu-{lens or 'training'}-{len(self.plans) + 1}", services.DEFAULT_SLOWDOWN_PCT, services.DEFAULT_ROUNDS
        )

    def action_custom_plan(self) -> None:
        self.app.push_screen(
            FormScreen(
                "New rerun plan (bundled CPU workload)",
                [
                    Field("name", "Name", value=f"cpu-{self._lens() or 'training'}-{len(self.plans) + 1}"),
                    Field("slowdown", "Candidate slowdown, %", value=f"{services.DEFAULT_SLOWDOWN_PCT:g}"),
                    Field("rounds", "Rounds (A, B, A′ each)", value=str(services.DEFAULT_ROUNDS)),
                ],
                note="Your own benchmark: wb rerun plan NAME --baseline ... --candidate ... (docs/verify.md).",
                check=_plan_check,
            ),
            self._create_plan,
        )

    def _create_plan(self, form: dict[str, str] | None) -> None:
        if not form:
            return
        self._make_plan(form["name"], float(form["slowdown"]), int(form["rounds"]))

    def _make_plan(self, name: str, slowdown: float, rounds: int) -> None:
        status = self.query_one("#rerun-status", Line)
        status.show(Text("calibrating the workload (one run) to estimate the plan's duration…"))

        def made(plan_id: int) -> None:
            status.show(Text(f"plan {plan_id} saved: press r to run it"))
            self._select_after_load = plan_id
            self.show(self.inv)

        owner = self.inv.id if self.inv is not None and not self.inv.imported else None  # the open investigation's plan
        self.wb.background(
            services.new_cpu_plan,
            name,
            slowdown,
            rounds,
            self._lens(),
            owner,
            done=made,
            what="making the plan",
            on_error=lambda error: status.show(safe(f"no plan made: {getattr(error, 'message', None) or error}")),
        )

    def action_run(self) -> None:
        plan_id = self._plan_id()
        if plan_id is None:
            self.say("Pick a plan first (or n for a new one)")
            return
        if self.running:
            self.say("A rerun is already running; escape cancels it after the current run")
            return
        self.stop.clear()
        self.running = True
        self._estimate = ""
        observer = services.RunObserver(self.post_message, self.stop)
        status = self.query_one("#rerun-status", Line)
        status.show(Text("estimating…"))

        def finished(text: str) -> None:
            self.running = False
            elapsed = time.monotonic() - self._started
            verdict = next((line.strip() for line in text.splitlines() if line.startswith("Verdict:")), "no verdict")
            self._status(f"finished in {elapsed:.0f} s · {verdict} (the report is below)")
            self.query_one("#plan-detail", Report).show(text)
            self.show(self.inv)

        def failed(error: BaseException) -> None:
            self.running = False
            self._status(f"the rerun stopped: {getattr(error, 'message', None) or error}")

        def estimated(text: str) -> None:
            # The estimate is on screen before anything runs; it stays as the first status line.
            self._estimate = f"plan {plan_id}: {text}"
            self._status("preflight, then the runs (escape stops after the current one)…")
            self._started = time.monotonic()
            self.wb.background(
                services.run_plan,
                plan_id,
                observer,
                done=finished,
                what="running the plan",
                group="rerun",
                on_error=failed,
            )

        self.wb.background(services.plan_estimate, plan_id, done=estimated, what="estimating the plan", on_error=failed)

    def _status(self, line: str) -> None:
        text = safe(self._estimate) + Text("\n") if self._estimate else Text()
        self.query_one("#rerun-status", Line).show(text + safe(line))

    def action_cancel(self) -> None:
        if self.running:
            self.stop.set()
            self._status("cancelling after the current run; finished runs are kept…")

    def on_run_began(self, event: RunBegan) -> None:
        self.query_one("#rerun-progress", ProgressBar).update(total=max(event.total, 1), progress=event.done)
        self._runs_total, self._runs_done, self._started = event.total, event.done, time.monotonic()
        self._begun_at = event.done

    def on_run_started(self, event: RunStarted) -> None:
        self._status(f"round {event.round}, arm {event.arm}: running")

    def on_run_finished(self, event: RunFinished) -> None:
        self.query_one("#rerun-progress", ProgressBar).advance(1)
        self._runs_done += 1
        live = event.live
        text = f"last run: {event.status}"
        ran = self._runs_done - self._begun_at
        if ran > 0:
            left = (time.monotonic() - self._started) / ran * max(self._runs_total - self._runs_done, 0)
            text += f"; about {left:.0f} s left"
        if live.get("rounds"):
            text += (
                f"; after {live['rounds']} complete rounds B/A = {live['b_over_a']:.3f}, A′/A = "
                f"{live['aprime_over_a']:.3f} (live, not a verdict)"
            )
        self._status(text)

    def on_run_ended(self, event: RunEnded) -> None:
        self._status(f"execution {event.status}")
