"""The workbench app: an investigation, six stage panes, keys, palette, and workers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from workbench.textsafe import clean
from workbench.tui.commands import WorkbenchCommands
from workbench.tui.picker import InvestigationPicker
from workbench.tui.stages import Stage
from workbench.tui.stages.compare import CompareStage
from workbench.tui.stages.frame import FrameStage
from workbench.tui.stages.hypothesize import HypothesizeStage
from workbench.tui.stages.inspect import InspectStage
from workbench.tui.stages.share import ShareStage
from workbench.tui.stages.verify import VerifyStage
from workbench.tui.widgets import HelpScreen, safe

STAGES: list[tuple[str, str, type[Stage]]] = [
    ("frame", "1 Frame", FrameStage),
    ("compare", "2 Compare", CompareStage),
    ("inspect", "3 Inspect", InspectStage),
    ("hypothesize", "4 Hypothesize", HypothesizeStage),
    ("verify", "5 Verify", VerifyStage),
    ("share", "6 Share", ShareStage),
]


class WorkbenchApp(App[None]):
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses live elsewhere
    TITLE = "wb"
    COMMANDS = App.COMMANDS | {WorkbenchCommands}
    BINDINGS = [
        *[Binding(str(i), f"stage('{sid}')", label, show=False) for i, (sid, label, _cls) in enumerate(STAGES, start=1)],
        Binding("question_mark", "help", "Help"),
        Binding("i", "pick", "Investigations"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, store_url: str | None = None, *, demo: bool = False) -> None:
        super().__init__()
        self.store_url = store_url
        self.demo = demo
        self.store: Any = None
        self.inv: dict[str, Any] | None = None

    # -- layout ----------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="titlebar")
        with TabbedContent(id="stages"):
            for sid, label, cls in STAGES:
                with TabPane(label, id=sid):
                    yield cls(id=f"stage-{sid}")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._title()
        self.background(lambda store: store, done=self._opened, what="opening the store", needs_store=False)

    def _opened(self, store: Any) -> None:
        self.store = store
        self.action_pick()

    def _title(self) -> None:
        t = Text("wb", style="bold")
        if self.inv is None:
            t.append("  no investigation open (i to pick one)")
        else:
            t.append(f"  investigation {self.inv['id']} · {self.inv['lens']} · ")
            t.append_text(safe(self.inv.get("title") or self.inv["question"]))
        self.query_one("#titlebar", Static).update(t)

    def stages(self) -> list[Stage]:
        return list(self.query(Stage))

    # -- background work --------------------------------------------------------

    def background(self, fn: Callable[..., Any], *args: Any, done: Callable[[Any], None] | None = None, what: str = "working",
                   group: str | None = None, needs_store: bool = True, on_error: Callable[[], None] | None = None) -> Worker[Any]:
        """Run ``fn(store, *args)`` in a thread; ``done(result)`` on the UI thread."""

        def deliver(result: Any) -> None:
            try:
                done(result)  # type: ignore[misc]
            except Exception as exc:  # noqa: BLE001 - an error shows in the app, never as a traceback
                self.notify(clean(f"{what}: {type(exc).__name__}: {exc}"), severity="error", timeout=8, markup=False)

        def job() -> Any:
            store = self._ensure_store() if needs_store else self._open_store()
            result = fn(store, *args)
            if done is not None:
                self.call_from_thread(deliver, result)
            return result

        worker = self.run_worker(job, thread=True, exclusive=group is not None, group=group or "default", exit_on_error=False, description=what)
        worker._wb_on_error = on_error  # type: ignore[attr-defined]
        return worker

    def _open_store(self) -> Any:
        from store import open_store

        return open_store(self.store_url)

    def _ensure_store(self) -> Any:
        if self.store is None:
            self.store = self._open_store()
        return self.store

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            message = getattr(error, "message", None) or str(error) or type(error).__name__
            self.notify(clean(f"{event.worker.description}: {message}"), severity="error", timeout=8, markup=False)
            callback = getattr(event.worker, "_wb_on_error", None)
            if callback:
                callback()

    # -- investigations ---------------------------------------------------------

    def open_investigation(self, inv_id: int) -> None:
        from workbench.tui import services

        self.background(services.investigation, inv_id, done=self._show_investigation, what="loading the investigation", group="inv")

    def reload_investigation(self) -> None:
        if self.inv is not None:
            self.open_investigation(self.inv["id"])

    def _show_investigation(self, inv: dict[str, Any]) -> None:
        self.inv = inv
        self._title()
        for stage in self.stages():
            stage.show(inv)

    # -- actions ----------------------------------------------------------------

    def action_stage(self, stage_id: str) -> None:
        self.query_one("#stages", TabbedContent).active = stage_id
        self.query_one(f"#stage-{stage_id}", Stage).focus_first()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_pick(self) -> None:
        from workbench.tui import services

        def picked(choice: int | str | None) -> None:
            if choice == "new":
                self.action_stage("frame")
                self.query_one("#stage-frame", FrameStage).action_new()
            elif isinstance(choice, int):
                self.open_investigation(choice)
                self.action_stage("frame")

        self.background(services.investigations, done=lambda invs: self.push_screen(InvestigationPicker(invs), picked),
                        what="listing investigations", group="picker")

    def run_palette_command(self, stage: str | None, action: str | None) -> None:
        if stage is not None:
            self.action_stage(stage)
        if action is None:
            return
        target: Any = self.query_one(f"#stage-{stage}", Stage) if stage is not None else self
        getattr(target, f"action_{action}")()


def run_app(store_url: str | None = None, *, mouse: bool = False, demo: bool = False) -> None:
    WorkbenchApp(store_url, demo=demo).run(mouse=mouse)
