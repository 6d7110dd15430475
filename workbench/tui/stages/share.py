"""Share: export an evidence bundle and verify a bundle file, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from workbench.investigations.views import InvestigationView
from workbench.tui import services
from workbench.tui.stages import Stage
from workbench.tui.widgets import Field, FormScreen, block, safe

# Sentences without line breaks of their own: the pane wraps them at its width.
INTRO = (
    "An evidence bundle is JSON: the frame, the recipe and results with their SHA-256, the captures' "
    "provenance, observations and hypotheses, and a checksum over its RFC 8785 canonical form. "
    "Bundles are unsigned: a valid bundle was not changed since export; it does not prove who "
    "made it, nor that the result is right.\n\n"
    "e  export this investigation      v  verify a bundle file"
)


class ShareStage(Stage):
    stage_id = "share"
    can_focus = True  # the pane scrolls itself: one container less to lay out and paint on a switch
    BINDINGS = [Binding("e", "export", "Export bundle"), Binding("v", "verify", "Verify bundle")]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.last_path: str = ""

    def compose(self) -> ComposeResult:
        yield Static(Text(INTRO), id="share-intro")
        yield Static(id="share-result")

    def show(self, inv: InvestigationView | None) -> None:
        pass

    def action_export(self) -> None:
        if self.inv is None:
            self.wb.notify("Pick an investigation first (i)", severity="warning")
            return
        default = self.last_path or str(Path.cwd() / f"investigation-{self.inv.id}.bundle.json")
        self.app.push_screen(FormScreen("Export evidence bundle", [Field("path", "Write to", value=default)]), self._export)

    def _export(self, form: dict[str, str] | None) -> None:
        if not form or not form["path"].strip():
            return
        def done(result: tuple[Path, str]) -> None:
            path, checksum = result
            self.last_path = str(path)
            t = Text().append("Exported ", style="bold")
            t.append_text(safe(path))
            t.append(f"\nchecksum sha256:{checksum}\nRecheck anywhere with: wb evidence verify {path.name}")
            self.query_one("#share-result", Static).update(t)

        self.wb.background(services.export_bundle, self.inv.id, Path(form["path"].strip()).expanduser(), done=done, what="exporting")

    def action_verify(self) -> None:
        self.app.push_screen(FormScreen("Verify a bundle file", [Field("path", "Bundle", value=self.last_path)]), self._verify)

    def _verify(self, form: dict[str, str] | None) -> None:
        if not form or not form["path"].strip():
            return
        def done(result: tuple[bool, str]) -> None:
            ok, text = result
            t = Text().append("VALID" if ok else "MISMATCH", style="bold reverse")
            t.append("\n")
            t.append_text(block(text))
            self.query_one("#share-result", Static).update(t)

        self.wb.background(lambda _store, p: services.verify_bundle_text(p), Path(form["path"].strip()).expanduser(), done=done, what="verifying")
