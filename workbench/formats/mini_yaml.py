"""A small, safe reader for the block-style YAML that deployment manifests and load
configs use (no dependency on PyYAML, no tags, no anchors, no code execution).

Supported: ``---`` document separators, block mappings and sequences by indentation,
``- key: value`` sequence items holding mappings, plain / single- / double-quoted
scalars, ``#`` comments, empty flow collections (``{}``/``[]``) and simple flow
sequences of scalars. Anything else raises ``ValueError`` with the line number, which
callers turn into ``BadInput``. Scalars stay strings unless they are plain integers,
floats, booleans or null, as in YAML 1.2's core schema.
"""

from __future__ import annotations

import re
from typing import Any

_INT = re.compile(r"^[-+]?\d+$")
_FLOAT = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$")


def load_all(text: str) -> list[Any]:
    docs: list[list[tuple[int, int, str]]] = [[]]
    for no, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw.rstrip())
        if line.strip() in ("---", "..."):
            docs.append([])
            continue
        if not line.strip():
            continue
        if "\t" in line[: len(line) - len(line.lstrip())]:
            raise ValueError(f"line {no}: tab in indentation")
        docs[-1].append((no, len(line) - len(line.lstrip()), line.strip()))
    out = []
    for lines in docs:
        if lines:
            value, pos = _block(lines, 0, lines[0][1])
            if pos != len(lines):
                raise ValueError(f"line {lines[pos][0]}: unexpected indentation")
            out.append(value)
    return out


def _strip_comment(line: str) -> str:
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'" and (i == 0 or line[i - 1] in " :-[,{"):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def _block(lines: list[tuple[int, int, str]], pos: int, indent: int) -> tuple[Any, int]:
    if lines[pos][2].startswith("- ") or lines[pos][2] == "-":
        return _sequence(lines, pos, indent)
    return _mapping(lines, pos, indent)


def _sequence(lines: list[tuple[int, int, str]], pos: int, indent: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    while pos < len(lines) and lines[pos][1] == indent and (lines[pos][2].startswith("- ") or lines[pos][2] == "-"):
        no, _, text = lines[pos]
        rest = text[1:].strip()
        if not rest:
            if pos + 1 < len(lines) and lines[pos + 1][1] > indent:
                value, pos = _block(lines, pos + 1, lines[pos + 1][1])
            else:
                value, pos = None, pos + 1
            items.append(value)
            continue
        if _key_value(rest) is not None and not rest.startswith(("'", '"')):
            # "- key: value" opens a mapping whose further keys sit at indent + 2.
            inner = indent + (len(text) - len(rest))
            patched = [*lines[:pos], (no, inner, rest), *lines[pos + 1 :]]
            value, new_pos = _mapping(patched, pos, inner)
            items.append(value)
            pos = new_pos
            continue
        items.append(_scalar(rest, no))
        pos += 1
    return items, pos


def _mapping(lines: list[tuple[int, int, str]], pos: int, indent: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    while pos < len(lines) and lines[pos][1] == indent:
        no, _, text = lines[pos]
        kv = _key_value(text)
        if kv is None:
            raise ValueError(f"line {no}: expected 'key: value'")
        key, rest = kv
        pos += 1
        if rest:
            out[key] = _scalar(rest, no)
        elif pos < len(lines) and (lines[pos][1] > indent or (lines[pos][1] == indent and lines[pos][2].startswith("- "))):
            out[key], pos = _block(lines, pos, lines[pos][1])
        else:
            out[key] = None
    return out, pos


def _key_value(text: str) -> tuple[str, str] | None:
    if text.startswith(("'", '"')):
        quote = text[0]
        end = text.find(quote, 1)
        if end < 0 or not text[end + 1 :].lstrip().startswith(":"):
            return None
        rest = text[end + 1 :].lstrip()[1:]
        return text[1:end], rest.strip()
    m = re.match(r"^([^:#\[\]{},]+?)\s*:(?:\s+(.*)|$)", text)
    if not m:
        return None
    return m.group(1).strip(), (m.group(2) or "").strip()


def _scalar(text: str, no: int) -> Any:
    if text.startswith('"'):
        if len(text) < 2 or not text.endswith('"'):
            raise ValueError(f"line {no}: unterminated double-quoted string")
        body = text[1:-1]
        return re.sub(r'\\(["\\/nt])', lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'"):
            raise ValueError(f"line {no}: unterminated single-quoted string")
        return text[1:-1].replace("''", "'")
    if text in ("{}",):
        return {}
    if text.startswith("["):
        if not text.endswith("]"):
            raise ValueError(f"line {no}: multi-line flow sequences are not supported")
        body = text[1:-1].strip()
        return [_scalar(part.strip(), no) for part in body.split(",")] if body else []
    if text.startswith(("{", "&", "*", "!", "|", ">")):
        raise ValueError(f"line {no}: unsupported YAML construct {text[:20]!r}")
    if text in ("null", "~", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    return text
