"""Checks that what a screen shows fits: no text under a scrollbar, no value cut unseen.

``under_scrollbars(app)``: every drawn row of a region with a vertical scrollbar, at the
scrollbar's column, holds scrollbar glyphs only (a letter there is a letter lost), and
nothing inside one (a report above all) is wider than the room beside the bar.

``cut_values(app, values)``: no value starts on screen and runs into an edge (a border, a
scrollbar, the screen's side) without going on (wrapped) on the next row or ending in a
visible elision ("…", or the "~" the compare renderer ends a cut table cell with); a middle
elision (head…tail) passes as it starts with a head and "…". Values not on screen are not
checked, and a value that stops before an edge is some other text sharing its start.
"""

from __future__ import annotations

import re

from rich.cells import cell_len

from textual.widgets import Input

from tests.tui.pilot import screen_text
from workbench.tui.widgets import Report

ELISIONS = ("…", "~")
SCROLLBAR_GLYPHS = set(" ▁▂▃▄▅▆▇█▔▏▕▎▍▌▋▊▉")
BOX = re.compile(r"[\s│╭╮╰╯─┃━┏┓┗┛║═]+")
HEAD = 8  # the characters of a value (spaces and borders left out) that mark where it starts on screen


def _shown(widget) -> bool:
    node = widget
    while node is not None and hasattr(node, "display"):
        if not node.display or not getattr(node, "visible", True):
            return False
        node = node.parent
    return widget.region.width > 0 and widget.region.height > 0


def under_scrollbars(app) -> list[str]:
    """What reaches into a scrollbar's column, as 'widget row: text' lines (empty: nothing)."""
    rows = screen_text(app)
    problems = []
    screen = app.screen
    for widget in screen.query("*"):
        if not _shown(widget) or not widget.show_vertical_scrollbar:
            continue
        x = widget.region.right - widget.scrollbar_size_vertical - _border(widget)
        for y in _bar_rows(widget, screen):
            if 0 <= x < len(rows[y]) and rows[y][x] not in SCROLLBAR_GLYPHS:
                problems.append(f"{widget!r} row {y}: {rows[y]!r} has {rows[y][x]!r} in the scrollbar's column {x}")
        room = widget.scrollable_content_region
        # Lines that go on past the bar, out of sight (an Input is an editor: its line scrolls with the cursor).
        if widget.virtual_size.width > room.width and not isinstance(widget, Input):
            problems.append(f"{widget!r} holds lines {widget.virtual_size.width} wide beside {room.width} columns")
        for report in widget.query(Report):
            if not _shown(report):
                continue
            widest = max((cell_len(line) for line in report.render().plain.split("\n")), default=0)
            if report.region.right > room.right or widest > room.width:
                problems.append(f"{report!r} is {widest} wide (to x={report.region.right}) beside {room.width} columns")
    return problems


def _squeezed(text: str) -> str:
    return BOX.sub("", text)


def _edge_cells(app) -> set[tuple[int, int]]:
    """The cells at a region's right edge: the last column of every widget's content."""
    cells = set()
    for widget in app.screen.query("*"):
        if _shown(widget):
            region = widget.scrollable_content_region.intersection(app.screen.region)
            cells.update((region.right - 1, y) for y in range(region.y, region.bottom))
    return cells


def _scrollbar_columns(app) -> set[tuple[int, int]]:
    cells = set()
    for widget in app.screen.query("*"):
        if _shown(widget) and widget.show_vertical_scrollbar:
            x = widget.region.right - widget.scrollbar_size_vertical - _border(widget)
            cells.update((x, y) for y in _bar_rows(widget, app.screen))
    return cells


def _border(widget, side: str = "right") -> int:
    return 0 if getattr(widget.styles, f"border_{side}")[0] in ("", "none", "hidden", "blank") else 1


def _bar_rows(widget, screen) -> range:
    """The rows a widget's vertical scrollbar is drawn on (inside its border)."""
    region = widget.region.intersection(screen.region)
    return range(
        max(region.y, widget.region.y + _border(widget, "top")),
        min(region.bottom, widget.region.bottom - _border(widget, "bottom")),
    )


def _text_and_edges(app) -> tuple[str, set[int]]:
    """The screen's text with spaces and borders left out, and the indices of the characters
    that touch an edge (a border, a scrollbar, the screen's side): where a cut would end."""
    bars, ends = _scrollbar_columns(app), _edge_cells(app)
    chars: list[str] = []
    edges: set[int] = set()
    for y, row in enumerate(screen_text(app)):
        for x, ch in enumerate(row):
            if (x, y) in bars or BOX.fullmatch(ch):
                continue
            chars.append(ch)
            after = row[x + 1] if x + 1 < len(row) else ""
            if not after or (x, y) in ends or (x + 1, y) in bars or (after.strip() and BOX.fullmatch(after)):
                edges.add(len(chars) - 1)
    return "".join(chars), edges


def cut_values(app, values) -> list[str]:
    """The values cut on screen without a visible elision: shown from their start up to an
    edge (a border, the scrollbar, the screen's side), and not continued on the next row."""
    shown, edges = _text_and_edges(app)
    problems = []
    for value in values:
        whole = _squeezed(value)
        if len(whole) < HEAD:
            continue
        for match in re.finditer(re.escape(whole[:HEAD]), shown):
            at = match.start()
            k = HEAD
            while k < len(whole) and at + k < len(shown) and shown[at + k] == whole[k]:
                k += 1
            if k == len(whole) or shown[at + k : at + k + 1] in ELISIONS or whole[:k].endswith(ELISIONS):
                continue
            if at + k - 1 in edges:  # it stops at an edge: the rest is lost there
                problems.append(f"{value!r} is cut on screen: {shown[at : at + k + 12]!r}")
    return problems


def outside(app, widget) -> list[str]:
    """What is drawn on screen outside ``widget``'s region, as 'x,y: character' (blank: nothing)."""
    region = widget.region
    return [
        f"{x},{y}: {ch!r}"
        for y, row in enumerate(screen_text(app))
        for x, ch in enumerate(row)
        if ch.strip() and not region.contains(x, y)
    ]


def visible(app, value: str) -> bool:
    """Whether the whole value is on screen (rows and borders joined)."""
    return _squeezed(value) in _squeezed("".join(screen_text(app)))
