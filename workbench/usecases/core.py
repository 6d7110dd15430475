"""What a use case is: a typed request, a typed answer, the least role that may ask, and one
function from the first to the second over an open store.

``@operation(name, role)`` registers the function (its request and answer types are read from
its annotations). A request type names its answer (``class ListRuns(Request[RunList])``), so a
transport's ``call(req)`` is typed by what is asked, and finds the operation from the request's
type alone: the CLI, the TUI and the server never name the function.

The answer's ``to_json()`` is the document ``wb CMD --json`` prints and the server sends;
``from_json`` reads it back. A request is decoded strictly (unknown fields refused, each field's
type checked, the place named); its text may not hold a NUL or a lone surrogate, which no store
can keep (PostgreSQL refuses NUL in text): :func:`check_text` says where.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Self, TypeVar, get_type_hints

import msgspec

from workbench.errors import BadInput
from workbench.vocabulary import Record, from_jsonable

if TYPE_CHECKING:
    from store.api import Store

Role = Literal["read", "upload", "admin"]
A = TypeVar("A")


class Request(msgspec.Struct, Generic[A], frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A use case's request: what the user asked, in the CLI's own words (run references as
    typed, ``--change`` as written), so that each face parses nothing of its own."""


class Answer(Record, frozen=True, kw_only=True):
    """A use case's answer; ``to_json`` is its ``--json`` document (override both directions
    where that document is not the record's fields)."""

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, nonfinite: Any = None) -> Self:
        # Not strict: JSON's object keys are strings, an answer's may be numbers (run ids).
        return msgspec.convert(from_jsonable(dict(doc)), cls, strict=False)


@dataclass(frozen=True)
class Context:
    """Where a use case runs: the store, and who asks. ``token`` is the name of the caller's
    token when the server runs it (None on a local store)."""

    store: Store
    token: str | None = None

    @property
    def served(self) -> bool:
        return self.token is not None

    def by(self, stated: str | None) -> str | None:
        """Who did it: the name the request states (``--by``, or the client's login name), else the
        token's name on a server (``token:NAME``); None leaves it to the door (the login name)."""
        if stated:
            return stated
        return f"token:{self.token}" if self.token else None


@dataclass(frozen=True)
class Operation:
    """One use case: its name (the server's route), the least role, its types and function."""

    name: str
    role: Role
    request: type[Request[Any]]
    answer: type[Any]
    run: Callable[[Context, Any], Any]
    summary: str
    idempotent: bool  # doing it twice changes nothing: a lost answer may be asked for again


OPERATIONS: dict[str, Operation] = {}
_BY_REQUEST: dict[type[Any], Operation] = {}
F = TypeVar("F", bound=Callable[..., Any])


def operation(name: str, role: Role, *, idempotent: bool | None = None) -> Callable[[F], F]:
    """Register ``fn(ctx, request) -> answer`` as the use case ``name`` (reads: ``role="read"``,
    idempotent unless said otherwise; writes are not)."""

    def register(fn: F) -> F:
        hints = get_type_hints(fn)
        params = list(inspect.signature(fn).parameters)
        request, answer = hints[params[1]], hints["return"]
        op = Operation(
            name=name,
            role=role,
            request=request,
            answer=answer,
            run=fn,
            summary=(fn.__doc__ or name).strip().split("\n")[0],
            idempotent=role == "read" if idempotent is None else idempotent,
        )
        if name in OPERATIONS or request in _BY_REQUEST:
            raise RuntimeError(f"use case {name!r} (or its request {request.__name__}) is registered twice")
        OPERATIONS[name] = op
        _BY_REQUEST[request] = op
        return fn

    return register


def operation_of(req: Request[Any]) -> Operation:
    try:
        return _BY_REQUEST[type(req)]
    except KeyError:
        raise RuntimeError(f"no use case takes {type(req).__name__}") from None


def check_text(value: Any, where: str = "$") -> None:
    """Refuse a NUL or a lone surrogate anywhere in a request's text (keys too), naming the place."""
    stack: list[tuple[Any, str]] = [(msgspec.to_builtins(value), where)]
    while stack:
        item, place = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise BadInput("request", "a NUL character (U+0000) in text: not text a store can keep", where=place)
            if not item.isascii() and any("\ud800" <= ch <= "\udfff" for ch in item):
                raise BadInput("request", "a lone surrogate in text (not valid Unicode)", where=place)
        elif isinstance(item, dict):
            for key, v in item.items():
                stack.append((key, f"{place} (key)"))
                stack.append((v, f"{place}.{key}"))
        elif isinstance(item, list):
            stack.extend((v, f"{place}[{i}]") for i, v in enumerate(item))


def decode_request(op: Operation, body: bytes) -> Request[Any]:
    """A request body as ``op``'s request type: bad JSON, a wrong field, NUL or a lone surrogate
    are bad input naming the place."""
    try:
        req: Request[Any] = msgspec.json.decode(body or b"{}", type=op.request)
    except msgspec.ValidationError as exc:
        raise BadInput("request", str(exc)) from None
    except msgspec.DecodeError as exc:
        raise BadInput("request", f"not JSON ({exc})") from None
    except UnicodeDecodeError as exc:
        raise BadInput("request", f"not valid UTF-8 text (byte 0x{exc.object[exc.start]:02x}: {exc.reason})") from None
    check_text(req)
    return req


def run(ctx: Context, req: Request[A]) -> A:
    """Run the use case ``req`` asks for."""
    op = operation_of(req)
    answer: A = op.run(ctx, req)
    return answer
