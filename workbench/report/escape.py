"""Every value a template prints is escaped by construction: Jinja2's ``finalize`` hook runs
on each ``{{ ... }}`` before it is written, so a template cannot forget.

First :func:`workbench.textsafe.clean` (control and invisible characters shown as escapes,
``\\x1b``, ``\\u202e``; a newline as ``\\n``, so a value stays on its line and in its table
cell), then the format's own escaping: HTML by Jinja2's autoescape (``<``, ``>``, ``&``,
quotes), Markdown by a backslash before every character that could start markup (links
and images ``[x](url)``, emphasis, code, raw HTML ``<script>``, table pipes, math ``$``,
GitHub mentions ``@team``). What the report writes itself and has escaped already (charts,
code blocks) is a ``Markup`` (HTML) or :class:`MarkdownSafe`, and passes as it is.
"""

from __future__ import annotations

import re

from markupsafe import Markup
from msgspec import UNSET

from workbench.textsafe import clean

UNKNOWN = "unknown"  # a missing value is unknown, never blank and never zero
# ASCII punctuation that can open or close GitHub-flavoured Markdown inside a line (CommonMark lets any of it be
# backslash-escaped). Line-start markup (a list's "-", a quote's ">") cannot begin: no value starts a line; "<"
# is escaped, so no tag or autolink opens for a ">" to close.
_MARKDOWN = re.compile(r"([\\`*_{}\[\]<#!|~&$@])")

# Where GitHub and markdown-it start an autolink: a scheme's ":" or "www.". An escape there breaks it.
# Matched as the empty place just before the ":" or "." (lookarounds of fixed width): linear on any line.
_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9+.-])(?=://)|(?<=www)(?=\.)")


class MarkdownSafe(str):
    """Markdown the report wrote itself (escaped already): printed as it is."""


def shown(value: object) -> str:
    """The text of a value: ``unknown`` for None, cleaned of control and invisible characters."""
    return UNKNOWN if value is None or value is UNSET else clean(value)


def html_value(value: object) -> object:
    """``finalize`` of the HTML templates: Markup as it is, anything else cleaned (autoescape follows)."""
    return value if isinstance(value, Markup) else shown(value)


def markdown_text(value: object) -> str:
    """A value as Markdown text that renders as exactly that text (a bare URL too: renderers
    that turn ``http://`` or ``www.`` into a link see an escape there instead)."""
    return _AUTOLINK.sub(r"\\", _MARKDOWN.sub(r"\\\1", shown(value)))


def markdown_value(value: object) -> str:
    """``finalize`` of the Markdown templates."""
    return value if isinstance(value, MarkdownSafe) else markdown_text(value)


def markdown_code(value: object) -> MarkdownSafe:
    """A value as inline code: a backtick run longer than any inside it, so it cannot close early;
    a pipe escaped (GitHub splits table cells before it reads code spans)."""
    text = shown(value).replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return MarkdownSafe(f"{fence}{pad}{text}{pad}{fence}")
