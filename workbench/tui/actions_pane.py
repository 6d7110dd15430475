"""Actions in the TUI: what Hypothesize and Verify show of them, and the dialogs that
approve, reject or attach a plan. The work goes through the door
(``workbench.actions.workflow``) in the app's workers; nothing here applies a change."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.text import Text

from workbench.actions.records import ActionView
from workbench.actions.text import action_lines, change_text
from workbench.actions.workflow import decide_action, list_actions, verify_action
from workbench.investigations.common import current_user
from workbench.tui.widgets import Field, FormScreen, required_fields, safe

if TYPE_CHECKING:
    from store.api import Store

KEYS = "a approve · j reject · t attach an executed plan (its candidate embodies the change)"


def actions_of(store: "Store", inv_id: int) -> list[ActionView]:
    return list_actions(store, inv_id)


def decide(store: "Store", action_id: int, decision: str, by: str, why: str) -> ActionView:
    return decide_action(store, action_id, decision, by=by, why=why)


def attach_plan(store: "Store", action_id: int, plan: str) -> ActionView:
    return verify_action(store, action_id, plan=plan.strip())


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
