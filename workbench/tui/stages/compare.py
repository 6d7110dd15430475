"""Compare: pick baseline and candidate runs, see comparability first, then the delta."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, Static

from workbench.tui.stages import Stage
from workbench.tui.widgets import Field, FormScreen, RunPicker, block, safe


class CompareStage(Stage):
    stage_id = "compare"
    BINDINGS = [
        Binding("c", "compare", "Compare"),
        Binding("a", "accept", "Accept"),
        Binding("d", "declare", "Change"),
        Binding("f", "filter", "Filter"),
    ]
    focus_target = "#baseline-list"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.runs: list[Any] = []  # RunSummary of the investigation's lens
        self.accepts: dict[str, str] = {}
        self.changes: dict[str, list[Any]] = {}  # the intended change, {dim: [from, to]}
        self.last: dict[str, Any] | None = None  # the last comparison's stored view

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter runs by id or label (f)", id="run-filter")
        with Horizontal(id="run-lists"):
            yield RunPicker(id="baseline-list")
            yield RunPicker(id="candidate-list")
        yield Static(id="compare-banner")
        with VerticalScroll(id="compare-scroll", can_focus=True):
            yield Static(id="compare-report")

    def on_mount(self) -> None:
        self.query_one("#baseline-list").border_title = "baseline (space selects)"
        self.query_one("#candidate-list").border_title = "candidate"

    # -- drawing ---------------------------------------------------------------

    def show(self, inv: dict[str, Any] | None) -> None:
        self.accepts = {}
        self.changes = dict((inv or {}).get("intended_change") or {})
        if inv is None:
            self.runs = []
            self._fill_lists()
            return
        from workbench.tui import services

        self.wb.background(services.runs, inv["lens"], done=self._got_runs, what="loading runs")
        comp = services.latest_comparison(inv)
        if comp is not None:
            self.last = comp
            self.accepts = dict((comp.get("parameters") or {}).get("accepts") or {})
            self.changes = dict((comp.get("parameters") or {}).get("changes") or self.changes)
            self._draw_result(comp, None)
        else:
            self.last = None
            self.query_one("#compare-banner", Static).update(Text("Select baseline and candidate runs, then press c."))
            self.query_one("#compare-report", Static).update("")

    def _got_runs(self, runs: list[Any]) -> None:
        self.runs = runs
        self._fill_lists()

    def _selected(self) -> tuple[set[int], set[int]]:
        return self.query_one("#baseline-list", RunPicker).selected, self.query_one("#candidate-list", RunPicker).selected

    def _fill_lists(self) -> None:
        inv = self.inv or {}
        base_sel, cand_sel = self._selected()
        base_sel = base_sel or set(inv.get("baseline_runs") or [])
        cand_sel = cand_sel or set(inv.get("candidate_runs") or [])
        needle = self.query_one("#run-filter", Input).value.strip().lower()
        # A filter hides runs from view, never from the selection.
        shown = [(r.id, r.label) for r in self.runs if not needle or needle in f"{r.id} {r.label}".lower()]
        self.query_one("#baseline-list", RunPicker).set_runs(shown, base_sel)
        self.query_one("#candidate-list", RunPicker).set_runs(shown, cand_sel)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "run-filter":
            self._fill_lists()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#baseline-list").focus()

    def on_key(self, event: Any) -> None:
        if event.key == "escape" and isinstance(self.app.focused, Input):
            event.stop()
            self.query_one("#baseline-list").focus()

    def _draw_result(self, comp: dict[str, Any], text: str | None) -> None:
        result = comp.get("result") or {}
        banner = self.query_one("#compare-banner", Static)
        if not result.get("comparable", comp.get("comparable")):
            refusal = result.get("refusal") or {}
            line = Text("REFUSED ", style="bold reverse")
            line.append_text(safe(f" {refusal.get('reason', 'not comparable')}"))
            line.append("\nPress a to accept this dimension with a recorded reason, or pick other runs.", style="dim")
            banner.update(line)
        else:
            primary = result.get("primary") or {}
            line = Text("COMPARABLE ", style="bold")
            effect = (primary.get("effect") or {}).get("verdict")
            line.append_text(safe(f" {primary.get('metric', '')}: {primary.get('text') or ''}"))
            if effect:
                line.append(f"  [{effect}]", style="bold")
            banner.update(line)
        if text is None:  # a comparison loaded from the store: drawn from its JSON
            text = _json_report(comp)
        self.query_one("#compare-report", Static).update(block(text))

    # -- actions ---------------------------------------------------------------

    def action_filter(self) -> None:
        self.query_one("#run-filter", Input).focus()

    def action_compare(self) -> None:
        if not self.needs_investigation():
            return
        base, cand = self._selected()
        if not base or not cand:
            self.wb.notify("Select at least one baseline and one candidate run (space)", severity="warning")
            return
        from workbench.tui import services

        self.query_one("#compare-banner", Static).update(Text("comparing…"))
        self.wb.background(services.compare_and_store, self.inv["id"], sorted(set(base)), sorted(set(cand)), dict(self.accepts),
                           dict(self.changes), done=self._compared, what="comparing")

    def _compared(self, outcome: Any) -> None:
        self.last = outcome.comparison
        self._draw_result(outcome.comparison, outcome.text)
        self.wb.reload_investigation()

    def action_declare(self) -> None:
        if not self.needs_investigation():
            return
        dim, values = next(iter(self.changes.items()), ("", ["", ""]))
        self.app.push_screen(
            FormScreen("Declare the intended change", [
                Field("dimension", "Dimension", value=str(dim), placeholder="engine_revision"),
                Field("from", "From (baseline value)", value=str(values[0] if values else "")),
                Field("to", "To (candidate value)", value=str(values[1] if len(values) > 1 else "")),
            ], note="A declared change that did not happen is reported; an undeclared difference is 'different'."),
            self._declared,
        )

    def _declared(self, form: dict[str, str] | None) -> None:
        if not form or not form["dimension"].strip():
            return
        self.changes = {form["dimension"].strip(): [form["from"].strip() or None, form["to"].strip() or None]}
        self.wb.notify(f"Intended change: {form['dimension'].strip()} (used by the next compare, c)", markup=False)

    def action_accept(self) -> None:
        if not self.needs_investigation():
            return
        refusal = ((self.last or {}).get("result") or {}).get("refusal") if self.last else None
        dim = (refusal or {}).get("dimension", "")
        self.app.push_screen(
            FormScreen("Accept a refused dimension", [
                Field("dimension", "Dimension", value=str(dim)),
                Field("why", "Why is this pair still worth comparing? (recorded with the comparison)"),
            ], note="An acceptance is the only override of a refusal; it travels in the bundle."),
            self._accepted,
        )

    def _accepted(self, form: dict[str, str] | None) -> None:
        if not form or not form["dimension"].strip():
            return
        if not form["why"].strip():
            self.wb.notify("An acceptance needs a reason", severity="warning")
            return
        self.accepts[form["dimension"].strip()] = form["why"].strip()
        self.action_compare()


def _json_report(comp: dict[str, Any]) -> str:
    """A stored comparison (JSON) as text, for comparisons loaded from the store."""
    from workbench.textsafe import clean

    result = comp.get("result") or {}
    def v(value: Any, width: int = 20) -> str:
        text = "unknown" if value is None else clean(value)
        return text if len(text) <= width else text[: width - 1] + "~"

    lines = [f"comparison {comp.get('id')}  baseline {comp.get('baseline_runs')}  candidate {comp.get('candidate_runs')}", ""]
    lines.append("Comparability (non-same first)")
    dims = sorted(result.get("dimensions") or [], key=lambda d: d.get("state") == "same")
    for d in dims:
        lines.append(f"  {v(d.get('name')):<20} {v(d.get('state'), 9):<9} {v(d.get('baseline')):<20} {v(d.get('candidate'))}")
    primary = result.get("primary")
    if primary:
        lines += ["", f"{clean(primary.get('metric'))}: {clean(primary.get('text') or '')}"]
    for ph in result.get("phases") or []:
        effect = (ph.get("effect") or {}).get("verdict") or ""
        lines.append(f"  {v(ph.get('name'), 16):<16} mean {_num(ph.get('baseline_mean'))} -> {_num(ph.get('candidate_mean'))}"
                     f"   p95 {_num(ph.get('baseline_p95'))} -> {_num(ph.get('candidate_p95'))}  {effect}")
    obs = result.get("observations") or []
    if obs:
        lines += ["", "Observations (observation, not cause)"]
        lines += [f"  - {clean(o.get('text'))}" for o in obs]
    for g in result.get("guardrails") or []:
        lines.append(f"guardrail {clean(g.get('name'))}: {clean(g.get('state'))}")
    return "\n".join(lines)


def _num(value: Any) -> str:
    return "unknown" if not isinstance(value, (int, float)) else f"{value:.4g}"
