"""Make untrusted strings (anything read from a capture or bundle) safe to display.

Three hazards: control characters (ANSI escapes can rewrite the terminal), invisible
format characters (a bidi override U+202E makes ``exe.txt`` read as ``txt.exe``; a
zero-width space makes two labels look alike), and Rich markup (``[link=...]`` or
``[bold red]`` in a label must print literally). The first two are shown as escapes.
"""

from __future__ import annotations

import re

# Bidi controls (embeddings, overrides, isolates, marks), zero-width characters, the
# word joiner and BOM, the Unicode line/paragraph separators, and lone surrogates
# (which cannot even be encoded for the terminal).
_INVISIBLE = "\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ud800-\udfff"
# C0 controls except tab and newline, DEL, and C1 controls; plus the invisibles.
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
_CONTROL_WITH_NEWLINES = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_INVISIBLE}]")


def _visible(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch, f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def clean(text: object, *, single_line: bool = True) -> str:
    """``text`` with control and invisible characters shown as escapes (``\\x1b``,
    ``\\u202e``), never interpreted."""
    s = str(text)
    pattern = _CONTROL_WITH_NEWLINES if single_line else _CONTROL
    return pattern.sub(_visible, s)


def markup_safe(text: object, *, single_line: bool = True) -> str:
    """``text`` cleaned of control characters and escaped for Rich markup."""
    from rich.markup import escape  # Rich (~40 ms): clean() alone must not load it

    return escape(clean(text, single_line=single_line))
