"""Share: export an evidence bundle, verify a bundle file offline, and write its report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from workbench.numbers import size
from workbench.investigations.views import InvestigationView
from workbench.textsafe import clean
from workbench.tui import services
from workbench.tui.stages import Stage
from workbench.tui.widgets import Field, FormScreen, Report, safe

# Sentences without line breaks of their own: the pane wraps them at its width.
INTRO = (
    "An evidence bundle is JSON: the frame, the recipe and results with their SHA-256, the captures' "
    "provenance, observations and hypotheses, and a checksum over its RFC 8785 canonical form. "
    "Bundles are unsigned: a valid bundle was not changed since export; it does not prove who "
    "made it, nor that the result is right.\n\n"
    "e  export this investigation    v  verify a bundle file    r  write its report"
)


def wrapping(report: str) -> Text:
    """A verifier's report, wrapped at the pane's width (a long path or digest folds, never cut)."""
    return Text(clean(report, single_line=False), overflow="fold")


YES = ("y", "yes", "true", "1", "on")
NO = ("n", "no", "false", "0", "off")


def _export_check(form: dict[str, str]) -> tuple[str, str] | None:
    if not form["path"].strip():
        return "path", "the path to write to must not be empty"
    if form["embed"].strip().lower() not in YES + NO:
        return "embed", "embed samples: answer yes or no"
    return None


class ShareStage(Stage):
    stage_id = "share"
    can_focus = True  # the pane scrolls itself: one container less to lay out and paint on a switch
    BINDINGS = [
        Binding("e", "export", "Export bundle"),
        Binding("v", "verify", "Verify bundle"),
        Binding("r", "report", "Write report"),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.last_path: str = ""

    def compose(self) -> ComposeResult:
        yield Static(Text(INTRO), id="share-intro")
        yield Report(id="share-result")  # wrapped under each line's own indent, a digest folded there

    def show(self, inv: InvestigationView | None) -> None:
        pass

    def say(self, text: str) -> None:
        """Why a key did nothing: where the pane shows what its keys did."""
        self.query_one("#share-result", Report).show(Text(text, style="bold"))

    def action_export(self) -> None:
        if self.inv is None:
            self.say("Pick an investigation first (i)")
            return
        inv_id = self.inv.id
        self.wb.background(
            services.bundle_sizes,
            inv_id,
            done=lambda sizes: self._export_dialog(inv_id, sizes),
            what="measuring the bundle",
        )

    def _export_dialog(self, inv_id: int, sizes: services.BundleSizes) -> None:
        default = self.last_path or str(services.default_bundle_path(inv_id))
        note = (
            f"With the samples embedded the bundle is {size(sizes.with_samples)} "
            f"({size(sizes.without_samples)} without): anyone can then re-derive its results with "
            "wb evidence verify --recompute. Proposed: wb's data directory; type another path "
            "(e.g. ./bundle.json for the working directory) to write elsewhere."
        )
        self.app.push_screen(
            FormScreen(
                "Export evidence bundle",
                [
                    Field("path", "Write to", value=default),
                    Field("embed", "Embed samples (yes/no)", value="yes" if sizes.embed_by_default else "no"),
                ],
                note=note,
                check=_export_check,
            ),
            lambda form: self._export(inv_id, form),
        )

    def _export(self, inv_id: int, form: dict[str, str] | None) -> None:
        if not form:
            return
        path = Path(form["path"].strip()).expanduser().absolute()

        def done(result: services.ExportResult) -> None:
            self.last_path = str(result.path)
            t = Text().append("Exported ", style="bold")
            t.append_text(safe(result.path))
            t.append(f"\nchecksum sha256:{result.checksum}\n")
            t.append(
                "samples embedded" if result.embedded else "samples not embedded (--recompute cannot re-derive it)"
            )
            t.append(
                f"\n\nRecheck of the written file (wb evidence verify{' --recompute' if result.embedded else ''}): "
            )
            t.append("VALID" if result.valid else "MISMATCH", style="bold reverse")
            t.append("\n")
            t.append_text(wrapping(result.report))
            self.query_one("#share-result", Report).show(t)

        embed = form["embed"].strip().lower() in YES
        self.query_one("#share-result", Report).show(  # Enter's effect, at once: the recheck takes a while
            Text("Exporting to ").append_text(safe(path)).append(" and rechecking the written file…")
        )
        self.wb.background(services.export_bundle, inv_id, path, embed, done=done, what="exporting and rechecking")

    def action_verify(self) -> None:
        self.app.push_screen(
            FormScreen("Verify a bundle file", [Field("path", "Bundle", value=self.last_path)]), self._verify
        )

    def _verify(self, form: dict[str, str] | None) -> None:
        if not form or not form["path"].strip():
            return

        def done(result: tuple[bool, str]) -> None:
            ok, text = result
            t = Text().append("VALID" if ok else "MISMATCH", style="bold reverse")
            t.append("\n")
            t.append_text(wrapping(text))
            self.query_one("#share-result", Report).show(t)

        verifying = Text("Verifying ").append_text(safe(form["path"].strip())).append("…")
        self.query_one("#share-result", Report).show(verifying)
        self.wb.background(
            lambda _wb, p: services.verify_bundle_text(p),
            Path(form["path"].strip()).expanduser(),
            done=done,
            what="verifying",
        )

    def action_report(self) -> None:
        """The report (HTML page and Markdown summary) of a bundle, written beside it: the last
        exported or verified one, or the one named in the dialog."""
        self.app.push_screen(
            FormScreen(
                "Write the report of a bundle",
                [Field("path", "Bundle", value=self.last_path)],
                note="The bundle is verified first (with --recompute when it embeds samples); a bundle that does "
                "not verify is not reported. The page (.report.html) and the ticket summary (.report.md) are "
                "written beside it.",
            ),
            self._report,
        )

    def _report(self, form: dict[str, str] | None) -> None:
        if not form or not form["path"].strip():
            return
        bundle = Path(form["path"].strip()).expanduser().absolute()
        result = self.query_one("#share-result", Report)
        result.show(Text("Verifying the bundle and writing its report…"))

        def done(written: services.ReportWritten) -> None:
            self.last_path = str(bundle)
            t = Text().append("Report written", style="bold")
            t.append("\npage:    ")
            t.append_text(safe(written.html))
            t.append("\nsummary: ")
            t.append_text(safe(written.markdown))
            t.append("\n\n")
            t.append_text(wrapping(written.statement))
            result.show(t)

        def failed(exc: BaseException) -> None:
            t = Text().append("No report written", style="bold reverse")
            t.append("\n")
            t.append_text(wrapping(getattr(exc, "message", None) or str(exc)))
            result.show(t)

        self.wb.background(services.report_beside, bundle, done=done, on_error=failed, what="writing the report")
