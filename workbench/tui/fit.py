"""Text that fits its region: wrapped lines and middle elisions, never a lost character.

A report's line that is wider than its region is wrapped at a space (continuation lines
indented under the line's own indent plus two, a hanging indent) or, for a token longer than
the region (a digest, a path), folded; nothing is cut. A one-line value that cannot wrap (a
list row) is elided in the middle, so both ends of a seed, a digest or a command stay in
view and the "…" shows that something is missing; the full value is one key away (``v``).
"""

from __future__ import annotations

from rich.cells import cell_len, get_character_cell_size
from rich.text import Text

ELLIPSIS = "…"
HANG = 2  # continuation lines of a wrapped line are indented this much more than the line


def elide_middle(value: str, width: int) -> str:
    """``value`` in at most ``width`` cells: too long, its middle is replaced by "…"
    (the head keeps a cell more than the tail: a label's start reads first)."""
    if cell_len(value) <= width:
        return value
    if width <= 1:
        return ELLIPSIS[:width]
    room = width - 1
    head = _take(value, (room + 1) // 2)
    tail = _take(value[::-1], room // 2)[::-1]
    return f"{head}{ELLIPSIS}{tail}"


def _take(value: str, cells: int) -> str:
    """The longest start of ``value`` that fits in ``cells``."""
    used = 0
    for i, ch in enumerate(value):
        used += get_character_cell_size(ch)
        if used > cells:
            return value[:i]
    return value


def wrap_lines(text: Text | str, width: int) -> Text:
    """``text`` with every line wider than ``width`` cells wrapped (styles kept)."""
    source = text if isinstance(text, Text) else Text(text)
    if width <= 0 or widest(source) <= width:  # nothing to wrap (most reports at a wide terminal)
        return source
    out: list[Text] = []
    for line in source.split("\n", allow_blank=True):
        out.extend(_wrap_line(line, width))
    joined = Text("\n").join(out)
    joined.no_wrap, joined.overflow = True, "fold"  # already fitted: never wrapped again, nor cut
    return joined


def _wrap_line(line: Text, width: int) -> list[Text]:
    plain = line.plain
    if cell_len(plain) <= width:
        return [line]
    if cell_len(plain.rstrip()) <= width:  # only trailing spaces reach past the edge: nothing to wrap
        return [line[: len(plain.rstrip())]]
    indent = len(plain) - len(plain.lstrip(" "))
    hang = min(indent + HANG, max(width // 2, 0))  # a deep indent never leaves a sliver to write in
    pieces: list[Text] = []
    start, room = 0, width
    while start < len(plain):
        rest = plain[start:]
        if cell_len(rest) <= room:
            pieces.append(line[start:])
            break
        fits = len(_take(rest, room))
        cut = rest.rfind(" ", 0, fits + 1)
        # A space to break at that leaves some text on this line; otherwise fold the token.
        end = start + (cut if cut > 0 and rest[:cut].strip() else max(fits, 1))
        piece = line[start:end]
        piece.rstrip()  # in place: the space broken at is not drawn
        pieces.append(piece)
        start = end
        while start < len(plain) and plain[start] == " ":
            start += 1
        room = width - hang
    return [pieces[0], *(Text(" " * hang) + p for p in pieces[1:])]


def widest(text: Text | str) -> int:
    """The widest line's cells."""
    plain = text.plain if isinstance(text, Text) else text
    return max((cell_len(line) for line in plain.split("\n")), default=0)
