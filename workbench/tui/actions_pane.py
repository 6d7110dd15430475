"""Actions in the TUI: what Hypothesize and Verify show of them, and the dialogs that
approve, reject or attach a plan. The work goes through the use cases (``usecases.actions``:
the action door, on the store the workbench holds or a server's) in the app's workers; nothing
here applies a change."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

from rich.text import Text

from workbench.actions.records import ActionView
from workbench.actions.text import action_lines, change_text
from workbench.investigations.common import current_user
from workbench.tui.widgets import Field, FormScreen, required_fields, safe
from workbench.usecases.actions import DecideAction, ListActions, VerifyAction
from workbench.usecases.transport import Workbench

KEYS = "a approve · j reject · t attach an executed plan (its candidate embodies the change)"


def actions_of(wb: Workbench, inv_id: int) -> list[ActionView]:
    return wb.call(ListActions(investigation=str(inv_id))).items


def decide(wb: Workbench, action_id: int, decision: str, by: str, why: str) -> ActionView:
    return wb.call(DecideAction(action=str(action_id), decision=decision, why=why, by=by))  # type: ignore[arg-type]


def attach_plan(wb: Workbench, action_id: int, plan: str) -> ActionView:
    return wb.call(VerifyAction(action=str(action_id), plan=plan.strip(), by=current_user()))


def option_label(a: ActionView) -> Text:
    return safe(f"act {a.id}  {change_text(a)}  [{a.status.status}{', ' + a.status.reason if a.status.reason else ''}]")


def citing_text(actions: list[ActionView], hypothesis_id: int) -> Text:
    """The actions that cite a hypothesis, one line each (empty when none)."""
    mine = [a for a in actions if hypothesis_id in a.because]
    if not mine:
        return Text()
    t = Text("\nactions: ", style="bold")
    t.append_text(safe("; ".join(f"{a.id} {change_text(a)} [{a.status.status}]" for a in mine)))
    return t


WIDTH = 76  # the detail pane at 80 columns, its border and scrollbar aside


def detail_text(a: ActionView) -> Text:
    lines = [
        w
        for line in [*action_lines(a), "", KEYS]
        for w in (textwrap.wrap(line, WIDTH, subsequent_indent="    ") or [""])
    ]
    return safe("\n".join(lines))


def decision_dialog(
    a: ActionView, decision: str, then: Callable[[dict[str, str] | None], Any]
) -> tuple[FormScreen, Callable[..., Any]]:
    verb = "Approve" if decision == "approved" else "Reject"
    return FormScreen(
        f"{verb} action {a.id}",
        [
            Field("by", "Who decides", value=current_user()),
            Field("why", "Why (kept in the append-only history)"),
        ],
        note=f"{change_text(a)} — scope: {a.scope}. wb records the decision; it never applies the change.",
        check=required_fields(("by", "Who decides"), ("why", "The reason")),
    ), then


def plan_dialog(a: ActionView, then: Callable[[dict[str, str] | None], Any]) -> tuple[FormScreen, Callable[..., Any]]:
    return FormScreen(
        f"Verify action {a.id} with a plan",
        [Field("plan", "Rerun plan (name or id)")],
        note="A plan of this investigation whose candidate arm embodies the change; the status follows from its "
        "comparison.",
        check=required_fields(("plan", "The plan")),
    ), then
