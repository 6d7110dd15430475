"""API tokens for ``wb serve``: a name, a role, and the SHA-256 of the token, never the token.

A token is 32 random bytes (``secrets.token_urlsafe``) shown once, when it is made. The
store keeps only its SHA-256: a token of 256 bits cannot be guessed or found from its
digest, so a slow password hash (bcrypt, argon2), which exists to make *low-entropy*
secrets expensive to guess, would only make every request slower. Checking a presented
token hashes it and compares the digest with every active one in constant time
(``hmac.compare_digest``, no early exit), so the time a check takes says nothing about
how near a forged token came.

Revoking keeps the row (``revoked_at`` set): who had access stays on record, and a
revoked token never matches again. One active token per name.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from sqlmodel import Field, SQLModel, select

from store.errors import StoreRefusal
from store.tables import utcnow_iso

if TYPE_CHECKING:
    from store.api import Store

ROLES = ("read", "upload", "admin")  # each may do what the ones before it may
TOKEN_PREFIX = "wb_"


class TokenError(StoreRefusal):
    """A token name that is taken, unknown, or malformed."""


class ApiToken(SQLModel, table=True):
    """One token: its name, role and digest (the token itself is never stored)."""

    __tablename__ = "api_token"
    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(index=True)
    role: str
    sha256: str = Field(index=True, unique=True)
    created_at: str = Field(default_factory=utcnow_iso)
    revoked_at: Optional[str] = None


@dataclass(frozen=True)
class TokenInfo:
    """What ``wb token list`` shows: never the token or its digest."""

    name: str
    role: str
    created_at: str
    revoked_at: str | None

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "role": self.role,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
            "active": self.revoked_at is None,
        }


@dataclass(frozen=True)
class Caller:
    """Who a request's token belongs to."""

    name: str
    role: str

    def may(self, role: str) -> bool:
        return ROLES.index(self.role) >= ROLES.index(role)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _check_name(name: str) -> str:
    if not name or len(name) > 64 or not all(ch.isalnum() or ch in "-_." for ch in name):
        raise TokenError(f"token name {name!r}: use 1-64 letters, digits, '-', '_' or '.'")
    return name


def add_token(store: "Store", name: str, role: str) -> str:
    """A new token for ``name`` with ``role``; the only time the token is seen."""
    if role not in ROLES:
        raise TokenError(f"role {role!r}: one of {', '.join(ROLES)}")
    _check_name(name)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with store.session() as s:
        if s.exec(select(ApiToken).where(ApiToken.name == name, ApiToken.revoked_at.is_(None))).first():  # type: ignore[union-attr]
            raise TokenError(f"a token named {name!r} is active: revoke it first ('wb token revoke {name}')")
        s.add(ApiToken(name=name, role=role, sha256=digest(token)))
    return token


def list_tokens(store: "Store") -> list[TokenInfo]:
    if not store.exists:
        return []
    with store._read() as query:
        rows = query("SELECT name, role, created_at, revoked_at FROM api_token ORDER BY id")
    return [TokenInfo(*row) for row in rows]


def revoke_token(store: "Store", name: str) -> int:
    """Revoke the active token(s) of ``name``; how many were revoked (0: none active)."""
    with store.session() as s:
        rows = s.exec(select(ApiToken).where(ApiToken.name == name, ApiToken.revoked_at.is_(None))).all()  # type: ignore[union-attr]
        for row in rows:
            row.revoked_at = utcnow_iso()
            s.add(row)
    if not rows and not any(t.name == name for t in list_tokens(store)):
        raise TokenError(f"no token named {name!r}")
    return len(rows)


def authenticate(store: "Store", token: str) -> Caller | None:
    """The caller a presented token belongs to (None: unknown or revoked). Plain SQL (no
    ORM per request); every active digest is compared, in constant time."""
    if not store.exists:
        return None
    presented = digest(token)
    with store._read() as query:
        rows = query("SELECT name, role, sha256 FROM api_token WHERE revoked_at IS NULL")
    found: Caller | None = None
    for name, role, stored in rows:
        if hmac.compare_digest(presented, stored) and role in ROLES:  # no early exit: the time says nothing
            found = Caller(name, role)
    return found
