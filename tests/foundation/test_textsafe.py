"""The one invisible-character set (workbench.textsafe) against the running Unicode database:
display escapes every character that draws nothing, and a name or reason made only of such
characters says nothing."""

from __future__ import annotations

import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from workbench.textsafe import INVISIBLE, clean, look_alike_form, markup_safe, meaningful

# Default_Ignorable_Code_Point (Unicode DerivedCoreProperties.txt, unchanged since 6.x) outside Cf.
DEFAULT_IGNORABLE = [
    0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810), 0x3164,
    *range(0xFE00, 0xFE10), 0xFFA0, *range(0xFFF0, 0xFFF9), *range(0xE0000, 0xE1000),
]  # fmt: skip
FILLERS = [0x2800]  # the Braille pattern blank draws nothing


def _every_invisible() -> list[str]:
    chars = [chr(c) for c in DEFAULT_IGNORABLE + FILLERS]
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        category = unicodedata.category(ch)
        if category == "Cf" or (category in ("Zs", "Zl", "Zp") and ch != " "):
            chars.append(ch)
    return chars


EVERY_INVISIBLE = _every_invisible()


def test_every_format_separator_and_ignorable_character_is_in_the_set():
    missing = [f"U+{ord(ch):04X}" for ch in EVERY_INVISIBLE if not INVISIBLE.fullmatch(ch)]
    assert not missing, f"textsafe._INVISIBLE lacks {missing} (Unicode {unicodedata.unidata_version})"


def test_display_escapes_each_invisible_character():
    for ch in EVERY_INVISIBLE:
        shown = clean(f"a{ch}b")
        assert ch not in shown and shown.startswith("a\\") and shown.endswith("b"), f"U+{ord(ch):04X}"
    assert clean("cand\u00ad") == "cand\\u00ad"
    assert clean("cand\U000e0001") == "cand\\U000e0001"
    assert clean("a\u202eb\u2066c\u200bd\ufeffe\u2028f\ud800") == "a\\u202eb\\u2066c\\u200bd\\ufeffe\\u2028f\\ud800"
    assert clean("x\x1by\tz\x85") == "x\\x1by\\tz\\x85"
    assert markup_safe("[bold]\u202e") == "\\[bold]\\u202e"
    assert clean("naïve café 日本 e\u0301") == "naïve café 日本 e\u0301"


def test_a_name_of_invisible_characters_says_nothing():
    for ch in EVERY_INVISIBLE:
        assert meaningful(ch) == "", f"U+{ord(ch):04X}"
        assert meaningful(f" {ch}\t") == ""
    assert meaningful("\u0301\u0302") == ""  # combining marks alone draw on nothing
    assert meaningful("approve\u200b") == "approve"
    assert meaningful(" Ana María ") == "AnaMaría"


@given(st.lists(st.sampled_from(EVERY_INVISIBLE + [" ", "\t", "\n", "\r", "\x0b", "\x0c"]), max_size=12))
def test_meaningful_is_empty_for_any_string_of_blanks(chars):
    assert meaningful("".join(chars)) == ""


@given(st.text(min_size=1).filter(lambda s: meaningful(s) != ""))
def test_invisibles_added_anywhere_do_not_change_what_a_name_says(text):
    padded = "\u200b".join(text) + "\u00ad"
    assert meaningful(padded) == meaningful(text)


def test_look_alike_labels_share_a_form():
    forms = {look_alike_form(f"cand{ch}") for ch in ("\u00ad", "\U000e0001", "\u180e", "\u034f", "\ufe0f", "\u3164")}
    assert forms == {"cand"}
    assert look_alike_form("ｃａｎｄ") == "cand"  # fullwidth letters (NFKC)
    assert look_alike_form("cand2") != look_alike_form("cand")
