"""What differs between the arms' commands: their common part once, then each arm's own.

Three commands that share a long interpreter and script path are unreadable side by side
at 80 columns (every line cut at the same prefix); the common words once and the words
that differ per arm show what the experiment changes.
"""

from __future__ import annotations

import shlex
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CommandDiff:
    common_prefix: tuple[str, ...]  # the words every arm's command starts with
    common_suffix: tuple[str, ...]  # ... and ends with (after the prefix)
    own: tuple[tuple[str, ...], ...]  # each arm's words between them (empty: nothing of its own)


def diff_commands(argvs: Sequence[Sequence[str]]) -> CommandDiff:
    """Split each argv into the common prefix, its own middle and the common suffix (by word)."""
    words = [tuple(a) for a in argvs]
    if not words:
        return CommandDiff((), (), ())
    shortest = min(len(w) for w in words)
    p = 0
    while p < shortest and all(w[p] == words[0][p] for w in words):
        p += 1
    s = 0
    while s < shortest - p and all(w[len(w) - 1 - s] == words[0][len(words[0]) - 1 - s] for w in words):
        s += 1
    suffix = words[0][len(words[0]) - s :] if s else ()
    return CommandDiff(words[0][:p], suffix, tuple(w[p : len(w) - s] for w in words))


def wrap_words(words: Sequence[str], width: int, indent: str = "    ") -> list[str]:
    """A command, shell-quoted, wrapped at ``width`` with long words (paths) broken, never cut."""
    text = shlex.join(words)
    return textwrap.wrap(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_long_words=True,
        break_on_hyphens=False,
    ) or [indent]
