"""YAML documents (deployment manifests, Helm values, compose files, load configs) read
with PyYAML's safe loader, within stated bounds.

The safe loader builds only plain data (mappings, lists, strings, numbers, booleans,
null): a tag that would construct an object (``!!python/object``) is refused. What the
safe loader does not bound, this module does, before anything is constructed:

- the text: at most ``MAX_BYTES`` (manifests are kilobytes);
- nesting: at most ``MAX_DEPTH`` collections deep (the C composer recurses);
- expansion: at most ``MAX_NODES`` nodes once every alias is counted as the subtree it
  names, so a "billion laughs" document is refused while its events stream by, before
  it is composed or walked.

Timestamps and ``!!binary`` stay text (the values travel as JSON). Every refusal is a
``ValueError`` whose message is one line starting with the line number; callers turn it
into ``BadInput`` naming the file.
"""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml

from workbench.inputs import open_regular
from workbench.limits import MAX_ALIKE_KEYS, KeyGuard, LimitExceeded

MAX_BYTES = 4 << 20
MAX_DEPTH = 64
MAX_NODES = 1_000_000

_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE):  # type: ignore[misc, valid-type]
    """The safe loader, with timestamps and binary kept as the text they are written as,
    and mappings built with a bound on keys that hash alike."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        # PyYAML's own loop, with workbench.limits.KeyGuard before each insert: 150,000
        # integer keys that hash alike make each insert scan all the others (316 s for 3 MB).
        if not isinstance(node, yaml.MappingNode):
            raise yaml.constructor.ConstructorError(
                None, None, f"expected a mapping node, but found {node.id}", node.start_mark
            )
        self.flatten_mapping(node)
        mapping: dict[Any, Any] = {}
        keys = KeyGuard(None)
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark, "found unhashable key", key_node.start_mark
                )
            try:
                keys.admit(mapping, key)
            except LimitExceeded:
                raise ValueError(
                    f"{_line(key_node.start_mark)}: more than {MAX_ALIKE_KEYS} distinct keys that hash alike "
                    "in one mapping (a hash flood); refused (see docs/limits.md)"
                ) from None
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


_Loader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)
_Loader.add_constructor("tag:yaml.org,2002:binary", yaml.SafeLoader.construct_yaml_str)


def _line(mark: Any) -> str:
    return f"line {mark.line + 1}" if mark is not None else "line ?"


def _check_bounds(text: str) -> None:
    """Depth and alias-expanded size from the event stream (iterative, nothing composed)."""
    sizes: dict[str, int] = {}  # anchor -> expanded node count of the node it names
    stack: list[tuple[str | None, int]] = []  # open collections: (anchor, nodes so far)
    total = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.DocumentStartEvent):
            sizes.clear()  # anchors are per document
            continue
        if isinstance(event, yaml.AliasEvent):
            if event.anchor not in sizes:
                raise ValueError(f"{_line(event.start_mark)}: alias *{event.anchor} names no anchor before it")
            count = sizes[event.anchor]
        elif isinstance(event, yaml.ScalarEvent):
            count = 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            if len(stack) >= MAX_DEPTH:
                raise ValueError(
                    f"{_line(event.start_mark)}: nested more than {MAX_DEPTH} levels deep; not a deployment file"
                )
            stack.append((event.anchor, 1))
            continue
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, count = stack.pop()
            if anchor:
                sizes[anchor] = count
        else:
            continue
        if stack:
            anchor, inner = stack[-1]
            stack[-1] = (anchor, inner + count)
        else:
            total += count
        if total + sum(n for _, n in stack) > MAX_NODES:
            raise ValueError(
                f"{_line(event.start_mark)}: more than {MAX_NODES:,} values once aliases are expanded "
                "(an alias bomb?); refused"
            )


def load_all(text: str) -> list[Any]:
    """Every document of ``text`` (``---`` separates them), as plain data."""
    if len(text) > MAX_BYTES:
        raise ValueError(f"line 1: larger than {MAX_BYTES >> 20} MiB; not a deployment file")
    try:
        _check_bounds(text)
        loader = _Loader(text)
        try:
            docs = []
            while loader.check_node():
                docs.append(loader.construct_document(loader.get_node()))
            return docs
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(str(exc.problem or exc.context or "not YAML").split())
        if isinstance(exc, yaml.constructor.ConstructorError) and "constructor for the tag" in problem:
            problem = f"tag {problem.rsplit(' ', 1)[-1]} is not plain data; refused (safe loader)"
        raise ValueError(f"{_line(mark)}: {problem}") from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise ValueError(
            f"line {line}: character #x{exc.character if isinstance(exc.character, int) else ord(exc.character):04x} "
            "is not allowed in YAML"
        ) from None
    except yaml.YAMLError as exc:
        raise ValueError(f"line ?: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise ValueError("line ?: nested too deeply; not a deployment file") from None


def load_file(path: Path, limit: int = MAX_BYTES) -> list[Any]:
    """The documents of a small YAML file; ``ValueError`` (one line) when it is not one."""
    with open_regular(Path(path)) as f:  # no FIFO, device or /proc file
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"line 1: larger than {limit >> 20} MiB; not a deployment file")
    return load_all(data.decode("utf-8", errors="replace"))
