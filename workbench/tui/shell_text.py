"""A shell command laid out for an 80-column screen, as a shell reads it back."""

from __future__ import annotations


def shell_lines(command: str, indent: int, width: int = 80) -> list[str]:
    """A long shell command over several lines that a shell reads back as one (`` \\``
    continuations, broken only before an option), so it can be read and copied at 80 columns."""
    words, word, quote = [], "", ""
    for ch in command:  # split at spaces outside quotes, each word kept as written
        if ch == " " and not quote:
            words.append(word)
            word = ""
            continue
        quote = "" if ch == quote else ch if ch in "'\"" and not quote else quote
        word += ch
    groups: list[list[str]] = []
    for w in [*words, word]:
        if not groups or w.startswith("--"):
            groups.append([])
        groups[-1].append(w)
    lines, current = [], " " * indent
    for group in (" ".join(g) for g in groups):
        if current.strip() and len(current) + 1 + len(group) + 2 > width:
            lines.append(current + " \\")
            current = " " * (indent + 2)
        current += (" " if current.strip() else "") + group
    return [*lines, current]
