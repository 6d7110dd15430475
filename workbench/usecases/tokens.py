"""API tokens for ``wb serve`` (``wb token``): add (shown once), list, revoke; through a server,
an admin token's."""

from __future__ import annotations

from typing import Literal

from store.tokens import TokenError, add_token, list_tokens, revoke_token
from workbench.errors import UsageError
from workbench.usecases.core import Answer, Context, Request, operation


class NewToken(Answer, frozen=True, kw_only=True):
    """``wb token add --json``: the token, shown this once."""

    name: str
    role: str
    token: str


class AddToken(Request[NewToken], frozen=True, kw_only=True, forbid_unknown_fields=True):
    name: str
    role: Literal["read", "upload", "admin"]


@operation("tokens.add", "admin")
def add(ctx: Context, req: AddToken) -> NewToken:
    """Make a token for a name (a node, a CI job) and show it, once."""
    try:
        token = add_token(ctx.store, req.name, req.role)
    except TokenError as exc:
        raise UsageError(str(exc)) from None
    return NewToken(name=req.name, role=req.role, token=token)


class TokenRow(Answer, frozen=True, kw_only=True):
    name: str
    role: str
    created_at: str
    revoked_at: str | None
    active: bool


class Tokens(Answer, frozen=True, kw_only=True):
    """``wb token list --json`` (``items``): never a token or its digest."""

    items: list[TokenRow]


class ListTokens(Request[Tokens], frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


@operation("tokens.list", "admin")
def list_(ctx: Context, req: ListTokens) -> Tokens:
    """The tokens: name, role, created, revoked."""
    return Tokens(items=[TokenRow.from_json(t.to_json()) for t in list_tokens(ctx.store)])


class Revoked(Answer, frozen=True, kw_only=True):
    name: str
    revoked: int


class RevokeToken(Request[Revoked], frozen=True, kw_only=True, forbid_unknown_fields=True):
    name: str


@operation("tokens.revoke", "admin")
def revoke(ctx: Context, req: RevokeToken) -> Revoked:
    """Revoke a name's token: the next request with it is refused (401)."""
    try:
        return Revoked(name=req.name, revoked=revoke_token(ctx.store, req.name))
    except TokenError as exc:
        raise UsageError(str(exc)) from None
