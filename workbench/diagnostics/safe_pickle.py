"""Read a pickle that holds only plain data, without ever running ``pickle.load``.

NCCL flight-recorder dumps are pickles written by ``torch::jit::Pickler``: generic dicts,
lists, tuples, strings, numbers, booleans and ``None``. A pickle is a program for a small
stack machine, and some of its instructions import names and call them (``GLOBAL``,
``REDUCE``, ...), so loading an untrusted dump with ``pickle.load`` can run any code.

This module interprets the opcode stream itself (``pickletools.genops`` decodes it) and
knows how to build only plain containers and scalars. Every opcode that could import a
name, call something or construct an object is refused before anything else happens; there
is no path from the input to a function call. Refusal raises :class:`UnsafePickle`.
"""

from __future__ import annotations

import io
import pickletools
from pathlib import Path
from collections.abc import Callable
from typing import Any, BinaryIO

from workbench.errors import BadInput
from workbench.inputs import open_regular
from workbench.limits import (
    MAX_DEPTH,
    MAX_KEY_HASH_VALUES,
    MAX_PICKLE_OBJECTS,
    KeyGuard,
    check_expanded_size,
    exceeded,
)

#: Default cap on the size of a pickle we are willing to read (dumps are kilobytes to megabytes).
MAX_BYTES = 256 * 1024 * 1024

# Opcodes that import, call or construct: never interpreted (listed for the error message
# and the docs; anything not in _ALLOWED is refused too).
REFUSED = frozenset(
    {
        "GLOBAL",
        "STACK_GLOBAL",
        "REDUCE",
        "BUILD",
        "INST",
        "OBJ",
        "NEWOBJ",
        "NEWOBJ_EX",
        "EXT1",
        "EXT2",
        "EXT4",
        "PERSID",
        "BINPERSID",
        "BYTEARRAY8",
        "NEXT_BUFFER",
        "READONLY_BUFFER",
    }
)

_SCALARS = frozenset(
    {
        "INT",
        "BININT",
        "BININT1",
        "BININT2",
        "LONG",
        "LONG1",
        "LONG4",
        "FLOAT",
        "BINFLOAT",
        "STRING",
        "BINSTRING",
        "SHORT_BINSTRING",
        "UNICODE",
        "BINUNICODE",
        "SHORT_BINUNICODE",
        "BINUNICODE8",
        "BINBYTES",
        "SHORT_BINBYTES",
        "BINBYTES8",
    }
)


class UnsafePickle(BadInput):
    """The pickle asks for an import, a call or an object construction: refused."""


class _Mark:
    __slots__ = ()


_MARK = _Mark()


def _pop_to_mark(stack: list[Any]) -> list[Any]:
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is _MARK:
            items = stack[i + 1 :]
            del stack[i:]
            return items
    raise ValueError("no MARK on the stack")


def loads_plain(data: bytes, *, source: str | Path | None = None) -> Any:
    """Decode ``data`` (a pickle of plain containers and scalars) without running code."""
    return load_plain(io.BytesIO(data), source=source)


def load_path(path: str | Path, *, max_bytes: int = MAX_BYTES) -> Any:
    path = Path(path)
    with open_regular(path, max_bytes=max_bytes, too_big=f"pickle is over the {max_bytes}-byte limit") as fh:
        return load_plain(fh, source=path)


def load_plain(stream: BinaryIO, *, source: str | Path | None = None) -> Any:
    """Interpret the opcode stream in ``stream``; refuse anything but plain data."""
    machine = _Machine(source)
    try:
        for opcode, arg, pos in pickletools.genops(stream):
            name = opcode.name
            machine.count(pos)
            where = f"byte {pos}" if pos is not None else None
            if name not in _ALLOWED:
                raise UnsafePickle(
                    source,
                    f"refused pickle opcode {name}: it can import or call code "
                    "(only plain dicts, lists, tuples, strings and numbers are read)",
                    where=where,
                )
            if name == "STOP":
                return machine.stop()
            _STEPS[name](machine, name, arg, where)
    except UnsafePickle:
        raise
    except (ValueError, KeyError, IndexError, TypeError, EOFError, UnicodeDecodeError) as exc:
        raise BadInput(source, f"not a readable pickle ({type(exc).__name__}: {exc})") from None
    raise BadInput(source, "pickle ended without STOP (truncated?)")


class _Machine:
    """The pickle machine's state (its stack and memo) and one method per kind of plain-data opcode
    (``_STEPS`` maps each allowed opcode to its method: nothing else is ever interpreted)."""

    def __init__(self, source: str | Path | None) -> None:
        self.source = source
        self.stack: list[Any] = []
        self.memo: dict[int, Any] = {}
        self.nesting = _Nesting(source)  # a tuple key 2M deep would overflow the C stack when hashed
        self.keys = _KeyWork(source, self.nesting)  # no hash flood in a dict or set, and bounded hashing work
        # Values so far, a back-reference to a container counting its items: a lower bound
        # of the final count (check_expanded_size), so a flood of references stops early.
        self.seen = 0

    def count(self, pos: int | None) -> None:
        self.seen += 1
        if self.seen > MAX_PICKLE_OBJECTS:
            raise exceeded(
                self.source,
                "holds more values (counting each shared reference) than",
                f"{MAX_PICKLE_OBJECTS:,}",
                where=f"byte {pos}",
            )

    def stop(self) -> Any:
        if len(self.stack) != 1:
            raise ValueError("STOP with a malformed stack")
        result = self.stack.pop()
        # Back-references (GET) make sharing cheap in the pickle but not for the
        # readers, who see every reference as a copy: count the tree.
        check_expanded_size(result, self.source)
        return result

    def scalar(self, _name: str, arg: Any, where: str | None) -> None:
        if type(arg) is int and arg.bit_length() > 14_000:  # str() refuses more than 4,300 digits
            raise BadInput(
                self.source,
                f"an integer of {arg.bit_length():,} bits (more than 4,300 digits) cannot be read",
                where=where,
            )
        self.stack.append(arg)

    def skip(self, _name: str, _arg: Any, _where: str | None) -> None:
        pass

    def mark(self, _name: str, _arg: Any, _where: str | None) -> None:
        self.stack.append(_MARK)

    def pop(self, _name: str, _arg: Any, _where: str | None) -> None:
        self.stack.pop()

    def pop_mark(self, _name: str, _arg: Any, _where: str | None) -> None:
        _pop_to_mark(self.stack)

    def dup(self, _name: str, _arg: Any, _where: str | None) -> None:
        self.stack.append(self.stack[-1])

    def constant(self, name: str, _arg: Any, _where: str | None) -> None:
        self.stack.append(_CONSTANTS[name])

    def empty(self, name: str, _arg: Any, _where: str | None) -> None:
        self.stack.append(_EMPTY[name]())

    def dict_(self, _name: str, _arg: Any, where: str | None) -> None:
        items = _pop_to_mark(self.stack)
        if len(items) % 2:
            raise ValueError("DICT with an odd number of items")
        self.stack.append(_fill({}, items, self.keys, where))

    def setitem(self, _name: str, _arg: Any, where: str | None) -> None:
        value, key = self.stack.pop(), self.stack.pop()
        _fill(_as(self.stack[-1], dict), [key, value], self.keys, where)

    def setitems(self, _name: str, _arg: Any, where: str | None) -> None:
        items = _pop_to_mark(self.stack)
        if len(items) % 2:
            raise ValueError("SETITEMS with an odd number of items")
        _fill(_as(self.stack[-1], dict), items, self.keys, where)

    def list_(self, _name: str, _arg: Any, _where: str | None) -> None:
        self.stack.append(_pop_to_mark(self.stack))

    def append(self, _name: str, _arg: Any, _where: str | None) -> None:
        value = self.stack.pop()
        _as(self.stack[-1], list).append(value)

    def appends(self, _name: str, _arg: Any, _where: str | None) -> None:
        items = _pop_to_mark(self.stack)
        _as(self.stack[-1], list).extend(items)

    def tuple_(self, _name: str, _arg: Any, where: str | None) -> None:
        self.stack.append(self.nesting.built(tuple(_pop_to_mark(self.stack)), where))

    def tuple_n(self, name: str, _arg: Any, where: str | None) -> None:
        n = int(name[-1])
        if len(self.stack) < n:
            raise ValueError(f"{name} on a short stack")
        items = self.stack[-n:]
        del self.stack[-n:]
        self.stack.append(self.nesting.built(tuple(items), where))

    def additems(self, _name: str, _arg: Any, where: str | None) -> None:
        items = _pop_to_mark(self.stack)
        _add(_as(self.stack[-1], set), items, self.keys, where)

    def frozenset_(self, _name: str, _arg: Any, where: str | None) -> None:
        items = _pop_to_mark(self.stack)
        self.nesting.check(items, where)
        self.stack.append(self.nesting.built(frozenset(_add(set(), items, self.keys, where)), where))

    def put(self, _name: str, arg: Any, _where: str | None) -> None:
        self.memo[int(arg)] = self.stack[-1]

    def memoize(self, _name: str, _arg: Any, _where: str | None) -> None:
        self.memo[len(self.memo)] = self.stack[-1]

    def get(self, _name: str, arg: Any, _where: str | None) -> None:
        value = self.memo[int(arg)]
        if isinstance(value, (dict, list, tuple, set, frozenset)):
            self.seen += len(value)
        self.stack.append(value)


_CONSTANTS = {"NONE": None, "NEWTRUE": True, "NEWFALSE": False}
_EMPTY: dict[str, Callable[[], Any]] = {"EMPTY_DICT": dict, "EMPTY_LIST": list, "EMPTY_TUPLE": tuple, "EMPTY_SET": set}
# Every opcode that is read, and how; STOP ends the loop. Anything else is refused (REFUSED names the dangerous).
_STEPS: dict[str, Callable[[_Machine, str, Any, str | None], None]] = {
    **dict.fromkeys(_SCALARS, _Machine.scalar),
    **dict.fromkeys(("PROTO", "FRAME"), _Machine.skip),
    "MARK": _Machine.mark,
    "POP": _Machine.pop,
    "POP_MARK": _Machine.pop_mark,
    "DUP": _Machine.dup,
    **dict.fromkeys(_CONSTANTS, _Machine.constant),
    **dict.fromkeys(_EMPTY, _Machine.empty),
    "DICT": _Machine.dict_,
    "SETITEM": _Machine.setitem,
    "SETITEMS": _Machine.setitems,
    "LIST": _Machine.list_,
    "APPEND": _Machine.append,
    "APPENDS": _Machine.appends,
    "TUPLE": _Machine.tuple_,
    **dict.fromkeys(("TUPLE1", "TUPLE2", "TUPLE3"), _Machine.tuple_n),
    "ADDITEMS": _Machine.additems,
    "FROZENSET": _Machine.frozenset_,
    **dict.fromkeys(("PUT", "BINPUT", "LONG_BINPUT"), _Machine.put),
    "MEMOIZE": _Machine.memoize,
    **dict.fromkeys(("GET", "BINGET", "LONG_BINGET"), _Machine.get),
}
_ALLOWED = frozenset(_STEPS) | {"STOP"}
assert not _ALLOWED & REFUSED


class _Nesting:
    """The depth and size of each tuple and frozenset built (the containers that can be keys,
    and whose contents never change). Depth is refused past ``MAX_DEPTH`` as each one is
    built, before anything hashes it (hashing recurses in C; 2M levels is a segfault, not an
    error); size is what hashing it costs, every time (a tuple does not keep its hash)."""

    def __init__(self, source: str | Path | None) -> None:
        self.source = source
        # id -> (the object, kept alive so the id stays its own; its depth; values in it, itself included)
        self._shape: dict[int, tuple[Any, int, int]] = {}

    def _of(self, item: Any) -> tuple[int, int]:
        entry = self._shape.get(id(item))
        return (entry[1], entry[2]) if entry is not None and entry[0] is item else (0, 1)

    def depth(self, item: Any) -> int:
        return self._of(item)[0]

    def size(self, item: Any) -> int:
        """The values hashing ``item`` visits: 1 for a scalar, the whole tree for a tuple."""
        return self._of(item)[1]

    def check(self, items: Any, where: str | None) -> tuple[int, int]:
        depth, size = 0, 1
        for i in items:
            if isinstance(i, (tuple, frozenset)):
                d, n = self._of(i)
                depth, size = max(depth, d), size + n
            else:
                size += 1
        if depth + 1 > MAX_DEPTH:
            raise exceeded(self.source, "nests tuples deeper than", f"{MAX_DEPTH} levels", where=where)
        return depth + 1, size

    def built(self, value: Any, where: str | None) -> Any:
        self._shape[id(value)] = (value, *self.check(value, where))
        return value


class _KeyWork:
    """Every dict key and set item, before it is inserted: no hash flood (``KeyGuard``), and
    the values hashing visits, summed over every insert, within ``MAX_KEY_HASH_VALUES``. One
    million-element tuple used as a key 60,000 times is a 1 MB pickle and 6e10 hash steps."""

    def __init__(self, source: str | Path | None, nesting: _Nesting) -> None:
        self.source = source
        self._guard = KeyGuard(source)
        self._nesting = nesting
        self._spent = 0

    def admit(self, container: dict | set, key: Any, where: str | None) -> None:
        self._spent += self._nesting.size(key)
        if self._spent > MAX_KEY_HASH_VALUES:
            raise exceeded(
                self.source,
                "hashes more values as keys (a tuple key counts its every element at each use) than",
                f"{MAX_KEY_HASH_VALUES:,}",
                where=where,
            )
        self._guard.admit(container, key, where)


def _fill(target: dict, items: list[Any], keys: _KeyWork, where: str | None) -> dict:
    for key, value in zip(items[::2], items[1::2], strict=True):
        keys.admit(target, key, where)
        target[key] = value
    return target


def _add(target: set, items: list[Any], keys: _KeyWork, where: str | None) -> set:
    for item in items:
        keys.admit(target, item, where)
        target.add(item)
    return target


def _as(obj: Any, kind: type) -> Any:
    if not isinstance(obj, kind):
        raise TypeError(f"expected a {kind.__name__} on the stack, found {type(obj).__name__}")
    return obj
