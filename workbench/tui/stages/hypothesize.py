"""Hypothesize: observations and hypotheses in two lists that never mix."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from workbench.investigations.evidence_text import evidence_text
from workbench.investigations.hypotheses import TEST_KINDS
from workbench.investigations.views import HypothesisView, InvestigationView, ObservationView
from workbench.tui import actions_pane, offers, services
from workbench.tui.fit import wrap_lines
from workbench.tui.stages import Stage
from workbench.tui.widgets import (
    ChoiceScreen,
    Field,
    FormScreen,
    PaneList,
    fill_options,
    highlighted_id,
    one_line,
    required_fields,
    safe,
)

DETAIL_LINES = 6  # the lines under the lists for the highlighted item (#hyp-detail's max-height)
STATUSES = (
    ("supported", "supported: the deciding test supports it"),
    ("refuted", "refuted: the test contradicts it"),
    ("undetermined", "undetermined: the test could not decide"),
    ("open", "open: not tested yet"),
)


class HypothesizeStage(Stage):
    stage_id = "hypothesize"
    focus_target = "#observations"
    BINDINGS = [
        Binding("h", "hypothesis", "New hypothesis"),
        Binding("s", "status", "Set status"),
        Binding("x", "retract", "Retract obs."),
    ]

    actions: list = []  # the open investigation's actions (those citing a hypothesis show in its detail)

    def compose(self) -> ComposeResult:
        yield Label("Observations — facts with evidence (observation, not cause)", classes="section")
        yield PaneList(id="observations")
        yield Label("Hypotheses — claims to test, with the test that decides them", classes="section")
        yield PaneList(id="hypotheses")
        yield Static(id="hyp-detail")

    def show(self, inv: InvestigationView | None) -> None:
        obs_list = self.query_one("#observations", OptionList)
        hyp_list = self.query_one("#hypotheses", OptionList)
        if inv is None:
            obs_list.clear_options()
            hyp_list.clear_options()
            return
        observations, hypotheses = [], []
        for o in inv.observations:
            if o.kind == "retraction":
                label = safe(f"{o.id:>3}  {o.text}", "italic")
            elif o.retracted_by:
                label = safe(f"{o.id:>3}  (retracted) {o.text}", "strike")
            else:
                label = safe(f"{o.id:>3}  {o.text}")
            observations.append(Option(one_line(label), id=str(o.id)))
        for h in inv.hypotheses:
            label = Text(f"{h.id:>3}  ")
            label.append(f"[{h.status.upper()}] ", style="bold")
            label.append_text(safe(h.statement))
            hypotheses.append(Option(one_line(label), id=str(h.id)))
        fill_options(obs_list, observations, obs_list.highlighted)
        fill_options(hyp_list, hypotheses, hyp_list.highlighted)
        self._detail()
        self.wb.background(
            actions_pane.actions_of, inv.id, done=self._got_actions, what="loading actions", group="hyp-actions"
        )

    def _got_actions(self, actions: list) -> None:
        self.actions = actions
        self._detail()

    def on_mount(self) -> None:
        for options in self.query(PaneList):
            options.moved = self._detail

    def on_descendant_focus(self, event: Any) -> None:
        self._detail()

    def _detail(self, _moved: Any = None) -> None:
        """The text of what is highlighted in the focused list (labels there end in an ellipsis),
        in the lines the pane keeps for it; cut, its last line ends in "…" and v shows it whole."""
        text = self._detail_text()
        detail = self.query_one("#hyp-detail", Static)
        width = detail.content_region.width
        if width <= 0:
            detail.update(text)
            return
        lines = list(wrap_lines(text, width).split("\n"))
        if len(lines) > DETAIL_LINES:
            lines = lines[:DETAIL_LINES]
            last = lines[-1]
            last.truncate(max(width - 2, 0))
            last.rstrip()
            last.append(" …  (v: in full)" if cell_len(last.plain) + 16 <= width else "…")
        detail.update(Text("\n").join(lines))

    def on_resize(self, event: Any) -> None:
        self._detail()

    def say(self, text: str) -> None:
        """Why a key did nothing: in the lines under the lists, until the highlight moves."""
        self.query_one("#hyp-detail", Static).update(Text(text, style="bold"))

    def detail(self) -> tuple[str, Text] | None:
        """``v``: the highlighted observation or hypothesis, whole."""
        text = self._detail_text()
        if not text.plain:
            return None
        if self.app.focused is self.query_one("#observations", OptionList):
            o = self._selected_observation()
            return (f"Observation {o.id}" if o else "Observation"), text  # its text, then its evidence
        h = self._selected_hypothesis()
        return (f"Hypothesis {h.id}" if h else "Hypothesis"), safe(h.statement if h else "").append("\n") + text

    def _detail_text(self) -> Text:
        if self.app.focused is self.query_one("#observations", OptionList):
            o = self._selected_observation()
            if o is not None:
                t = safe(o.text)
                evidence = o.evidence
                if evidence:
                    t.append("\nevidence: ", style="bold")
                    t.append_text(safe(evidence_text(evidence, limit=2000)))
                return t
        h = self._selected_hypothesis()
        if h is None:
            return Text()
        t = Text().append("test: ", style="bold")
        t.append_text(safe(h.test))
        last = h.history[-1] if h.history else None
        if last is not None and (last.note or last.evidence):
            t.append("\ndecided by: ", style="bold")
            t.append_text(
                safe(
                    "; ".join(
                        p
                        for p in (evidence_text(last.evidence, limit=2000) if last.evidence else "", last.note or "")
                        if p
                    )
                )
            )
        t.append_text(actions_pane.citing_text(self.actions, h.id))
        return t

    def _selected_hypothesis(self) -> HypothesisView | None:
        hid = highlighted_id(self.query_one("#hypotheses", OptionList))
        if self.inv is None or hid is None:
            return None
        return next((h for h in self.inv.hypotheses if h.id == hid), None)

    def _selected_observation(self) -> ObservationView | None:
        oid = highlighted_id(self.query_one("#observations", OptionList))
        if self.inv is None or oid is None:
            return None
        return next((o for o in self.inv.observations if o.id == oid), None)

    def action_hypothesis(self) -> None:
        if not self.needs_investigation() or self.inv is None:
            return
        example = offers.words(self.inv.lens)  # an inference investigation is shown an inference example
        self.app.push_screen(
            FormScreen(
                "New hypothesis",
                [
                    Field("statement", "Statement (falsifiable)", placeholder=example.hypothesis),
                    Field("test", "The test that would decide it", placeholder=example.test),
                    Field("test_kind", f"Its kind ({' | '.join(TEST_KINDS)})", value="rerun"),
                ],
                note="A hypothesis is a claim to test, never an observation. Only evidence of its test's kind, "
                "recorded after it, decides it.",
                check=_hypothesis_check,
            ),
            self._add,
        )

    def _add(self, form: dict[str, str] | None) -> None:
        if not form:
            return
        self.wb.background(
            services.add_hypothesis,
            self.inv.id,
            form["statement"],
            form["test"],
            form["test_kind"].strip(),
            done=lambda _h: self.wb.reload_investigation(),
            what="adding the hypothesis",
        )

    def action_status(self) -> None:
        if not self.needs_investigation():
            return
        h = self._selected_hypothesis()
        if h is None:
            self.say("Select a hypothesis first (tab to the list; h writes one)")
            return

        def chosen(status: str | None) -> None:
            if status is None:
                return
            self.app.push_screen(
                FormScreen(
                    f"Hypothesis {h.id}: {status}",
                    [
                        Field("evidence", "Evidence that decided it (e.g. rerun_plan=3, comparison=2)"),
                        Field("note", "Note"),
                    ],
                    check=lambda form: services.check_evidence(form["evidence"]),
                ),
                lambda form: self._set(h.id, status, form),
            )

        self.app.push_screen(ChoiceScreen(f"Status of hypothesis {h.id}", list(STATUSES)), chosen)

    def _set(self, hid: int, status: str, form: dict[str, str] | None) -> None:
        if form is None:
            return
        evidence = [e.strip() for e in form["evidence"].split(",") if e.strip()]
        self.wb.background(
            services.set_status,
            hid,
            status,
            evidence,
            form["note"],
            done=lambda _h: self.wb.reload_investigation(),
            what="setting the status",
        )

    def action_retract(self) -> None:
        if not self.needs_investigation():
            return
        o = self._selected_observation()
        if o is None or o.kind != "observation":
            self.say("Select an observation first (3 Inspect pins them)")
            return
        self.app.push_screen(
            FormScreen(
                f"Retract observation {o.id}", [Field("reason", "Why (the original is kept beside the retraction)")]
            ),
            lambda form: self._retract(o.id, form),
        )

    def _retract(self, oid: int, form: dict[str, str] | None) -> None:
        if not form or not form["reason"].strip():
            return
        self.wb.background(
            services.retract, oid, form["reason"], done=lambda _o: self.wb.reload_investigation(), what="retracting"
        )


_REQUIRED = required_fields(("statement", "The statement"), ("test", "The test that would decide it"))


def _hypothesis_check(form: dict[str, str]) -> tuple[str, str] | None:
    """Statement and test required; the test's kind one of the kinds evidence comes in."""
    if (missing := _REQUIRED(form)) is not None:
        return missing
    if form.get("test_kind", "").strip() not in TEST_KINDS:
        return "test_kind", f"The kind must be one of {', '.join(TEST_KINDS)}"
    return None
