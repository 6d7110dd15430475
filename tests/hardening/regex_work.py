"""Every regular expression in the codebase, and the lines that would make one quadratic.

A backtracking pattern is quadratic (or worse) when a line makes it scan far from many start
positions: ``-[\\w.-]*?key`` on ``-a-a-a-a...``, ``X(.*)Y`` on ``XXXX...`` with no ``Y``.
:func:`patterns` finds every pattern: the string literals handed to ``re`` functions in the
source (parsed, not run) and the compiled patterns modules hold once imported.
:func:`adversarial_units` gives, for one pattern, the short units whose repetition is the
classic attack: generic ones (word characters, blanks, digits, flags, separators) and ones
made of the pattern's own literals. ``tests/hardening/test_regex_work.py`` times each
pattern's ``search`` over a 1 MB line of each unit as a ratio to a linear scan of the same
line; ``bench/hostile.py`` prints the worst ratios.
"""

from __future__ import annotations

import ast
import functools
import re
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

try:  # the regex parser (Python 3.11 names it re._parser; sre_parse before)
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_parse  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("workbench", "lenses", "store")
_RE_FUNCS = {"compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer"}

GENERIC_UNITS = (
    "a", " ", "0", "-a", "a-", "--a", "a ", "a=", "=", "a:", ":", "0.", "0:", "a.", ".", "/a", "a,", ",",
    "\t", "[", "(", "{", '"', "'", "\\", "#", "x ", "a_", "-", "--", "a/", "Aa", "@",
)  # fmt: skip


_ANCHORED = {"match", "fullmatch"}  # what the code asks of a pattern: from the start only, or anywhere
_ANYWHERE = {"search", "finditer", "findall", "sub", "subn", "split"}
_FLAGS_AT = {"compile": 1, "search": 2, "match": 2, "fullmatch": 2, "findall": 2, "finditer": 2}  # flags' position


@dataclass(frozen=True)
class Found:
    """A pattern, where it was found (``file:line``, or ``module.NAME``), and how the code
    applies it: ``search`` (from every position: the costly way) unless only ever
    ``match``/``fullmatch``."""

    pattern: str
    flags: int
    where: str
    how: str = "search"

    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.pattern, self.flags)

    def seconds(self, line: str, limit: float) -> float:
        """Seconds the code's use takes over ``line`` (every match, as ``sub`` would);
        :class:`TooSlow` past ``limit``."""
        pattern = self.compiled()
        with allowance(limit, cpu=True):
            start = time.thread_time()  # CPU time: another process's load does not stretch it
            if self.how == "search":
                for _ in pattern.finditer(line):
                    pass
            else:
                getattr(pattern, self.how)(line)
            return time.thread_time() - start


@functools.cache
def _trees() -> tuple[tuple[Path, ast.AST], ...]:
    return tuple(
        (path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
    )


def _uses() -> dict[str, set[str]]:
    """For each name a pattern may be bound to, the methods called on it anywhere (``NAME.search(``)."""
    uses: dict[str, set[str]] = {}
    for _path, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                target = node.func.value
                name = getattr(target, "id", None) or getattr(target, "attr", None)  # NAME.search, mod.NAME.search
                if name is not None and node.func.attr in _ANCHORED | _ANYWHERE:
                    uses.setdefault(name, set()).add(node.func.attr)
    return uses


def _how(methods: set[str]) -> str:
    """``search`` unless every use is anchored (then the one anchored use, ``match`` if both)."""
    if not methods or methods & _ANYWHERE:
        return "search"
    return "fullmatch" if methods == {"fullmatch"} else "match"


def _literal_flags(node: ast.expr | None) -> int | None:
    """``re.I | re.M`` as an int; None when the flags are not a literal expression."""
    if node is None:
        return 0
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
        value = getattr(re, node.attr, None)
        return int(value) if isinstance(value, re.RegexFlag) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _literal_flags(node.left), _literal_flags(node.right)
        return None if left is None or right is None else left | right
    return None


def _text(node: ast.expr, names: dict[str, str]) -> str | None:
    """The string ``node`` evaluates to when it is built of literals and module-level string
    constants (``f"[{_INVISIBLE}]"``, ``rf"^({_NAME})"``, ``A + B``); None otherwise."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left, names), _text(node.right, names)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                if value.conversion != -1 or value.format_spec is not None:
                    return None
                value = value.value
            part = _text(value, names)
            if part is None:
                return None
            parts.append(part)
        return "".join(parts)
    return None


def _source_patterns(uses: dict[str, set[str]]) -> Iterator[Found]:
    for path, tree in _trees():
        names: dict[str, str] = {}  # module-level string constants, in order
        for node in getattr(tree, "body", []):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = _text(node.value, names)
                if value is not None:
                    names[node.targets[0].id] = value
        bound = {  # a pattern compiled into a name: the name's uses say how it is applied
            id(node.value): target.id if isinstance(target, ast.Name) else target.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, (ast.Name, ast.Attribute))
        }
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _RE_FUNCS
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.args
            ):
                continue
            pattern = _text(node.args[0], names)
            at = _FLAGS_AT.get(node.func.attr)
            flags_node = next((k.value for k in node.keywords if k.arg == "flags"), None)
            if flags_node is None and at is not None and len(node.args) > at:
                flags_node = node.args[at]
            flags = _literal_flags(flags_node)
            if pattern is None or flags is None:
                continue  # built at run time: not a pattern of the source
            fn = node.func.attr
            how = _how(uses.get(bound.get(id(node), ""), set())) if fn == "compile" else _how({fn})
            yield Found(pattern, flags, f"{path.relative_to(REPO)}:{node.lineno}", how)


def patterns() -> list[Found]:
    """Every distinct (pattern, flags, use) in the source of the packages, each with one place it is found."""
    seen: dict[tuple[str, int, str], Found] = {}
    for found in _source_patterns(_uses()):
        seen.setdefault((found.pattern, found.flags, found.how), found)
    return list(seen.values())


def _literal_runs(parsed: object, out: list[str]) -> None:
    """Runs of consecutive literal characters in a parsed pattern (and one character of each class)."""
    run = ""
    for op, arg in parsed:  # type: ignore[attr-defined]
        name = str(op)
        if name == "LITERAL":
            run += chr(arg)
            continue
        if run:
            out.append(run)
            run = ""
        if name == "IN":
            chars = [chr(a) for o, a in arg if str(o) == "LITERAL"]
            ranges = [chr(a[0]) for o, a in arg if str(o) == "RANGE"]
            if chars or ranges:
                out.append((chars or ranges)[0])
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            _literal_runs(arg[2], out)
        elif name == "SUBPATTERN":
            _literal_runs(arg[-1], out)
        elif name == "BRANCH":
            for branch in arg[1]:
                _literal_runs(branch, out)
        elif name in ("ASSERT", "ASSERT_NOT"):
            _literal_runs(arg[1], out)
    if run:
        out.append(run)


def adversarial_units(found: Found) -> list[str]:
    """Units whose repetition may make ``found`` scan far from many start positions."""
    runs: list[str] = []
    try:
        _literal_runs(sre_parse.parse(found.pattern, found.flags), runs)
    except (re.error, TypeError, ValueError):
        pass
    own: list[str] = []
    for run in dict.fromkeys(r for r in runs if r.strip() or r == " "):
        own += [run, run + " ", run + "a", run + "0"]
    joined = "".join(dict.fromkeys(runs))[:40]
    if joined:
        own += [joined, joined + " "]
    return list(dict.fromkeys([*GENERIC_UNITS, *own]))


def line_of(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


class TooSlow(Exception):
    """The pattern ran past its allowance on a line."""


@contextmanager
def allowance(seconds: float, *, cpu: bool = False) -> Iterator[None]:
    """Raise :class:`TooSlow` in the main thread after ``seconds`` (``re`` checks for signals):
    of the wall clock, or with ``cpu`` of the process's CPU time (what a regex burns, however
    busy the machine is)."""

    def expire(_signum: int, _frame: object) -> None:
        raise TooSlow

    timer, signum = (signal.ITIMER_VIRTUAL, signal.SIGVTALRM) if cpu else (signal.ITIMER_REAL, signal.SIGALRM)
    previous = signal.signal(signum, expire)
    signal.setitimer(timer, seconds)
    try:
        yield
    finally:
        signal.setitimer(timer, 0)
        signal.signal(signum, previous)


_LINEAR = re.compile(r"(?s)(?:\w|\W)*")  # one pass, a step a character: the scan a ratio is against


def linear_scan_seconds(line: str, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        _LINEAR.match(line)
        best = min(best, time.thread_time() - start)
    return best
