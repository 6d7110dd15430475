"""Make untrusted strings (anything read from a capture or bundle) safe to display.

Two hazards: control characters (ANSI escapes can rewrite the terminal) and Rich
markup (``[link=...]`` or ``[bold red]`` in a label must print literally).
"""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, and C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_WITH_NEWLINES = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    ch = match.group(0)
    return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch, f"\\x{ord(ch):02x}")


def clean(text: object, *, single_line: bool = True) -> str:
    """``text`` with control characters shown as escapes (``\\x1b``), never interpreted."""
    s = str(text)
    pattern = _CONTROL_WITH_NEWLINES if single_line else _CONTROL
    return pattern.sub(_visible, s)


def markup_safe(text: object, *, single_line: bool = True) -> str:
    """``text`` cleaned of control characters and escaped for Rich markup."""
    from rich.markup import escape

    return escape(clean(text, single_line=single_line))
