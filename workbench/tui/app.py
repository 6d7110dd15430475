"""The workbench app: an investigation, six stage panes, keys, palette, and workers."""

from __future__ import annotations

import gc
import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.filter import Monochrome, NoColor
from textual.worker import Worker, WorkerState

from captures import SYNTHETIC_NOTICE
from store import open_store
from workbench.textsafe import clean
from workbench.tui.commands import WorkbenchCommands
from workbench.tui.detail import DetailScreen, detail_of
from workbench.tui.picker import InvestigationPicker
from workbench.tui.widgets import FormScreen, HelpScreen, KeyFooter, Line, TooSmallScreen, safe
from workbench.usecases.transport import Local, Workbench

# The first frame (the title, the stage bar and the picker) draws with Textual alone; the
# panes, and the ORM, numpy and the lenses they need, load in a worker behind it (_load).
if TYPE_CHECKING:
    from store.api import RunSummary
    from workbench.investigations.views import InvestigationSummary, InvestigationView
    from workbench.tui.services import RunSpark
    from workbench.tui.stages import Stage
    from workbench.tui.state import InvestigationState

TOKEN_ENV = "WB_TOKEN"
WAITING_AFTER_S = 0.3  # a server slower than this gets a "waiting for the server" line

STAGES: list[tuple[str, str]] = [  # the panes themselves: workbench/tui/panes.py
    ("frame", "1 Frame"),
    ("compare", "2 Compare"),
    ("inspect", "3 Inspect"),
    ("hypothesize", "4 Hypothesize"),
    ("verify", "5 Verify"),
    ("share", "6 Share"),
]
MINIMUM_SIZE = (60, 20)


# What a background job takes after the workbench, and what it returns.
Args = TypeVarTuple("Args")
R = TypeVar("R")


class WorkbenchApp(App[None]):
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses live elsewhere
    TITLE = "wb"
    COMMANDS = App.COMMANDS | {WorkbenchCommands}
    BINDINGS = [
        *[Binding(str(i), f"stage('{sid}')", label, show=False) for i, (sid, label) in enumerate(STAGES, start=1)],
        Binding("question_mark", "help", "Help"),
        Binding("i", "pick", "Investigations"),
        Binding("q", "quit", "Quit"),
        Binding("v", "detail", "View in full", show=False),
        # The focused region takes the whole screen and back (Harlequin's keys); escape also restores.
        Binding("ctrl+e,f10", "toggle_maximize", "Maximize", show=False),
    ]
    ALLOW_IN_MAXIMIZED_VIEW = "#footer"

    def __init__(self, store_url: str | None = None, *, server_url: str | None = None, demo: bool = False) -> None:
        super().__init__()
        if self.no_color:  # NO_COLOR means no colour: Textual's Monochrome filter still draws greys (38;5;N)
            self._filters = [NoColor() if isinstance(f, Monochrome) else f for f in self._filters]
        self.store_url = store_url
        self.server_url = server_url  # a wb serve whose store the panes use (wb --server URL, WB_SERVER)
        self.server_label = server_url  # how the title bar names it
        self.demo = demo
        self.workbench: Workbench | None = None
        self._waiting: dict[int, str] = {}  # the jobs waiting for the server, by a number: what each does
        self._job_ids = itertools.count()
        self._refused: str | None = None  # the server's last 401/403, one line in the title bar
        self.inv: InvestigationView | None = None
        self.states: dict[int, InvestigationState] = {}  # per investigation, kept while the app runs
        self.runs_cache: dict[str, list[RunSummary]] = {}  # runs by lens
        self.sparks_cache: dict[int, RunSpark] = {}  # each run's measure over time (runs never change)
        self._too_small: TooSmallScreen | None = None
        self._current = "frame"  # the stage shown
        self._panes: list[Stage] = []  # mounted once the start-up worker has loaded them
        self._settled = False  # whether the widgets were moved out of the collector's reach
        self._key_seq = itertools.count()  # keys in the order typed (see on_event)
        self._key_in_hand: int | None = None

    async def on_event(self, event: events.Event) -> None:
        # Keys typed faster than a form dialog opens: the key that opens it is still on its
        # way up from the pane's list to the app's bindings while the next ones are already
        # sent to that list. A key typed after the one that opened a form dialog belongs to
        # the dialog: it takes it (and replays it into its fields once mounted), so nothing
        # typed is lost and nothing reaches the pane behind it.
        if not isinstance(event, events.Key):
            await super().on_event(event)
            return
        if not event.is_forwarded:
            event._wb_seq = next(self._key_seq)  # type: ignore[attr-defined]
        seq = getattr(event, "_wb_seq", None)
        dialog = self.screen_stack[-1] if self.screen_stack else None
        if (
            isinstance(dialog, FormScreen)
            and dialog.opened_by is not None
            and seq is not None
            and seq > dialog.opened_by
            and (event.is_forwarded or not dialog.mounted)
        ):
            dialog.take_key(event)
            event.stop()
            return
        self._key_in_hand = seq
        try:
            await super().on_event(event)
        finally:
            self._key_in_hand = None

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(screen, FormScreen):
            screen.opened_by = self._key_in_hand  # the key whose binding opened it (None: not a key)
        return super().push_screen(screen, *args, **kwargs)

    @property
    def state(self) -> InvestigationState | None:
        """The open investigation's own selections, filter, declarations and banner."""
        return self.states.get(self.inv.id) if self.inv is not None else None

    # -- layout ----------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Line(id="titlebar")
        yield Line(id="stage-bar")
        yield KeyFooter(id="footer")  # the panes go above it once loaded (_loaded)

    @property
    def stage(self) -> str:
        """The stage shown ("frame", "compare", ...)."""
        return self._current

    def _stage_bar(self) -> None:
        """The stages as one line; the active one in brackets and reverse, readable without colour."""
        bar, current = Text(), self.stage
        for sid, label in STAGES:
            bar.append(f"[{label}]" if sid == current else f" {label} ", style="bold reverse" if sid == current else "")
            bar.append(" ")
        self.query_one("#stage-bar", Line).show(bar)

    def on_mount(self) -> None:
        self._stage_bar()
        self._title()
        self._check_size()
        what = "reaching the server" if self.server_url else "opening the store"
        picker = self._picker()
        # After the first frame is out: the worker's imports would hold the GIL while it is drawn.
        self.call_after_refresh(self.background, _load_panes, done=lambda panes: self._loaded(picker, panes), what=what)

    def _loaded(self, picker: InvestigationPicker, panes: dict[str, type[Stage]]) -> None:
        """Every pane is mounted once; a stage key only switches which one is displayed. They sit
        on the screen itself, not in a ContentSwitcher: one full-size container less to lay out
        and paint on every switch (bench/tui.py: ~13 % fewer calls a switch)."""
        footer = self.query_one("#footer", KeyFooter)
        self._panes = [cls(id=f"stage-{sid}") for sid, cls in panes.items()]
        for stage in self._panes:
            stage.display = stage.id == f"stage-{self._current}"
        mounted = footer.screen.mount(*self._panes, before=footer)

        async def focus() -> None:  # what the screen's auto-focus did when the panes came with it
            await mounted
            if footer.screen.focused is None:
                footer.screen.focus_next()

        self.call_next(focus)
        self._list_into(picker)

    def _title(self) -> None:
        t = Text().append("wb", style="bold")
        if self.server_label:
            t.append(f"  server {clean(self.server_label)}")
        if self._refused:
            t.append("  ").append_text(safe(self._refused))
        elif self._waiting:
            t.append(f"  waiting for the server ({clean(next(iter(self._waiting.values())))})…")
        if self.demo:
            t.append(f"  demo: {SYNTHETIC_NOTICE}")
        if self.inv is None:
            t.append("  no investigation open (i to pick one)")
        else:
            t.append(f"  investigation {self.inv.id} · {self.inv.lens} · ")
            t.append_text(safe(self.inv.title or self.inv.question))
        self.query_one("#titlebar", Line).show(t)

    # -- size ------------------------------------------------------------------

    def on_resize(self, event: Any) -> None:
        self._check_size(event.size)

    def _check_size(self, size: Any = None) -> None:
        """Below the minimum size, one line asks for a bigger terminal instead of a garbled screen."""
        width, height = size or self.size
        small = width < MINIMUM_SIZE[0] or height < MINIMUM_SIZE[1]
        if small and self._too_small is None:
            self._too_small = TooSmallScreen(MINIMUM_SIZE)
            self.push_screen(self._too_small)
        if self._too_small is not None:
            if small:
                self.call_after_refresh(self._too_small.show_size, width, height)
            else:
                screen, self._too_small = self._too_small, None
                if self.screen is screen:
                    self.pop_screen()
                self.refresh(layout=True)

    def stages(self) -> list[Stage]:
        return list(self._panes)

    def _pane(self, stage_id: str) -> Stage:
        return next(stage for stage in self._panes if stage.id == f"stage-{stage_id}")

    # -- background work --------------------------------------------------------

    def background(
        self,
        fn: Callable[[Workbench, *Args], R],
        *args: *Args,
        done: Callable[[R], None] | None = None,
        what: str = "working",
        group: str | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> Worker[R]:
        """Run ``fn(workbench, *args)`` in a thread (the store's or the server's: the screen never
        waits for either; a server slower than a moment shows "waiting for the server" in the title
        bar until it answers); ``done(result)`` on the UI thread, or ``on_error(exception)`` when it
        fails (either way, whatever waits on it is resolved). Typed: ``args`` are what ``fn`` takes
        after the workbench, ``done`` takes what it returns."""

        def deliver(result: R) -> None:
            try:
                done(result)  # type: ignore[misc]
            except Exception as exc:  # noqa: BLE001 - an error shows in the app, never as a traceback
                self.notify(clean(f"{what}: {type(exc).__name__}: {exc}"), severity="error", timeout=8, markup=False)
                if on_error is not None:
                    on_error(exc)

        def job() -> R:
            if self.server_url is None:
                result = fn(self._ensure_workbench(), *args)
            else:  # said in the title bar while the server takes its time
                number = next(self._job_ids)
                timer = self.call_from_thread(self.set_timer, WAITING_AFTER_S, lambda: self._wait(number, what))
                try:
                    result = fn(self._ensure_workbench(), *args)
                finally:
                    self.call_from_thread(self._answered, number, timer)
            if done is not None:
                self.call_from_thread(deliver, result)
            return result

        worker = self.run_worker(
            job,
            thread=True,
            exclusive=group is not None,
            group=group or "default",
            exit_on_error=False,
            description=what,
        )
        worker._wb_on_error = on_error  # type: ignore[attr-defined]
        return worker

    def _open_workbench(self) -> Workbench:
        if self.server_url:
            from workbench.usecases.remote import Remote  # httpx: only against a server

            return Remote(self.server_url, os.environ.get(TOKEN_ENV))
        return Local(open_store(self.store_url))  # SQLAlchemy loads here, in the worker, after the first frame

    def _ensure_workbench(self) -> Workbench:
        if self.workbench is None:
            self.workbench = self._open_workbench()
        return self.workbench

    def _wait(self, number: int, what: str) -> None:
        """A job still waiting for the server after a moment: said in the title bar while it lasts."""
        self._waiting[number] = what
        self._title()

    def _answered(self, number: int, timer: Any) -> None:
        timer.stop()
        if self._waiting.pop(number, None) is not None:
            self._title()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.SUCCESS and self._refused:
            self._refused = None  # the server answers again
            self._title()
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            message = getattr(error, "message", None) or str(error) or type(error).__name__
            status = getattr(error, "status", None)
            if status in (401, 403):  # the token: one line in the title bar
                self._refused = f"server refused ({status}): {message}"
                self._title()
            self.notify(clean(f"{event.worker.description}: {message}"), severity="error", timeout=8, markup=False)
            callback = getattr(event.worker, "_wb_on_error", None)
            if callback:
                callback(error)

    # -- investigations ---------------------------------------------------------

    def open_investigation(self, inv_id: int) -> None:
        what = "loading the investigation"
        self.background(_investigation, inv_id, done=self._show_investigation, what=what, group="inv")

    def reload_investigation(self, inv_id: int | None = None) -> None:
        """Reload the open investigation (only if it is still ``inv_id``, when given)."""
        if self.inv is not None and inv_id in (None, self.inv.id):
            self.open_investigation(self.inv.id)

    def _show_investigation(self, inv: InvestigationView) -> None:
        from workbench.tui.panes import InvestigationState  # loaded by the start-up worker

        self.inv = inv
        if inv.id not in self.states:
            self.states[inv.id] = InvestigationState.of(inv)
        self._title()
        for stage in self.stages():
            stage.show(inv)
        if not self._settled:  # once: each freeze keeps what dies after it (cycles) for good
            self._settled = True
            self.call_after_refresh(_settle_memory)

    # -- actions ----------------------------------------------------------------

    def action_stage(self, stage_id: str) -> None:
        if not self._panes:  # a key typed before the panes load: the bar says where they will open
            self._current = stage_id
            self._stage_bar()
            return
        if self.screen.maximized is not None:
            self.screen.minimize()  # another pane: the maximized region is not in it
        if stage_id != self._current:
            self.query_one(f"#stage-{self._current}").display = False
            self.query_one(f"#stage-{stage_id}").display = True
            self._current = stage_id
        self._stage_bar()
        self._pane(stage_id).focus_first()
        self.query_one("#footer", KeyFooter).redraw()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_detail(self) -> None:
        """The focused region's value in full (a run, an option cut to one line, a report)."""
        found = detail_of(self.focused)
        if found is None:
            self.notify("Nothing here is cut short: v shows a highlighted run, option or report in full", markup=False)
            return
        self.push_screen(DetailScreen(*found))

    def action_toggle_maximize(self) -> None:
        """The focused list or report fills the screen (lists and report trade space at 80×24)."""
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
        elif self.focused is not None:
            screen.maximize(self.focused)

    def action_pick(self) -> None:
        self._list_into(self._picker())

    def _picker(self) -> InvestigationPicker:
        """The picker, on screen at once; its rows come from a worker (``_fill``)."""

        def picked(choice: int | str | None) -> None:
            from workbench.tui.panes import FrameStage  # loaded by the start-up worker

            if choice == "new":
                self.action_stage("frame")
                self.query_one("#stage-frame", FrameStage).action_new()
            elif isinstance(choice, int):
                self.open_investigation(choice)
                self.action_stage("frame")

        picker = InvestigationPicker(None, self.inv.id if self.inv else None)
        self.push_screen(picker, picked)
        return picker

    def _list_into(self, picker: InvestigationPicker) -> None:
        def fill(invs: list[InvestigationSummary]) -> None:
            if picker in self.screen_stack:  # not closed meanwhile
                picker.fill(invs)

        self.background(_investigations, done=fill, what="listing investigations", group="picker")

    def run_palette_command(self, stage: str | None, action: str | None) -> None:
        if not self._panes:
            self.notify("The panes are still loading", markup=False)
            return
        if stage is not None:
            self.action_stage(stage)
        if action is None:
            return
        target: Any = self._pane(stage) if stage is not None else self
        getattr(target, f"action_{action}")()


def _load_panes(wb: Workbench) -> dict[str, type[Stage]]:
    """In the start-up worker, once the store is open (the ORM) or the server named: the panes."""
    from workbench.tui.panes import PANES  # heavy (numpy, the lenses): behind the first frame

    return PANES


def _investigations(wb: Workbench) -> list[InvestigationSummary]:
    from workbench.tui.panes import services  # loaded by the start-up worker

    return services.investigations(wb)


def _investigation(wb: Workbench, inv_id: int) -> InvestigationView:
    from workbench.tui.panes import services  # loaded by the start-up worker

    return services.investigation(wb, inv_id)


def _settle_memory() -> None:
    """Move what the app has built so far out of the garbage collector's reach: a full
    collection over every widget otherwise lands in the middle of a key press now and
    then (a 400-500 ms stall on a busy machine; bench/tui.py's max).

    Done once, after the first investigation is drawn (the panes are mounted once): a
    frozen object that later becomes cyclic garbage is never collected, so a freeze on
    every load kept ~2,600 objects a load for good; one freeze keeps a bounded few
    thousand (tests/tui/test_speed.py)."""
    gc.collect()
    gc.freeze()


def run_app(
    store_url: str | None = None, *, server_url: str | None = None, mouse: bool = False, demo: bool = False
) -> None:
    WorkbenchApp(store_url, server_url=server_url, demo=demo).run(mouse=mouse)
