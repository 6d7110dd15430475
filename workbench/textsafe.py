"""Make untrusted strings (anything read from a capture, a bundle or a user's word) safe to
display, and tell whether they say anything at all.

Three hazards: control characters (ANSI escapes can rewrite the terminal), invisible
characters (a bidi override U+202E makes ``exe.txt`` read as ``txt.exe``; a zero-width space,
a soft hyphen or a Hangul filler makes two labels look alike, or a name look like a name when
it is nothing), and Rich markup (``[link=...]`` or ``[bold red]`` in a label must print
literally). The first two are shown as escapes (``\\u00ad``), never interpreted.

The invisible set is one definition for every use: display (:func:`clean`), "does this say
anything" (:func:`meaningful`, for a decision's actor and reason) and "do these two names look
the same" (:func:`look_alike_form`, for labels). It is:

- every format character (Unicode category Cf: bidi controls, zero-width characters, the soft
  hyphen, tags, the Mongolian vowel separator, ...);
- every Default_Ignorable_Code_Point (variation selectors, the combining grapheme joiner,
  Hangul fillers, Khmer inherent vowels, reserved ignorables);
- every separator but the ASCII space (categories Zs, Zl, Zp: no-break and ideographic spaces,
  line and paragraph separators);
- blanks that draw nothing and belong to none of those: the Braille pattern blank U+2800;
- lone surrogates (which cannot even be encoded for the terminal).

The ranges are written out (building them from ``unicodedata`` at import would cost every
command tens of milliseconds); ``tests/foundation/test_textsafe.py`` checks them against the
running Python's Unicode database, so a newer Unicode that adds a format character fails a test.
"""

from __future__ import annotations

import re
import unicodedata

_INVISIBLE = (
    "\u00a0\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u1680\u17b4\u17b5\u180b-\u180f"
    "\u2000-\u200f\u2028-\u202f\u205f-\u206f\u2800\u3000\u3164"
    "\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\ud800-\udfff"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)
INVISIBLE = re.compile(f"[{_INVISIBLE}]")
# C0 controls except tab and newline, DEL, and C1 controls; plus the invisibles.
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
_CONTROL_WITH_NEWLINES = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
# What carries no meaning in a name or a reason: the invisibles, controls and whitespace.
_BLANK = re.compile(f"[\\s\\x00-\\x1f\\x7f-\\x9f{_INVISIBLE}]+")


def _escape(ch: str) -> str:
    code = ord(ch)
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch)
    if named:
        return named
    if code < 0xA0:  # C0 and C1 controls, DEL
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _visible(match: re.Match[str]) -> str:
    return _escape(match.group(0))


def clean(text: object, *, single_line: bool = True) -> str:
    """``text`` with control and invisible characters shown as escapes (``\\x1b``,
    ``\\u202e``, ``\\U000e0001``), never interpreted."""
    s = str(text)
    pattern = _CONTROL_WITH_NEWLINES if single_line else _CONTROL
    return pattern.sub(_visible, s)


def markup_safe(text: object, *, single_line: bool = True) -> str:
    """``text`` cleaned of control characters and escaped for Rich markup."""
    from rich.markup import escape  # Rich (~40 ms): clean() alone must not load it

    return escape(clean(text, single_line=single_line))


def meaningful(text: str) -> str:
    """What ``text`` says once whitespace, controls and invisible characters are gone; ``""``
    when nothing is left, or when only combining marks are (they draw on nothing)."""
    kept = _BLANK.sub("", text)
    if all(unicodedata.category(ch) in ("Mn", "Me") for ch in kept):
        return ""
    return kept


def look_alike_form(text: str) -> str:
    """The form two names share when a reader cannot tell them apart: NFKC, invisible
    characters and controls removed, whitespace collapsed to single spaces and trimmed (a
    trailing space draws nothing either). Two labels with one form are one label to a reviewer."""
    return " ".join(_CONTROL.sub("", unicodedata.normalize("NFKC", _CONTROL.sub("", text))).split())
