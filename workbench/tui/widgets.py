"""Small shared pieces: safe text, one-line labels, dialogs, the help screen, the footer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.geometry import Size
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.style import Style as VisualStyle
from textual.widget import Widget
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from workbench.textsafe import clean
from workbench.tui.fit import ELLIPSIS, elide_middle, wrap_lines
from workbench.tui.runlist import Row


def safe(value: Any, style: str = "") -> Text:
    """Untrusted text as a Rich ``Text``: markup is never parsed, control characters shown."""
    return Text(clean("unknown" if value is None else value), style=style)


def one_line(text: Text) -> Text:
    """A label kept to one line: too long, it ends in an ellipsis (the full text is shown elsewhere)."""
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text


def highlighted_id(options: OptionList) -> int | None:
    """The integer id of the highlighted option, or None when nothing is highlighted."""
    if options.highlighted is None or not options.option_count:
        return None
    return int(options.get_option_at_index(options.highlighted).id or 0)


def fill_options(options: OptionList, items: list[Option], keep: int | None = None) -> None:
    """Replace a list's options; the highlight stays where it was, else on the first item."""
    options.clear_options()
    options.add_options(items)
    if items:
        options.highlighted = keep if keep is not None and keep < len(items) else 0


def block(text: str) -> Text:
    """A multi-line report (already cleaned by its renderer) shown literally."""
    return Text(clean(text, single_line=False), no_wrap=True, overflow="ellipsis")


@dataclass(frozen=True)
class Field:
    name: str
    label: str
    value: str = ""
    placeholder: str = ""


class Dialog(ModalScreen[Any]):
    """A bordered dialog whose body scrolls and whose buttons always stay in view."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title

    def on_mount(self) -> None:
        box = self.query_one(".dialog")
        box.border_title = clean(self.title_text)

    def action_cancel(self) -> None:
        self.dismiss(None)


class FormScreen(Dialog):
    """A few text fields; Enter on the last one (or OK) submits, Escape cancels.

    ``check(form)`` returns the reason a form cannot be taken, or None: the dialog then
    stays open with the reason shown, every field as typed, and the cursor on the field
    at fault when the check names it (``(field name, reason)``).

    Keys typed before the dialog is mounted (a fast typist, a paste) would reach the pane
    behind it: the app holds them for the dialog (``WorkbenchApp.on_event``), which replays
    them into its fields, in order, when it mounts (``replay``)."""

    def __init__(
        self,
        title: str,
        fields: list[Field],
        note: str = "",
        check: Callable[[dict[str, str]], str | tuple[str, str] | None] | None = None,
    ) -> None:
        super().__init__(title)
        self.fields = fields
        self.note = note
        self.check = check
        self.early_keys: list[events.Key] = []
        self.mounted = False
        self.opened_by: int | None = None  # the app's number of the key that opened it
        self._cursor: int | None = None  # the field replayed keys go to, until its focus lands

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            with VerticalScroll(classes="dialog-body", can_focus=False):
                if self.note:
                    yield Static(safe(self.note), classes="note")
                for f in self.fields:
                    yield Label(safe(f.label), classes="field-label")
                    field = Input(value=f.value, placeholder=f.placeholder, id=f"field-{f.name}", compact=True)
                    field.cursor_blink = self.app.animation_level != "none"  # no animation: a steady cursor
                    yield field
                yield Static(id="form-error", classes="error")
            with Horizontal(classes="buttons"):
                yield Button("OK", variant="primary", id="ok", compact=True)
                yield Button("Cancel", id="cancel", compact=True)

    def on_mount(self) -> None:
        super().on_mount()
        chain = self._chain()
        # The first empty field takes the cursor (a prefilled dimension needs only its reason).
        first = next((w for w in chain if isinstance(w, Input) and not w.value), chain[0])
        self.mounted = True
        keys, self.early_keys = self.early_keys, []
        keys.sort(key=lambda k: getattr(k, "_wb_seq", 0))  # as typed, whichever path each took
        self.replay(chain, chain.index(first), keys)

    def _chain(self) -> list[Widget]:
        """What Tab moves through, in order: the fields, then OK and Cancel."""
        return [*self.query(Input), *self.query(Button)]

    def take_key(self, key: events.Key) -> None:
        """A key typed for this dialog that reached the app on another path (WorkbenchApp.on_event)."""
        if not self.mounted:
            self.early_keys.append(key)
            return
        chain = self._chain()
        focused = self.app.focused
        at = self._cursor if self._cursor is not None else (chain.index(focused) if focused in chain else 0)
        self.replay(chain, at, [key])

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        chain = self._chain()
        if self._cursor is not None and self._cursor < len(chain) and event.widget is chain[self._cursor]:
            self._cursor = None  # the focus asked for by a replay has landed: the app's focus is true again

    def replay(self, chain: list[Widget], at: int, keys: list[events.Key]) -> None:
        """Apply keys typed before the dialog could take them, as its fields and buttons would have:
        Tab moves through the fields and the buttons, Enter goes to the next field, submits from
        the last one and presses a button."""
        last_field = max(i for i, w in enumerate(chain) if isinstance(w, Input))
        for key in keys:
            target = chain[at]
            if key.key == "escape":
                self.dismiss(None)
                return
            if key.key in ("tab", "shift+tab"):
                at = (at + (1 if key.key == "tab" else -1)) % len(chain)
            elif key.key == "enter" and (isinstance(target, Button) or at == last_field):
                self._cursor = None
                target.focus()
                self._press(target)
                return
            elif key.key == "enter":
                at += 1
            elif isinstance(target, Input) and key.key == "backspace":
                target.action_delete_left()
            elif isinstance(target, Input) and key.is_printable and key.character:
                target.insert_text_at_cursor(key.character)
        self._cursor = at  # focus() lands later: keys replayed before then go to this field
        chain[at].focus()

    def _press(self, target: Widget) -> None:
        """Enter on the last field or OK submits; on Cancel, cancels."""
        if isinstance(target, Button) and target.id == "cancel":
            self.dismiss(None)
        else:
            self._submit()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        inputs = list(self.query(Input))
        if event.input is inputs[-1]:
            self._submit()
        else:
            inputs[inputs.index(event.input) + 1].focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self._press(event.button)

    def _submit(self) -> None:
        form = {f.name: self.query_one(f"#field-{f.name}", Input).value for f in self.fields}
        problem = self.check(form) if self.check is not None else None
        if problem:
            field, reason = problem if isinstance(problem, tuple) else (None, problem)
            error = self.query_one("#form-error", Static)
            error.update(Text("✗ ", style="bold").append_text(safe(reason)))
            error.display = True
            error.scroll_visible()
            if field is not None:
                self.query_one(f"#field-{field}", Input).focus()
            return
        self.dismiss(form)


def required_fields(*names_and_labels: tuple[str, str]) -> Callable[[dict[str, str]], tuple[str, str] | None]:
    """A form check: each named field must hold text; the first empty one is named."""

    def check(form: dict[str, str]) -> tuple[str, str] | None:
        for name, label in names_and_labels:
            if not form.get(name, "").strip():
                return name, f"{label} must not be empty"
        return None

    return check


class ChoiceScreen(Dialog):
    """Pick one of a few options (Enter), or Escape."""

    def __init__(self, title: str, choices: list[tuple[str, str]]) -> None:
        super().__init__(title)
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield FocusList(*[Option(one_line(safe(label)), id=key) for key, label in self.choices])
            yield Static(Text("enter chooses · escape cancels"), classes="hint")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)


# (keys, what they do), by section; drawn as a table so long lines wrap with a hanging indent.
HELP: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "Everywhere",
        [
            ("1-6", "Frame, Compare, Inspect, Hypothesize, Verify, Share"),
            ("i", "investigations: pick another, or n for a new one"),
            ("ctrl+p", "command palette: every action by name"),
            ("?", "this help"),
            ("v", "the highlighted run, option or the focused report in full (in Share: verify a bundle)"),
            ("ctrl+e", "(or f10) the focused list or report takes the whole screen; again or escape gives it back"),
            ("q", "quit"),
            ("tab", "next list or field; arrows move; enter selects; escape closes a dialog"),
        ],
    ),
    ("Frame", [("n", "new investigation")]),
    (
        "Compare",
        [
            ("f /", "filter runs by id or label (hides runs from view, never from the selection)"),
            ("t", "runs made by Verify plans: folded under their plan, or listed one by one"),
            (
                "space",
                "select the highlighted run [x] in the baseline, candidate or A′ control list "
                "(A′: baseline-again runs, the A/A noise floor; optional)",
            ),
            ("d", "declare the intended change: a dimension with its from and to values"),
            ("c", "compare: comparability first, then the delta"),
            ("a", "accept refused dimensions (comma separated) with one reason, recorded for each"),
            (
                "m",
                "declare what a refusal says the files do not carry: its wb declare lines as one dialog, then compare "
                "again",
            ),
            (
                "w",
                "load sweeps (inference): pick a baseline and a candidate sweep; their runs are selected together and "
                "compared level by level at matched load, with the curve, as wb compare SWEEP --vs SWEEP prints it",
            ),
            (
                "",
                "a refusal ends with the way out, as wb compare prints it: the wb declare lines (m, or "
                "from a shell, then c), the change under test (d), or an acceptance (a)",
            ),
        ],
    ),
    ("Inspect", [("r", "refresh"), ("p", "pin the highlighted derived observation")]),
    (
        "Hypothesize",
        [
            ("h", "new hypothesis with the test that decides it"),
            ("s", "set its status with the evidence that decided it"),
            ("x", "retract an observation (the original is kept)"),
        ],
    ),
    (
        "Verify",
        [
            ("n", "new plan with the bundled CPU workload, in the investigation's lens"),
            ("r", "run the highlighted plan (its estimated duration is shown first)"),
            ("escape", "stop after the current run (finished runs are kept)"),
        ],
    ),
    ("Share", [("e", "export an evidence bundle"), ("v", "verify a bundle file")]),
]
HELP_NOTE = (
    "Strings from captures are shown literally: markup and control characters are escaped. "
    "Observations are observations, not causes."
)


def help_table() -> Table:
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True, style="bold")
    table.add_column(no_wrap=True)
    table.add_column(ratio=1)  # wraps inside its column: a hanging indent
    for section, rows in HELP:
        for i, (keys, what) in enumerate(rows):
            table.add_row(Text(section if i == 0 else ""), Text(keys), Text(what))  # Text: never parsed as markup
    table.add_row("", "", "")
    table.add_row("", "", Text(HELP_NOTE))
    return table


class HelpScreen(Dialog):
    BINDINGS = [Binding("escape,question_mark,q,enter", "cancel", "Close")]

    def __init__(self) -> None:
        super().__init__("Keys (the footer shows those of the pane you are in)")

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog help"):
            with VerticalScroll(classes="dialog-body", can_focus=True):
                yield Static(help_table())
            yield Static(Text("arrows scroll · enter or escape closes"), classes="hint")


class TooSmallScreen(Screen[None]):
    """Shown while the terminal is below the minimum size; the app removes it when it grows."""

    def __init__(self, minimum: tuple[int, int]) -> None:
        super().__init__()
        self.minimum = minimum

    def compose(self) -> ComposeResult:
        yield Static(id="too-small")

    def show_size(self, width: int, height: int) -> None:
        w, h = self.minimum
        self.query_one("#too-small", Static).update(
            one_line(Text(f"Too small ({width}×{height}): need {w}×{h}. q quits."))
        )


class Line(Static):
    """A line (or two) of fixed height: redrawing it never relays out the screen, and
    showing what it already shows draws nothing (no frame of its own)."""

    _shown: Text | None = None

    def show(self, text: Text) -> None:
        text = one_line(text)
        if text != self._shown:
            self._shown = text
            self.update(text, layout=False)


class Report(Static):
    """A plain-text report shown literally, line for line, wrapped to its region's width:
    the scroll container keeps the scrollbar's column (``scrollbar-gutter: stable``), so no
    character ever lands under it. Its height is set from the wrapped text, so showing the
    pane again never has to measure it; a new width wraps it again."""

    _source: Text = Text()
    _fitted: int | None = None  # the width the shown text was wrapped to

    def show(self, text: str | Text) -> None:
        self._source = block(text) if isinstance(text, str) else text
        self._fitted = None
        self._fit()

    @property
    def source(self) -> Text:
        """What was shown, before wrapping (the ``v`` detail shows it whole)."""
        return self._source

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._fitted:
            self._fit()

    def _fit(self) -> None:
        width = self.size.width
        if width <= 0:  # not laid out yet: the first resize wraps it
            self.update(self._source)
            return
        content = wrap_lines(self._source, width)
        self._fitted = width
        self.styles.height = content.plain.count("\n") + 1
        self.update(content)


def key_line(keys: list[tuple[str, str]], width: int) -> Text:
    """``(key, what it does)`` pairs in one line of ``width`` cells: each whole or not at all;
    when some do not fit, the line ends in "…" (``?`` lists every key)."""
    line = Text()
    for i, (key, what) in enumerate(keys):
        entry = Text().append(f" {key} ", style="reverse bold").append(f" {what} ")
        more = i < len(keys) - 1  # room is kept for the "…" unless this is the last key
        if cell_len(line.plain) + entry.cell_len + (2 if more else 0) > width:
            return line.append(" …")
        line.append_text(entry)
    return line


class KeyFooter(Line):
    """One line of keys: the global ones (q, ?, palette) first so they never drop off,
    then those of the focused pane that fit whole, "…" when some do not (``?`` has them all)."""

    FIRST = ("quit", "help", "command_palette", "pick")

    def redraw(self) -> None:
        """Draw the keys of what has focus now (a stage switch calls it, in its own frame)."""
        self._draw()

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)
        self._draw()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _changed(self, screen: Any) -> None:
        if self.is_attached and screen is self.screen:
            self._draw()

    def _draw(self) -> None:
        shown: dict[str, tuple[str, str]] = {}
        for _ns, binding, enabled, _tip in self.screen.active_bindings.values():
            if binding.show and enabled and binding.action not in shown:
                shown[binding.action] = (self.app.get_key_display(binding), binding.description)
        shown.setdefault("command_palette", ("^p", "Palette"))
        order = [a for a in self.FIRST if a in shown] + [a for a in shown if a not in self.FIRST]
        self.show(key_line([shown[a] for a in order], self.size.width or self.app.size.width))
        # the same keys again (a stage switch draws them first): nothing to draw

    def on_resize(self, event: events.Resize) -> None:
        self._draw()


class FocusList(OptionList):
    """An OptionList whose highlighted row is in reverse video while the list has focus, the
    focus mark used everywhere (NO_COLOR keeps the attribute and drops the colours). Textual's
    ``get_visual_style`` drops ``text-style: reverse``, so it is added here; the stylesheet gives
    that row's colours the other way round, so it reads the same in colour."""

    HIGHLIGHTED = "option-list--option-highlighted"

    def get_visual_style(self, *component_classes: str, partial: bool = False) -> VisualStyle:
        style = super().get_visual_style(*component_classes, partial=partial)
        if self.HIGHLIGHTED in component_classes and self.has_focus:
            return style + VisualStyle(reverse=True)
        return style


class PaneList(FocusList):
    """An OptionList that keeps its measured options when its pane is shown again.

    Textual sends every widget that is shown a Resize, and OptionList answers each one by
    measuring and rendering all its options again; at the same size nothing changed."""

    _measured_at: Size | None = None
    moved: Callable[["PaneList"], None] | None = None  # called as the highlight moves, in the same frame

    def watch_highlighted(self, highlighted: int | None) -> None:
        super().watch_highlighted(highlighted)
        if self.moved is not None:
            self.moved(self)  # not via OptionHighlighted, which lands a frame later: one redraw, not two

    def _on_resize(self, event: events.Resize) -> None:
        if event.size == self._measured_at:
            event.prevent_default()  # skips OptionList._on_resize (clears every cached option)
        self._measured_at = event.size


def row_text(label: str, rest: str, room: int) -> str:
    """A run's row in ``room`` cells: its whole label when it fits; else the part that tells it
    from its neighbours (``rest``, the label's end), after as many whole shared words as fit,
    "…" first: a row read alone (its heading scrolled away or cut) still names its run
    ("…v0.8.2 run 1", never "1"); a rest longer than the room is elided in its middle."""
    if cell_len(label) <= room or not label.endswith(rest):
        return elide_middle(label if cell_len(label) <= room else rest, room)
    shared = label[: len(label) - len(rest)].rstrip(" ").split(" ")
    for start in range(1, len(shared) + 1):
        shown = ELLIPSIS + " ".join([*shared[start:], rest]).lstrip(" ")
        if cell_len(shown) <= room:
            return shown
    return elide_middle(rest, room)


class RunPicker(PaneList):
    """A list of runs with a visible [x] / [ ] mark (readable without colour); space toggles.

    Rows come from ``workbench.tui.runlist``: headings (a shared label prefix, a folded
    plan) are disabled options, so the highlight, ``End`` included, only lands on runs. A
    row is the mark, the id and the part of the label that tells it from its neighbours,
    elided in the middle to the list's width (the detail line and ``v`` show it whole).

    ``selected`` is the investigation's own set (the pane hands it over), so a toggle is
    remembered per investigation.
    """

    BINDINGS = [Binding("space", "toggle", "Select", show=False)]

    class Toggled(Message):
        """A run was selected or deselected."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.selected: set[int] = set()
        self._labels: dict[int, str] = {}
        self._rows: list[Row] = []
        self._id_width = 3
        self._width = 0  # the width the prompts were elided to

    def set_runs(self, runs: list[tuple[int, str]], selected: set[int], rows: list[Row] | None = None) -> None:
        """Show ``rows`` (default: one row a run, its whole label) of ``runs`` (id, full label)."""
        self.selected = selected
        self._labels = dict(runs)
        self._rows = rows if rows is not None else [Row(label, run_id) for run_id, label in runs]
        self._id_width = max((len(str(run_id)) for run_id, _ in runs), default=3)
        keep = highlighted_id(self)
        self._width = self._room()
        fill_options(self, [self._option(i, row) for i, row in enumerate(self._rows)])
        self.highlighted = (
            self.index_of(keep) if keep is not None and self.index_of(keep) is not None else self._first_run()
        )

    def _room(self) -> int:
        """The cells a row may take (0 before the first layout: rows are then cut with "…")."""
        return max(self.scrollable_content_region.width - 2, 0)  # an option's padding

    def _option(self, index: int, row: Row) -> Option:
        if row.run_id is None:  # a heading: the plan's name may be elided, never its count
            text = clean(row.text)  # escaped before it is cut: the cut never hides an escape
            if self._width:
                shown = Row(text, folded=row.folded).shown()
                text = elide_middle(text, max(self._width - cell_len(shown) + cell_len(text), 1))
            return Option(one_line(safe(Row(text, folded=row.folded).shown(), "italic")), id=f"-{index}", disabled=True)
        return Option(self._prompt(row.run_id), id=str(row.run_id))

    def _first_run(self) -> int | None:
        return next((i for i, row in enumerate(self._rows) if row.is_run), None)

    def index_of(self, run_id: int) -> int | None:
        """The option index of a run, or None when it is not listed."""
        return next((i for i, row in enumerate(self._rows) if row.run_id == run_id), None)

    def run_ids(self) -> list[int]:
        """The runs listed, in order (headings left out)."""
        return [row.run_id for row in self._rows if row.run_id is not None]

    def label_of(self, run_id: int) -> str:
        return self._labels.get(run_id, "")

    def _prompt(self, run_id: int) -> Text:
        mark = "[x]" if run_id in self.selected else "[ ]"
        index = self.index_of(run_id)
        label = self._labels.get(run_id, "")
        text = self._rows[index].text if index is not None else label
        head = f"{mark} {run_id:>{self._id_width}} "
        if self._width:
            text = row_text(clean(label), clean(text), max(self._width - cell_len(head), 1))
        return one_line(safe(head + text))

    def on_resize(self, event: events.Resize) -> None:  # before PaneList._on_resize (Textual walks the classes)
        if self._rows and self._room() != self._width:  # elided to another width: again, to this one
            self._width = self._room()
            keep = self.highlighted
            fill_options(self, [self._option(i, row) for i, row in enumerate(self._rows)], keep)

    def detail(self) -> tuple[str, Text] | None:
        """The highlighted run in full (``v``)."""
        run_id = highlighted_id(self)
        if run_id is None or run_id < 0:
            return None
        t = Text().append(f"run {run_id}", style="bold")
        t.append(" [x] selected" if run_id in self.selected else " not selected")
        t.append("\nlabel: ", style="bold")
        t.append_text(safe(self._labels.get(run_id, "")))
        return f"Run {run_id}", t

    def action_toggle(self) -> None:
        run_id = highlighted_id(self)
        if run_id is None or run_id < 0 or self.highlighted is None:
            return
        self.selected.symmetric_difference_update({run_id})
        self.replace_option_prompt_at_index(self.highlighted, self._prompt(run_id))
        self.post_message(self.Toggled())

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_toggle()
