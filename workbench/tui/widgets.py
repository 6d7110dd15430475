"""Small shared pieces: safe text, a form dialog, a choice dialog, the help screen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from workbench.textsafe import clean


def safe(value: Any, style: str = "") -> Text:
    """Untrusted text as a Rich ``Text``: markup is never parsed, control characters shown."""
    return Text(clean("unknown" if value is None else value), style=style)


def highlighted_id(options: OptionList) -> int | None:
    """The integer id of the highlighted option, or None when nothing is highlighted."""
    if options.highlighted is None or not options.option_count:
        return None
    return int(options.get_option_at_index(options.highlighted).id or 0)


def block(text: str) -> Text:
    """A multi-line report (already cleaned by its renderer) shown literally."""
    return Text(clean(text, single_line=False), no_wrap=True)


@dataclass(frozen=True)
class Field:
    name: str
    label: str
    value: str = ""
    placeholder: str = ""


class FormScreen(ModalScreen[dict[str, str] | None]):
    """A few text fields; Enter on the last one (or OK) submits, Escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, fields: list[Field], note: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.fields = fields
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(safe(self.title_text, "bold"))
            if self.note:
                yield Static(safe(self.note), classes="note")
            for f in self.fields:
                yield Label(safe(f.label))
                yield Input(value=f.value, placeholder=f.placeholder, id=f"field-{f.name}")
            yield Button("OK", variant="primary", id="ok")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        inputs = list(self.query(Input))
        if event.input is inputs[-1]:
            self._submit()
        else:
            inputs[inputs.index(event.input) + 1].focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self._submit()

    def _submit(self) -> None:
        self.dismiss({f.name: self.query_one(f"#field-{f.name}", Input).value for f in self.fields})

    def action_cancel(self) -> None:
        self.dismiss(None)


class ChoiceScreen(ModalScreen[str | None]):
    """Pick one of a few options (Enter), or Escape."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, choices: list[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(safe(self.title_text, "bold"))
            yield OptionList(*[Option(safe(label), id=key) for key, label in self.choices])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


HELP = """\
Keys (the footer shows those of the pane you are in)

  1-6        Frame, Compare, Inspect, Hypothesize, Verify, Share
  i          investigations: pick another, or n for a new one
  ctrl+p     command palette: every action by name
  ?          this help          q  quit
  tab        next list or field; arrows move; enter selects

Frame        n new investigation
Compare      f filter runs  space select a run  d declare the intended change
             c compare  a accept a refused dimension with a reason (recorded)
Inspect      r refresh  p pin the selected observation
Hypothesize  h new hypothesis  s set its status with evidence
             x retract an observation (the original is kept)
Verify       n new plan (bundled CPU workload)  r run  escape cancel after the
             current run (finished runs are kept)
Share        e export a bundle  v verify a bundle file

Strings from captures are shown literally: markup and control characters are
escaped. Observations are observations, not causes.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog help"):
            yield Static(Text(HELP))

    def action_close(self) -> None:
        self.dismiss(None)


class RunPicker(OptionList):
    """A list of runs with a visible [x] / [ ] mark (readable without colour); space toggles."""

    BINDINGS = [Binding("space", "toggle", "Select", show=False)]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.selected: set[int] = set()
        self._labels: dict[int, str] = {}

    def set_runs(self, runs: list[tuple[int, str]], selected: set[int]) -> None:
        self.selected = set(selected)
        self._labels = dict(runs)
        keep = self.highlighted
        self.clear_options()
        self.add_options([Option(self._prompt(run_id), id=str(run_id)) for run_id, _ in runs])
        if runs:
            self.highlighted = keep if keep is not None and keep < len(runs) else 0

    def _prompt(self, run_id: int) -> Text:
        mark = "[x]" if run_id in self.selected else "[ ]"
        return safe(f"{mark} {run_id:>4}  {self._labels.get(run_id, '')}")

    def action_toggle(self) -> None:
        run_id = highlighted_id(self)
        if run_id is None:
            return
        self.selected.symmetric_difference_update({run_id})
        self.replace_option_prompt_at_index(self.highlighted, self._prompt(run_id))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_toggle()
