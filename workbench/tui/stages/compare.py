"""Compare: pick baseline and candidate runs, see comparability first, then the delta.

Selections, the filter, the declared change, acceptances and the banner belong to the
investigation (``InvestigationState``); the report is the one ``wb compare`` prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input

from workbench.compare.run_sets import check_run_sets
from workbench.errors import UsageError
from workbench.investigations.views import ComparisonView, InvestigationView
from workbench.tui import declaring, offers, services
from workbench.tui.runlist import run_rows
from workbench.tui.stages import Stage
from workbench.tui.stages.frame import FrameStage
from workbench.tui.state import InvestigationState
from workbench.tui.widgets import (
    ChoiceScreen,
    Field,
    FormScreen,
    Line,
    Report,
    RunPicker,
    highlighted_id,
    one_line,
    required_fields,
    safe,
)

if TYPE_CHECKING:
    from store.api import RunSummary


class CompareStage(Stage):
    stage_id = "compare"
    BINDINGS = [
        Binding("c", "compare", "Compare"),
        Binding("a", "accept", "Accept"),
        Binding("m", "declare_missing", "Declare missing", show=False),  # the refusal banner names it
        Binding("d", "declare", "Change"),
        Binding("f", "filter", "Filter"),
        Binding("slash", "filter", "Filter", show=False),
        Binding("t", "plan_runs", "Plan runs", show=False),
        Binding("w", "sweeps", "Sweeps"),
    ]
    focus_target = "#baseline-list"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.runs: list[RunSummary] = []  # the runs of the shown investigation's lens
        self._runs_lens = ""
        self.plan_runs = False  # Verify's runs listed one by one (t), not folded under their plan
        # What a key just did (d, m, a), or why it did nothing, said on the line under the lists
        # (a toast would cover the report it explains): what was done, until the selection
        # changes; why nothing was, until a comparison starts.
        self._said: str | None = None
        self._said_done = False

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter runs by id or label (f)", id="run-filter", compact=True)
        with Horizontal(id="run-lists"):
            yield RunPicker(id="baseline-list")
            yield RunPicker(id="candidate-list")
            yield RunPicker(id="control-list")
        yield Line(id="run-detail", classes="detail")
        yield Line(id="compare-banner")
        with VerticalScroll(id="compare-scroll", can_focus=True, can_maximize=True):
            yield Report(id="compare-report")
            yield Report(id="compare-sparks")

    def on_mount(self) -> None:
        self.query_one("#baseline-list").border_title = "baseline (space selects)"
        self.query_one("#candidate-list").border_title = "candidate"
        self.query_one("#control-list").border_title = "A′ control"
        for picker in self.query(RunPicker):
            picker.moved = self._detail
        if self.state is None:
            self._fill_lists()  # no investigation yet: say what fills the lists
            self._draw()

    @property
    def state(self) -> InvestigationState | None:
        return self.wb.state

    # -- drawing ---------------------------------------------------------------

    def show(self, inv: InvestigationView | None) -> None:
        state = self.state
        if inv is None or state is None:
            self.runs = []
            self._fill_lists()
            self._draw()
            return
        filt = self.query_one("#run-filter", Input)
        with filt.prevent(Input.Changed):
            filt.value = state.filter
        if self._runs_lens != state.lens or not self.runs:  # none yet: some may have been imported since
            self.runs, self._runs_lens = self.wb.runs_cache.get(state.lens, []), state.lens
            lens = state.lens
            self.wb.background(
                services.runs, lens, done=lambda runs: self._got_runs(lens, runs), what="loading runs", group="runs"
            )
        self._fill_lists()
        self._draw()

    def _got_runs(self, lens: str, runs: list[RunSummary]) -> None:
        self.wb.runs_cache[lens] = runs
        if self.state is not None and self.state.lens == lens:
            self.runs = runs
            self._fill_lists()

    def _fill_lists(self) -> None:
        state = self.state
        # A filter (and folding a plan's runs) hides runs from view, never from the selection.
        rows = run_rows(self.runs, state.filter if state else "", plan_runs=self.plan_runs)
        shown = [(r.id, r.label) for r in self.runs]
        self.query_one("#baseline-list", RunPicker).set_runs(shown, state.baseline if state else set(), rows)
        self.query_one("#candidate-list", RunPicker).set_runs(shown, state.candidate if state else set(), rows)
        self.query_one("#control-list", RunPicker).set_runs(shown, state.control if state else set(), rows)
        self._detail()
        self._draw_sparks()

    def _detail(self, picker: Any = None) -> None:
        """The line under the lists: what is selected, and the highlighted run's full label."""
        picker = picker if isinstance(picker, RunPicker) else self.query_one("#baseline-list", RunPicker)
        state = self.state
        t = Text()
        if state is None:
            t.append("The lists show the runs of the open investigation's lens.")
        elif not self.runs and self._runs_lens in self.wb.runs_cache:
            t.append(f"No {state.lens} runs in this store: import captures (wb import FILE), then reopen it (i).")
        else:
            t.append(
                f"{len(state.baseline)} baseline, {len(state.candidate)} candidate, {len(state.control)} A′ selected"
            )
            if state.filter:
                t.append(f" (filter {state.filter!r} hides the rest)")
            run_id = highlighted_id(picker)
            if self._said:
                t.append(" · ")
                t.append_text(safe(self._said))
            elif run_id is not None and run_id >= 0:
                t.append(" · ")
                t.append_text(safe(f"{run_id}: {picker.label_of(run_id)}"))
        self.query_one("#run-detail", Line).show(t)

    def say(self, text: str, done: bool = False) -> None:
        """What a key did (``done``), or why it did nothing, on the line under the lists: never
        over the report."""
        self._said, self._said_done = text, done
        self._detail(self.app.focused if isinstance(self.app.focused, RunPicker) else None)

    def on_run_picker_toggled(self, event: RunPicker.Toggled) -> None:
        self._said = None
        self._detail(self.app.focused if isinstance(self.app.focused, RunPicker) else None)
        self._draw_sparks()

    def _draw(self) -> None:
        """The banner and report from the investigation's state."""
        state = self.state
        banner = self.query_one("#compare-banner", Line)
        report = self.query_one("#compare-report", Report)
        if state is None:
            banner.show(
                Text(
                    "No investigation open: runs are compared inside one.\n"
                    "Press i to pick one, or n to create one (in the picker, or in 1 Frame)."
                )
            )
            report.show("")
            return
        if state.banner == "comparing":
            banner.show(Text("comparing…", style="bold"))
        elif state.banner == "failed":
            line = Text().append(" FAILED ", style="bold reverse")
            line.append_text(safe(f" {state.error}"))
            line.append("\nNothing was stored. Pick other runs, or fix the cause and press c again.")
            banner.show(line)
        elif state.banner == "shown" and state.comparison is not None:
            banner.show(banner_text(state.comparison))
        elif state.banner == "sweep" and state.sweep is not None:
            line = Text().append(" SWEEPS ", style="bold reverse")
            line.append_text(safe(f" {state.sweep[0]} vs {state.sweep[1]}: level by level at matched load"))
            line.append("\nas wb compare SWEEP --vs SWEEP prints it; not stored (c compares the runs pooled)")
            banner.show(one_line(line))
        else:
            banner.show(Text("Select baseline and candidate runs (space), then press c."))
        if state.banner == "sweep":
            report.show(state.report or Text("comparing the sweeps level by level…"))
        if state.banner == "shown" and state.comparison is not None:
            if state.report is None:
                self._render_stored(state)
            else:
                report.show(state.report)
        elif state.banner == "select":
            report.show("")

    def _render_stored(self, state: InvestigationState) -> None:
        comp = state.comparison

        def rendered(text: str) -> None:
            if state.comparison is comp:
                state.report = text
                if state is self.state:
                    self.query_one("#compare-report", Report).show(text)

        self.query_one("#compare-report", Report).show(Text("drawing the report…"))
        self.wb.background(services.comparison_report, comp, done=rendered, what="drawing the report")

    def _draw_sparks(self) -> None:
        """A sparkline of each selected run's primary measure over time (read once a run, in a worker)."""
        state, box = self.state, self.query_one("#compare-sparks", Report)
        if state is None:
            box.show("")
            return
        lens_runs = {r.id for r in self.runs}
        rows = [
            (side, run_id)
            for side, ids in (("B", state.baseline), ("C", state.candidate), ("A", state.control))
            for run_id in sorted(ids & lens_runs)
        ]
        cache = self.wb.sparks_cache
        missing = sorted({run_id for _side, run_id in rows if run_id not in cache})
        if missing:
            self.wb.background(
                services.run_sparks,
                state.lens,
                missing,
                done=self._got_sparks,
                what="drawing the runs over time",
                group="sparks",
            )
        text = services.sparklines(
            state.lens, [(side, run_id, cache[run_id]) for side, run_id in rows if run_id in cache]
        )
        box.show("\n" + text if text else "")

    def _got_sparks(self, sparks: dict[int, services.RunSpark]) -> None:
        self.wb.sparks_cache.update(sparks)
        self._draw_sparks()

    # -- input -----------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "run-filter" and self.state is not None:
            self.state.filter = event.value
            self._fill_lists()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#baseline-list").focus()

    def on_key(self, event: Any) -> None:
        if event.key == "escape" and isinstance(self.app.focused, Input):
            event.stop()
            self.query_one("#baseline-list").focus()

    def on_descendant_focus(self, event: Any) -> None:
        if isinstance(event.widget, RunPicker):
            self._detail(event.widget)

    # -- actions ---------------------------------------------------------------

    def action_filter(self) -> None:
        self.query_one("#run-filter", Input).focus()

    def action_plan_runs(self) -> None:
        """Verify's runs one by one, or folded under their plan again (the selection stays).
        The lists say it themselves (folded rows, or the plan's runs): no toast over them."""
        self.plan_runs = not self.plan_runs
        self._fill_lists()

    def action_compare(self) -> None:
        if not self.needs_investigation() or self.state is None:
            return
        state = self.state
        if state.banner == "comparing":
            self.say("A comparison is already running")
            return
        base, cand, control = state.runs_to_compare({r.id for r in self.runs})
        if not base or not cand:
            self.say("Select at least one baseline and one candidate run (space), then c")
            return
        try:
            check_run_sets(base, cand, control)  # the rules of wb compare's run sets
        except UsageError as exc:
            self.say(exc.message)
            return
        if not self._said_done:
            self._said = None  # why an earlier c did nothing is stale now
        state.banner = "comparing"
        self._draw()
        self._detail()

        def compared(outcome: services.CompareOutcome) -> None:
            state.comparison, state.report, state.banner = outcome.comparison, outcome.text, "shown"
            self._redraw_if_current(state)
            self.wb.reload_investigation(state.inv_id)

        def failed(error: BaseException) -> None:
            state.banner = "failed"
            state.error = f"comparison failed: {getattr(error, 'message', None) or error or type(error).__name__}"
            self._redraw_if_current(state)

        self.wb.background(
            services.compare_and_store,
            state.inv_id,
            base,
            cand,
            dict(state.accepts),
            dict(state.changes),
            control,
            done=compared,
            on_error=failed,
            what="comparing",
        )

    def action_sweeps(self) -> None:
        """Two load sweeps (one run a load level) side by side at matched load: pick the
        baseline sweep, then the candidate; their runs are selected together."""
        if not self.needs_investigation() or self.state is None:
            return
        state = self.state
        if state.lens != "inference":
            self.say(f"Load sweeps are inference runs: this is a {state.lens} investigation")
            return
        self.wb.background(
            services.sweeps, done=lambda found: self._pick_sweeps(state, found), what="listing load sweeps"
        )

    def _pick_sweeps(self, state: InvestigationState, found: list[services.Sweep]) -> None:
        if len(found) < 2:
            self.say("A sweep comparison needs two load sweeps in the store (wb import their files: docs/importers.md)")
            return
        by_id = {s.id: s for s in found}

        def label(s: services.Sweep) -> str:
            return f"{s.name}  ({len(s.runs)} levels, runs {s.runs[0]}-{s.runs[-1]}, {s.id})"

        def candidate(base_id: str | None) -> None:
            if base_id is None:
                return
            others = [(s.id, label(s)) for s in found if s.id != base_id]
            self.app.push_screen(
                ChoiceScreen("Candidate sweep", others),
                lambda cand_id: cand_id is not None and self._compare_sweeps(state, by_id[base_id], by_id[cand_id]),
            )

        self.app.push_screen(ChoiceScreen("Baseline sweep", [(s.id, label(s)) for s in found]), candidate)

    def _compare_sweeps(self, state: InvestigationState, base: services.Sweep, cand: services.Sweep) -> None:
        state.baseline, state.candidate, state.control = set(base.runs), set(cand.runs), set()
        state.sweep = (base.name, cand.name)
        state.banner, state.report = "sweep", None
        self._fill_lists()
        for picker, first in (
            (self.query_one("#baseline-list", RunPicker), min(base.runs)),
            (self.query_one("#candidate-list", RunPicker), min(cand.runs)),
        ):
            index = picker.index_of(first)
            if index is not None:
                picker.highlighted = index  # the sweep's runs in view
        self._redraw_if_current(state)
        key = state.sweep

        def drawn(text: str) -> None:
            if state.sweep == key and state.banner == "sweep":
                state.report = text
                self._redraw_if_current(state)

        def failed(error: BaseException) -> None:
            if state.sweep == key:
                state.banner = "failed"
                state.error = (
                    f"sweep comparison failed: {getattr(error, 'message', None) or error or type(error).__name__}"
                )
                self._redraw_if_current(state)

        self.wb.background(
            services.sweep_report,
            base.runs,
            cand.runs,
            dict(state.changes),
            dict(state.accepts),
            done=drawn,
            on_error=failed,
            what="comparing the sweeps",
        )

    def _in_force(self, state: InvestigationState) -> None:
        """The declared change or the acceptances changed: Frame shows those in force."""
        if state is self.state:
            self.screen.query_one(FrameStage).show(self.inv)

    def _redraw_if_current(self, state: InvestigationState) -> None:
        if state is self.state:
            self._draw()

    def action_declare(self) -> None:
        """The intended change: from a refusal, its refused dimension with both values in
        full (editable); then compared again when a comparison is shown."""
        if not self.needs_investigation() or self.state is None:
            return
        state = self.state
        offer = offers.change_offer(state.comparison if state.banner == "shown" else None, state.changes)
        example = offers.words(state.lens).change
        self.app.push_screen(
            FormScreen(
                "Declare the intended change",
                [
                    Field("dimension", "Dimension", offer.dimension if offer else "", placeholder=example[0]),
                    Field("from", "From (baseline value)", offer.before if offer else "", placeholder=example[1]),
                    Field("to", "To (candidate value)", offer.after if offer else "", placeholder=example[2]),
                ],
                note="A declared change that did not happen is reported; an undeclared difference is 'different'.",
                check=required_fields(("dimension", "The dimension")),
            ),
            lambda form: self._declared(state, form),
        )

    def _declared(self, state: InvestigationState, form: dict[str, str] | None) -> None:
        if not form or not form["dimension"].strip():
            return
        name = form["dimension"].strip()
        state.changes = {name: [form["from"].strip() or None, form["to"].strip() or None]}
        self._in_force(state)
        if state is not self.state:
            return
        compare = state.banner in ("shown", "failed")  # a comparison is shown: compared again with it
        self.say(f"✓ intended change: {name}" + ("" if compare else " (the next compare, c, uses it)"), done=True)
        if compare:
            self.action_compare()

    def action_declare_missing(self) -> None:
        """Declare what the refusal says the files do not carry: the way out's own ``wb
        declare`` lines as a dialog, one field a value, then compare again."""
        if not self.needs_investigation() or self.state is None:
            return
        state = self.state
        comp = state.comparison if state.banner == "shown" else None
        if comp is None or comp.comparison().comparable:
            self.say("Nothing is missing: m declares what a refused comparison's files do not say (c compares)")
            return
        self.wb.background(
            services.missing_declarations,
            comp,
            done=lambda proposals: self._ask_missing(state, proposals),
            what="reading what the refusal misses",
        )

    def _ask_missing(self, state: InvestigationState, proposals: tuple[services.Declarable, ...]) -> None:
        if not proposals:
            self.say(
                "The refusal misses nothing a declaration can say: d declares the change under test, "
                "a accepts a difference with a reason"
            )
            return
        fields = [
            Field(
                declaring.field_name(i, name),
                f"{name} (runs {', '.join(map(str, p.runs))})",
                value="" if value == services.PLACEHOLDER else value,
                placeholder="the value: the files do not say it",
            )
            for i, p in enumerate(proposals)
            for name, value in p.values.items()
        ]
        fields.append(Field("why", "Why is it so? (kept in each run's history: wb show RUN)"))

        def check(form: dict[str, str]) -> tuple[str, str] | None:
            empty = declaring.fields_missing(proposals, form)
            if empty is not None:
                return empty, "every value must be said (the files do not say it; a accepts it unknown instead)"
            return ("why", "a declaration needs its reason") if not form["why"].strip() else None

        def declared(said: list[str]) -> None:
            self.say("✓ declared " + "; ".join(said) + " (wb show RUN has the history)", done=True)
            if state is self.state:
                self.action_compare()

        def submitted(form: dict[str, str] | None) -> None:
            if form:
                self.wb.background(
                    services.declare_missing, proposals, form, form["why"], done=declared, what="declaring"
                )

        self.app.push_screen(
            FormScreen(
                "Declare what the files do not say",
                fields,
                check=check,
                note="As wb declare records it: checked against the data, kept in each run's "
                "history; then compared again.",
            ),
            submitted,
        )

    def action_accept(self) -> None:
        """Accept what still refuses the comparison (never the declared change), with one reason."""
        if not self.needs_investigation() or self.state is None:
            return
        state = self.state
        offered = offers.accept_offer(state.comparison if state.banner == "shown" else None, state.changes)
        self.app.push_screen(
            FormScreen(
                "Accept refused dimensions",
                [
                    Field(
                        "dimension",
                        "Dimensions (comma separated)",
                        ", ".join(offered),
                        placeholder=offers.words(state.lens).accept,
                    ),
                    Field("why", "Why is this pair still worth comparing? (recorded for each dimension)"),
                ],
                note="An acceptance overrides a refusal (declaring a missing value, wb declare, resolves it instead); "
                "it travels in the bundle.",
                check=required_fields(("dimension", "The dimensions"), ("why", "The reason")),
            ),
            lambda form: self._accepted(state, form),
        )

    def _accepted(self, state: InvestigationState, form: dict[str, str] | None) -> None:
        if not form:
            return
        names = [n.strip() for n in form["dimension"].split(",") if n.strip()]
        for name in names:
            state.accepts[name] = form["why"].strip()
        self._in_force(state)
        if state is self.state:
            self.say(f"✓ accepted {', '.join(names)}", done=True)
            self.action_compare()


def banner_text(comp: ComparisonView) -> Text:
    """Two lines that agree with the report: REFUSED with the reason, or the verdict, with
    every acceptance named (the report shows the reasons under their rows); then the
    comparison's id, which hypotheses cite as evidence."""
    result = comp.comparison()
    cite = f"comparison {comp.id} · "
    if not result.comparable:
        line = Text().append(" REFUSED ", style="bold reverse")
        line.append_text(safe(f" {result.refusal.reason if result.refusal else 'not comparable'}"))
        line.append(f"\n{cite}to go on: m makes its wb declare · d change · a accept (the report's end)")
        return one_line(line)
    primary = result.primary
    line = Text().append(" COMPARABLE ", style="bold reverse")
    line.append(f" {result.verdict}" if result.verdict else " no verdict", style="bold")
    line.append_text(
        safe(f"  {(primary.title or primary.metric) if primary else ''}: {primary.text if primary else ''}")
    )
    accepted = [a.dimension for a in result.accepted]
    line.append(f"\n{cite}")
    if accepted:
        line.append_text(safe(f"accepted with a recorded reason: {', '.join(accepted)} (see the report)"))
    else:
        line.append(f"cite it as evidence: comparison={comp.id}")
    return one_line(line)
